package broadcastjob

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// unservedNode is a node name no kubelet serves, so that only the test writes the status of
// the pods bound to it.
const unservedNode = "no-kubelet"

// containerState sets the state of the ephemeral container name in the pod's status, as a
// kubelet reports it.
func containerState(t *testing.T, ns, pod, name string, state corev1.ContainerState) {
	t.Helper()
	framework.Eventually(t, framework.Short, "write the status of "+name+" in "+pod, func(ctx context.Context) error {
		p := &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p); err != nil {
			return err
		}
		p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: name, Image: "busybox", State: state}}
		return env.Client.Status().Update(ctx, p)
	})
}

// withProbe lists the pods that hold the job's "probe" ephemeral container, marked with the
// job's UID.
func withProbe(ctx context.Context, ns string, uid string) ([]string, error) {
	var list corev1.PodList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range list.Items {
		for _, c := range p.Spec.EphemeralContainers {
			for _, e := range c.Env {
				if c.Name == "probe" && e.Name == appsv1alpha1.EphemeralContainerEnvKey && e.Value == uid {
					out = append(out, p.Name)
				}
			}
		}
	}
	return out, nil
}

// TestEphemeralJobAddsContainersAndCounts: an EphemeralJob adds its container to the matched
// pods (which first is the planner's table tests' concern) one at a time (parallelism 1) through the ephemeralcontainers subresource, counts the
// pods by the container's reported state, succeeds when every pod's container exited 0, and is
// deleted after its TTL.
func TestEphemeralJobAddsContainersAndCounts(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"web-a", "web-b"} {
		framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "web").Node(unservedNode).Obj())
	}
	job := &appsv1alpha1.EphemeralJob{
		ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: ns},
		Spec: appsv1alpha1.EphemeralJobSpec{
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Parallelism:             ptr.To[int32](1),
			TTLSecondsAfterFinished: ptr.To[int32](1),
			Template: appsv1alpha1.EphemeralContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "probe", Image: "busybox", Command: []string{"true"},
					TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent},
			}}},
		},
	}
	framework.Create(t, env.Client, job)

	status := func(ctx context.Context) (*appsv1alpha1.EphemeralJob, error) {
		got := &appsv1alpha1.EphemeralJob{}
		return got, env.Client.Get(ctx, client.ObjectKeyFromObject(job), got)
	}
	// probed is the pods that got the container and the job as it stands.
	probed := func(ctx context.Context) ([]string, *appsv1alpha1.EphemeralJob, error) {
		pods, err := withProbe(ctx, ns, string(job.UID))
		if err != nil {
			return nil, nil, err
		}
		got, err := status(ctx)
		return pods, got, err
	}
	var first string
	framework.Eventually(t, framework.Medium, "one pod gets the container", func(ctx context.Context) error {
		pods, got, err := probed(ctx)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			first = pods[0]
		}
		return framework.Want(len(pods) == 1 && got.Status.Matches == 2, fmt.Sprintf("pods with the container %v, status %+v", pods, got.Status))
	})

	second := map[string]string{"web-a": "web-b", "web-b": "web-a"}[first]
	containerState(t, ns, first, "probe", corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}})
	framework.Eventually(t, framework.Medium, "the running container is counted", func(ctx context.Context) error {
		got, err := status(ctx)
		if err != nil {
			return err
		}
		return framework.Want(got.Status.Running == 1 && got.Status.Phase == appsv1alpha1.EphemeralJobRunning, fmt.Sprintf("status %+v", got.Status))
	})
	framework.Consistently(t, hold, "parallelism 1 keeps the second pod waiting", func(ctx context.Context) error {
		pods, err := withProbe(ctx, ns, string(job.UID))
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == 1, fmt.Sprintf("pods with the container %v", pods))
	})

	done := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}
	containerState(t, ns, first, "probe", done)
	framework.Eventually(t, framework.Medium, "the second pod gets the container once the first finished", func(ctx context.Context) error {
		pods, got, err := probed(ctx)
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == 2 && got.Status.Succeeded == 1, fmt.Sprintf("pods with the container %v, status %+v", pods, got.Status))
	})

	containerState(t, ns, second, "probe", done)
	framework.Eventually(t, framework.Medium, "the job succeeds and its TTL deletes it", func(ctx context.Context) error {
		got, err := status(ctx)
		if err == nil {
			return fmt.Errorf("job still there, status %+v", got.Status)
		}
		return client.IgnoreNotFound(err)
	})
}
