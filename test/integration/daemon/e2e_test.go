package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/containerrecreaterequest"
	"github.com/kruise-addon/kruise-addon/controllers/imagepulljob"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/nodeimage"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// managerStartTimeout bounds an in-process manager's way to ready; e2eTimeout a whole flow.
const (
	managerStartTimeout = time.Minute
	e2eTimeout          = 2 * time.Minute
)

// startManager runs kruise-manager in-process with only the given controllers and no
// webhook, until the test ends.
func startManager(t *testing.T, components ...manager.Component) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, builder.Namespace("kruise-system").Label("control-plane", "openkruise").Obj()); err != nil && !isAlreadyExists(err) {
		t.Fatal(err)
	}
	o, err := harness.LoopbackOptions(filepath.Join(workDir, "manager-"+t.Name()), "kruise-system")
	if err != nil {
		t.Fatal(err)
	}
	o.EnableLeaderElection = false
	if err := o.Gates.SetFromMap(map[string]bool{string(features.ImagePullJobGate): true}); err != nil {
		t.Fatal(err)
	}
	o.Controllers = components
	o.Webhooks = nil
	// Each e2e test runs its own manager in this one process.
	o.SkipControllerNameValidation = true
	m := harness.Start(ctx, env.Config, "manager", o)
	t.Cleanup(m.Stop)
	if err := m.WaitReady(ctx, managerStartTimeout); err != nil {
		t.Fatalf("manager not ready: %v", err)
	}
}

func isAlreadyExists(err error) bool {
	var s interface{ Status() metav1.Status }
	return errors.As(err, &s) && s.Status().Reason == metav1.StatusReasonAlreadyExists
}

// TestEndToEndImagePullJob runs an ImagePullJob over three simulated nodes: e2e-0 is served by
// a daemon on the real containerd, e2e-1 and e2e-2 by daemons on in-memory fake runtimes.
func TestEndToEndImagePullJob(t *testing.T) {
	ctx := context.Background()
	ref, err := plainReg.push(mustSleeper(t, "e2e"), "e2e:v1")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []string{"e2e-0", "e2e-1", "e2e-2"}
	var objs []*corev1.Node
	for _, n := range nodes {
		objs = append(objs, builder.Node(n).Label("pool", "e2e").Obj())
	}
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithNodes(objs...), framework.WithoutScheduler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Stop)

	fakes := map[string]*fakeCRI{}
	for _, n := range nodes {
		dir := ctrd.base
		if n != "e2e-0" {
			dir = shortDir(t)
			fakes[n] = serveFakeCRI(t, filepath.Join(dir, "containerd.sock"), "fake")
		}
		_, stop, err := startDaemon(n, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := stop(); err != nil {
				t.Errorf("daemon %s did not shut down cleanly: %v", n, err)
			}
		})
	}
	startManager(t,
		manager.Component{Name: nodeimage.Name, Setup: nodeimage.Setup(nodeimage.Options{})},
		manager.Component{Name: imagepulljob.Name, Setup: imagepulljob.SetupWithManager},
	)

	// A job selects the nodes that have a NodeImage when it starts; one created before the
	// manager made them would complete at once with nothing to do.
	framework.Eventually(t, e2eTimeout, "every node has its NodeImage", func(ctx context.Context) error {
		for _, n := range nodes {
			if err := env.Client.Get(ctx, types.NamespacedName{Name: n}, &appsv1alpha1.NodeImage{}); err != nil {
				return fmt.Errorf("node %s: %w", n, err)
			}
		}
		return nil
	})
	const ns = "e2e-pull"
	framework.Create(t, env.Client, builder.Namespace(ns).Obj())
	job := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prepull"}, Spec: appsv1alpha1.ImagePullJobSpec{Image: ref}}
	job.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "e2e"}}}
	job.Spec.Parallelism = ptr.To(intstr.FromInt32(3))
	job.Spec.PullPolicy = &appsv1alpha1.PullPolicy{TimeoutSeconds: ptr.To[int32](60), BackoffLimit: ptr.To[int32](1)}
	job.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	framework.Create(t, env.Client, job)
	type counts struct{ Desired, Active, Succeeded, Failed int32 }
	framework.Eventually(t, e2eTimeout, "the job completes with every node succeeded", func(ctx context.Context) error {
		got := &appsv1alpha1.ImagePullJob{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, got); err != nil {
			return err
		}
		c := counts{got.Status.Desired, got.Status.Active, got.Status.Succeeded, got.Status.Failed}
		if diff := cmp.Diff(counts{Desired: 3, Succeeded: 3}, c); diff != "" || got.Status.CompletionTime == nil {
			return fmt.Errorf("status %+v (-want +got counts):\n%s", got.Status, diff)
		}
		return nil
	})
	if !inContainerd(t, ref) {
		t.Errorf("containerd does not list %s after the job", ref)
	}
	for n, f := range fakes {
		if got := f.pulls(ref); got != 1 {
			t.Errorf("node %s's runtime was asked to pull %s %d times, want 1", n, ref, got)
		}
	}
	for _, n := range nodes {
		ni := &appsv1alpha1.NodeImage{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: n}, ni); err != nil {
			t.Fatal(err)
		}
		image, tag := splitRef(ref)
		var phase appsv1alpha1.ImagePullPhase
		for _, st := range ni.Status.ImageStatuses[image].Tags {
			if st.Tag == tag {
				phase = st.Phase
			}
		}
		if phase != appsv1alpha1.ImagePhaseSucceeded {
			t.Errorf("nodeimage %s reports %q for %s, want Succeeded", n, phase, ref)
		}
	}
}

func mustSleeper(t *testing.T, extra string) v1Image {
	t.Helper()
	bin, err := buildSleeper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	img, err := sleeperImage(readFile(t, bin), extra)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestEndToEndCRRSucceeded restarts a container on the real containerd with the manager's CRR
// controller running: the daemon stops it, the test plays kubelet, and the CRR completes with
// the container Succeeded.
func TestEndToEndCRRCompletes(t *testing.T) {
	startManager(t, manager.Component{Name: containerrecreaterequest.Name, Setup: containerrecreaterequest.SetupWithManager})
	const ns = "e2e-crr"
	framework.Create(t, env.Client, builder.Namespace(ns).Obj())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-0"},
		Spec:       corev1.PodSpec{NodeName: realNode, Containers: []corev1.Container{{Name: "app", Image: images.sleeper}}},
	}
	kl := runOnRealNode(t, pod, "app")
	old := kl.ids["app"]
	waitForNextSecond(t, old)
	crr := crrOn(pod, "restart-app", appsv1alpha1.ContainerRecreateRequestSpec{
		Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app",
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + old}}},
		Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyFail, TerminationGracePeriodSeconds: ptr.To[int64](5)},
	})
	framework.Create(t, env.Client, crr)
	framework.Eventually(t, e2eTimeout, "the daemon stops the container", func(ctx context.Context) error {
		if st, _, err := containerState(ctx, old); err != nil || st != criv1.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("state %v, %v", st, err)
		}
		return nil
	})
	kl.start("app")
	// In 1.8 a request ends in phase Completed; Succeeded is the per-container outcome. The
	// test does not write the pod's container statuses onto the CRR here: the manager does.
	framework.Eventually(t, e2eTimeout, "the CRR completes with its container Succeeded", func(ctx context.Context) error {
		got, err := getCRR(ctx, crr)
		if err != nil {
			return err
		}
		want := []appsv1alpha1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1alpha1.ContainerRecreateRequestSucceeded, IsKilled: true}}
		if diff := cmp.Diff(want, got.Status.ContainerRecreateStates); diff != "" {
			return fmt.Errorf("states (-want +got):\n%s", diff)
		}
		if got.Status.Phase != appsv1alpha1.ContainerRecreateRequestCompleted || got.Status.CompletionTime == nil || got.Status.Message != "" {
			return fmt.Errorf("status %+v", got.Status)
		}
		if s := got.Annotations[appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey]; !strings.Contains(s, kl.ids["app"]) {
			return fmt.Errorf("sync-container-statuses %q lacks the new container", s)
		}
		return nil
	})
}

// TestEndToEndCRRHoldsThePodNotReadyForTheGracePeriod restarts a container on the real containerd
// with unreadyGracePeriodSeconds: the manager's controller turns the pod's KruisePodReady False
// and records when; the daemon stops the container only after the grace period, while the pod is
// still not ready; after completion the pod is ready again.
func TestEndToEndCRRHoldsThePodNotReadyForTheGracePeriod(t *testing.T) {
	ctx := context.Background()
	startManager(t, manager.Component{Name: containerrecreaterequest.Name, Setup: containerrecreaterequest.SetupWithManager})
	const ns = "e2e-crr-grace"
	const grace = 3
	framework.Create(t, env.Client, builder.Namespace(ns).Obj())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-0"},
		Spec: corev1.PodSpec{NodeName: realNode, Containers: []corev1.Container{{Name: "app", Image: images.sleeper}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}}},
	}
	kl := runOnRealNode(t, pod, "app")
	setPodCondition(t, ns, pod.Name, appspub.KruisePodReadyConditionType, corev1.ConditionTrue)
	old := kl.ids["app"]
	waitForNextSecond(t, old)
	crr := crrOn(pod, "restart-app", appsv1alpha1.ContainerRecreateRequestSpec{
		Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app",
			StatusContext: &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + old}}},
		Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
			TerminationGracePeriodSeconds: ptr.To[int64](5), UnreadyGracePeriodSeconds: ptr.To[int64](grace)},
	})
	framework.Create(t, env.Client, crr)
	var stoppedAt time.Time
	framework.Eventually(t, e2eTimeout, "the daemon stops the container", func(ctx context.Context) error {
		st, _, err := containerState(ctx, old)
		if err != nil || st != criv1.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("state %v, %v", st, err)
		}
		stoppedAt = time.Now()
		return nil
	})
	if got := podCondition(t, ns, pod.Name, appspub.KruisePodReadyConditionType); got != corev1.ConditionFalse {
		t.Errorf("KruisePodReady %q when the container was stopped, want False: the pod must be held not ready", got)
	}
	cur, err := getCRR(ctx, crr)
	if err != nil {
		t.Fatal(err)
	}
	acquired, err := time.Parse(time.RFC3339, cur.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey])
	if err != nil {
		t.Fatalf("unready-acquired annotation: %v", err)
	}
	// The annotation has second precision; the stop is observed after it happened.
	if held := stoppedAt.Sub(acquired); held < (grace-1)*time.Second {
		t.Errorf("container stopped %v after the pod was made not ready, want at least the %ds grace period", held, grace)
	}
	kl.start("app")
	framework.Eventually(t, e2eTimeout, "the CRR completes and the pod is ready again", func(ctx context.Context) error {
		got, err := getCRR(ctx, crr)
		if err != nil {
			return err
		}
		if got.Status.Phase != appsv1alpha1.ContainerRecreateRequestCompleted {
			return fmt.Errorf("status %+v", got.Status)
		}
		if c := podCondition(t, ns, pod.Name, appspub.KruisePodReadyConditionType); c != corev1.ConditionTrue {
			return fmt.Errorf("KruisePodReady %q", c)
		}
		return nil
	})
}

func setPodCondition(t *testing.T, ns, name string, ct corev1.PodConditionType, status corev1.ConditionStatus) {
	t.Helper()
	framework.SetPodCondition(t, env.Client, types.NamespacedName{Namespace: ns, Name: name}, ct, status)
}

func podCondition(t *testing.T, ns, name string, ct corev1.PodConditionType) corev1.ConditionStatus {
	t.Helper()
	pod := &corev1.Pod{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}
