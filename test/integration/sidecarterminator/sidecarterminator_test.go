package sidecarterminator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarterminator"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

const (
	// actTimeout bounds how long the controller may take to act on a pod's change.
	actTimeout = 30 * time.Second
	// hold is how long a pod the controller must leave alone is watched.
	hold = 3 * time.Second
)

// jobPodOn creates, in a new namespace, a restartPolicy Never pod on node with a main container
// and a sidecar "proxy" carrying the env variables vars (name, value, ...), and reports both containers running as a kubelet would.
func jobPodOn(t *testing.T, node string, vars ...string) *corev1.Pod {
	t.Helper()
	ns := framework.NewNamespace(t, env.Client, "sidecarterminator-", nil)
	b := builder.Pod("job-0", ns).Container("proxy", "proxy:1").Node(node).RestartPolicy(corev1.RestartPolicyNever)
	for i := 0; i+1 < len(vars); i += 2 {
		b = b.Env("proxy", vars[i], vars[i+1])
	}
	pod := b.Obj()
	framework.Create(t, env.Client, pod)
	setStates(t, pod, map[string]corev1.ContainerState{"main": runningState(), "proxy": runningState()}, corev1.PodRunning)
	return pod
}

func runningState() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
}

func exitedState(code int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}
}

// setStates writes the pod's container states and phase as its kubelet would.
func setStates(t *testing.T, pod *corev1.Pod, states map[string]corev1.ContainerState, phase corev1.PodPhase) {
	t.Helper()
	framework.ChangeStatus(t, env.Client, client.ObjectKeyFromObject(pod), func(p *corev1.Pod) {
		p.Status.Phase = phase
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: "containerd://" + c.Name + "-1", State: states[c.Name],
			})
		}
	})
}

// node creates a Node of that name with those labels, deleted when the test ends.
func node(t *testing.T, name string, labels map[string]string) string {
	t.Helper()
	n := builder.Node(name).Obj()
	n.Labels = labels
	framework.CreateForTest(t, env.Client, n)
	return name
}

// request reads the pod's sidecar ContainerRecreateRequest; nil when there is none.
func request(ctx context.Context, pod *corev1.Pod) (*appsv1alpha1.ContainerRecreateRequest, error) {
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: sidecarterminator.RequestName(pod)}, crr)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return crr, err
}

func noRequest(pod *corev1.Pod) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		crr, err := request(ctx, pod)
		if err != nil {
			return err
		}
		return framework.Want(crr == nil, "no ContainerRecreateRequest for the pod")
	}
}

func waitRequest(t *testing.T, pod *corev1.Pod) *appsv1alpha1.ContainerRecreateRequest {
	t.Helper()
	var crr *appsv1alpha1.ContainerRecreateRequest
	framework.Eventually(t, actTimeout, "the sidecars' ContainerRecreateRequest", func(ctx context.Context) (err error) {
		crr, err = request(ctx, pod)
		if err == nil && crr == nil {
			err = fmt.Errorf("not created")
		}
		return err
	})
	return crr
}

// TestSidecarTerminatorStopsTheSidecarOfAFinishedJobPodByAContainerRecreateRequest: while the
// main container runs nothing happens; once it has exited the controller creates
// sidecar-termination-<uid>, owned by the pod, for the sidecar only, with forceRecreate and
// failurePolicy Ignore, which the webhook fills in from the pod, and records an event.
func TestSidecarTerminatorStopsTheSidecarOfAFinishedJobPodByAContainerRecreateRequest(t *testing.T) {
	pod := jobPodOn(t, node(t, "node-plain", nil), appsv1alpha1.KruiseTerminateSidecarEnv, "true")
	framework.Consistently(t, hold, "nothing while the main container runs", noRequest(pod))

	setStates(t, pod, map[string]corev1.ContainerState{"main": exitedState(0), "proxy": runningState()}, corev1.PodRunning)
	crr := waitRequest(t, pod)
	live := framework.Get[corev1.Pod](t, env.Client, client.ObjectKeyFromObject(pod))
	want := appsv1alpha1.ContainerRecreateRequestSpec{
		PodName: pod.Name,
		Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{
			Name:          "proxy",
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://proxy-1"},
		}},
		// The webhook gives the request the pod's grace period (the apiserver's default, 30).
		Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: true, FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore,
			TerminationGracePeriodSeconds: ptr.To[int64](30)},
	}
	testkit.Diff(t, "request spec", want, crr.Spec)
	testkit.Diff(t, "request owner", []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: live.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}, crr.OwnerReferences)
	testkit.Diff(t, "request labels from the pod", map[string]string{
		appsv1alpha1.ContainerRecreateRequestPodNameKey:  pod.Name,
		appsv1alpha1.ContainerRecreateRequestPodUIDKey:   string(live.UID),
		appsv1alpha1.ContainerRecreateRequestNodeNameKey: "node-plain",
		appsv1alpha1.ContainerRecreateRequestActiveKey:   "true",
	}, crr.Labels)
	framework.WaitForEvent(t, env.Client, pod.Namespace, actTimeout, "the SidecarTerminator event", func(e *corev1.Event) bool {
		return e.InvolvedObject.Name == pod.Name && e.Reason == "SidecarTerminator" &&
			e.Message == "Kruise SidecarTerminator is trying to terminate sidecar [proxy] using crr"
	})
}

// TestSidecarTerminatorLeavesPodsWithoutTheEnvAlone: a finished pod whose second container does
// not ask to be stopped is not touched.
func TestSidecarTerminatorLeavesPodsWithoutTheEnvAlone(t *testing.T) {
	pod := jobPodOn(t, node(t, "node-noenv", nil))
	setStates(t, pod, map[string]corev1.ContainerState{"main": exitedState(0), "proxy": runningState()}, corev1.PodRunning)
	framework.Consistently(t, hold, "nothing for a container without the env", noRequest(pod))
}

// TestSidecarTerminatorSwapsTheStopImageOnAVirtualKubeletNode: no kruise-daemon runs on a
// virtual-kubelet node, so the sidecar gets the image its env names, in place, and no request
// is created.
func TestSidecarTerminatorSwapsTheStopImageOnAVirtualKubeletNode(t *testing.T) {
	vk := node(t, "node-virtual", map[string]string{appsv1alpha1.VirtualKubeletNodeLabel: appsv1alpha1.VirtualKubeletNodeType})
	pod := jobPodOn(t, vk, appsv1alpha1.KruiseTerminateSidecarWithImageEnv, "stop:1")
	setStates(t, pod, map[string]corev1.ContainerState{"main": exitedState(0), "proxy": runningState()}, corev1.PodRunning)
	framework.Eventually(t, actTimeout, "the sidecar's stop image", func(ctx context.Context) error {
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		return framework.Want(p.Spec.Containers[1].Image == "stop:1", "proxy runs stop:1, not "+p.Spec.Containers[1].Image)
	})
	framework.Consistently(t, hold, "no request on a virtual-kubelet node", noRequest(pod))
}

// TestSidecarTerminatorEndsThePodBeforeStoppingASidecarWhoseExitCodeIsIgnored: the pod is
// marked Succeeded with the SidecarTerminated condition, then the request stops the sidecar;
// the webhook admits it though the pod's phase is final.
func TestSidecarTerminatorEndsThePodBeforeStoppingASidecarWhoseExitCodeIsIgnored(t *testing.T) {
	pod := jobPodOn(t, node(t, "node-ignore", nil),
		appsv1alpha1.KruiseTerminateSidecarEnv, "true", appsv1alpha1.KruiseIgnoreContainerExitCodeEnv, "true")
	setStates(t, pod, map[string]corev1.ContainerState{"main": exitedState(0), "proxy": runningState()}, corev1.PodRunning)
	crr := waitRequest(t, pod)
	testkit.Diff(t, "stopped containers", []string{"proxy"}, []string{crr.Spec.Containers[0].Name})
	live := framework.Get[corev1.Pod](t, env.Client, client.ObjectKeyFromObject(pod))
	var cond *corev1.PodCondition
	for i := range live.Status.Conditions {
		if live.Status.Conditions[i].Type == appsv1alpha1.SidecarTerminatedCondition {
			cond = &live.Status.Conditions[i]
		}
	}
	if live.Status.Phase != corev1.PodSucceeded || cond == nil || cond.Status != corev1.ConditionTrue ||
		!strings.Contains(cond.Message, "Sidecar Terminator") {
		t.Fatalf("pod phase %s, condition %+v; want Succeeded with SidecarTerminated True", live.Status.Phase, cond)
	}
}
