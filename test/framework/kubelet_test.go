package framework_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// wantImageID is the imageID the simulator documents, computed independently.
func wantImageID(repo, image string) string {
	sum := sha256.Sum256([]byte(image))
	return repo + "@sha256:" + hex.EncodeToString(sum[:])
}

func TestPodGoesPendingRunningReady(t *testing.T) {
	ns := newNamespace(t)
	node := nodeName(ns, "n")
	clk := clocktesting.NewFakeClock(time.Now())
	const startDelay, readyDelay = 10 * time.Second, 5 * time.Second
	startSimulator(t, ns, framework.WithClock(clk), framework.WithStartDelay(startDelay), framework.WithReadyDelay(readyDelay),
		framework.WithNodes(builder.Node(node).Zone("zone-a").Obj()))
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hostIP := n.Status.Addresses[0].Address
	for _, name := range []string{"web-0", "web-1"} {
		createPod(t, builder.Pod(name, ns).Image("nginx:1.27").Container("sidecar", "busybox:1.36").Obj())
	}

	pending := waitForPod(t, ns, "web-0", statusTimeout, "Pending on the node", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodPending || p.Status.PodIP == "" {
			return fmt.Errorf("phase %q, podIP %q", p.Status.Phase, p.Status.PodIP)
		}
		return nil
	})
	t.Run("Pending has addresses, a start time and waiting containers", func(t *testing.T) {
		if pending.Spec.NodeName != node || pending.Status.HostIP != hostIP || pending.Status.StartTime == nil {
			t.Errorf("nodeName %q hostIP %q startTime %v, want %s %s and a start time", pending.Spec.NodeName, pending.Status.HostIP, pending.Status.StartTime, node, hostIP)
		}
		if got := framework.PodCondition(pending, corev1.PodScheduled); got != corev1.ConditionTrue {
			t.Errorf("PodScheduled = %q, want True", got)
		}
		for _, cs := range pending.Status.ContainerStatuses {
			if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.Ready {
				t.Errorf("container %s: state %+v ready %v, want waiting in ContainerCreating", cs.Name, cs.State, cs.Ready)
			}
		}
	})
	t.Run("each pod has its own IP", func(t *testing.T) {
		other := waitForPod(t, ns, "web-1", statusTimeout, "has an IP", func(p *corev1.Pod) error {
			if p.Status.PodIP == "" {
				return fmt.Errorf("no podIP")
			}
			return nil
		})
		if other.Status.PodIP == pending.Status.PodIP {
			t.Errorf("web-0 and web-1 share the IP %s", other.Status.PodIP)
		}
	})

	clk.Step(startDelay)
	running := waitForPod(t, ns, "web-0", statusTimeout, "Running", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		return nil
	})
	t.Run("Running has started containers with image and container IDs, not ready yet", func(t *testing.T) {
		want := map[string]string{"main": wantImageID("nginx", "nginx:1.27"), "sidecar": wantImageID("busybox", "busybox:1.36")}
		for _, cs := range running.Status.ContainerStatuses {
			if cs.State.Running == nil || cs.Started == nil || !*cs.Started || cs.RestartCount != 0 {
				t.Errorf("container %s: state %+v started %v restarts %d, want running, started, 0", cs.Name, cs.State, cs.Started, cs.RestartCount)
			}
			if cs.ImageID != want[cs.Name] {
				t.Errorf("container %s: imageID %q, want %q", cs.Name, cs.ImageID, want[cs.Name])
			}
			if !strings.HasPrefix(cs.ContainerID, "containerd://") || len(cs.ContainerID) != len("containerd://")+64 {
				t.Errorf("container %s: containerID %q, want containerd://<64 hex>", cs.Name, cs.ContainerID)
			}
			if cs.Ready {
				t.Errorf("container %s is ready before the ready delay", cs.Name)
			}
		}
		if got := framework.PodCondition(running, corev1.PodReady); got != corev1.ConditionFalse {
			t.Errorf("Ready = %q before the ready delay, want False", got)
		}
	})

	clk.Step(readyDelay)
	ready := waitForPod(t, ns, "web-0", statusTimeout, "Ready", isReady)
	t.Run("Ready has every condition True and ready containers", func(t *testing.T) {
		for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			if got := framework.PodCondition(ready, c); got != corev1.ConditionTrue {
				t.Errorf("%s = %q, want True", c, got)
			}
		}
		for _, cs := range ready.Status.ContainerStatuses {
			if !cs.Ready {
				t.Errorf("container %s not ready", cs.Name)
			}
		}
	})
}

func TestContainerIDsNameTheNodeRuntime(t *testing.T) {
	ns := newNamespace(t)
	cases := map[string]struct{ runtime, wantPrefix string }{
		"a containerd node": {"containerd://1.7.13", "containerd://"},
		"a docker node":     {"docker://24.0.7", "docker://"},
	}
	var nodes []*corev1.Node
	for name, tc := range cases {
		nodes = append(nodes, builder.Node(nodeName(ns, strings.ReplaceAll(name, " ", "-"))).Runtime(tc.runtime).Obj())
	}
	startSimulator(t, ns, framework.WithNodes(nodes...))
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := builder.Pod(strings.ReplaceAll(name, " ", "-"), ns).Node(nodeName(ns, strings.ReplaceAll(name, " ", "-"))).Obj()
			createPod(t, pod)
			got := waitForPod(t, ns, pod.Name, statusTimeout, "Ready", isReady)
			if id := got.Status.ContainerStatuses[0].ContainerID; !strings.HasPrefix(id, tc.wantPrefix) {
				t.Errorf("containerID %q, want prefix %s", id, tc.wantPrefix)
			}
		})
	}
}

func TestReadinessGateHoldsReadyUntilItsConditionIsTrue(t *testing.T) {
	ns := newNamespace(t)
	startSimulator(t, ns, framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))
	const gate = corev1.PodConditionType("example.com/traffic-ready")
	createPod(t, builder.Pod("gated", ns).ReadinessGate(gate).Obj())

	pod := waitForPod(t, ns, "gated", statusTimeout, "containers ready", func(p *corev1.Pod) error {
		if framework.PodCondition(p, corev1.ContainersReady) != corev1.ConditionTrue {
			return fmt.Errorf("conditions %v", p.Status.Conditions)
		}
		return nil
	})
	// ContainersReady and Ready are written together, so this is the kubelet's verdict.
	if got := framework.PodCondition(pod, corev1.PodReady); got != corev1.ConditionFalse {
		t.Fatalf("Ready = %q with the gate's condition missing, want False", got)
	}

	setGate := func(status corev1.ConditionStatus) {
		updatePod(t, ns, "gated", true, func(p *corev1.Pod) {
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == gate {
					p.Status.Conditions[i].Status = status
					return
				}
			}
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: gate, Status: status, LastTransitionTime: metav1.Now()})
		})
	}
	setGate(corev1.ConditionTrue)
	waitForPod(t, ns, "gated", statusTimeout, "Ready once the gate is True", isReady)

	setGate(corev1.ConditionFalse)
	waitForPod(t, ns, "gated", statusTimeout, "not Ready once the gate is False again", func(p *corev1.Pod) error {
		if framework.PodCondition(p, corev1.PodReady) != corev1.ConditionFalse {
			return fmt.Errorf("conditions %v", p.Status.Conditions)
		}
		return nil
	})
}

func TestInPlaceImageChangeRestartsOnlyThatContainer(t *testing.T) {
	ns := newNamespace(t)
	clk := clocktesting.NewFakeClock(time.Now())
	const changeDelay = 30 * time.Second
	startSimulator(t, ns, framework.WithClock(clk), framework.WithStartDelay(0), framework.WithReadyDelay(0),
		framework.WithImageChangeDelay(changeDelay), framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))
	createPod(t, builder.Pod("web", ns).Image("nginx:1.27").Container("sidecar", "busybox:1.36").Obj())
	before := waitForPod(t, ns, "web", statusTimeout, "Ready", isReady)
	oldMain, oldSidecar := *framework.ContainerStatus(before, "main"), *framework.ContainerStatus(before, "sidecar")

	updatePod(t, ns, "web", false, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" })

	stopped := waitForPod(t, ns, "web", statusTimeout, "main container stopped for the new image", func(p *corev1.Pod) error {
		if cs := framework.ContainerStatus(p, "main"); cs.State.Terminated == nil {
			return fmt.Errorf("main: %+v", cs.State)
		}
		return nil
	})
	t.Run("until the delay passes the old image is reported", func(t *testing.T) {
		cs := framework.ContainerStatus(stopped, "main")
		if cs.Image != "nginx:1.27" || cs.ImageID != oldMain.ImageID || cs.RestartCount != 0 || cs.Ready {
			t.Errorf("main = image %s imageID %s restarts %d ready %v, want the old image, not ready", cs.Image, cs.ImageID, cs.RestartCount, cs.Ready)
		}
	})

	clk.Step(changeDelay)
	after := waitForPod(t, ns, "web", statusTimeout, "new image running and Ready", func(p *corev1.Pod) error {
		if cs := framework.ContainerStatus(p, "main"); cs.Image != "nginx:1.28" || cs.State.Running == nil {
			return fmt.Errorf("main: image %s state %+v", cs.Image, cs.State)
		}
		return isReady(p)
	})
	t.Run("after the delay the new image runs with a new imageID, containerID and restartCount 1", func(t *testing.T) {
		cs := framework.ContainerStatus(after, "main")
		if want := wantImageID("nginx", "nginx:1.28"); cs.ImageID != want {
			t.Errorf("imageID %q, want %q", cs.ImageID, want)
		}
		if cs.RestartCount != 1 {
			t.Errorf("restartCount %d, want 1", cs.RestartCount)
		}
		if cs.ContainerID == oldMain.ContainerID {
			t.Errorf("containerID unchanged: %s", cs.ContainerID)
		}
		if after.UID != before.UID {
			t.Errorf("pod UID %s, want the same pod %s", after.UID, before.UID)
		}
	})
	t.Run("the other container is untouched", func(t *testing.T) {
		if d := cmp.Diff(oldSidecar, *framework.ContainerStatus(after, "sidecar")); d != "" {
			t.Errorf("sidecar status (-before +after):\n%s", d)
		}
	})
}

func TestDeletedPodsAreRemovedLikeAKubeletDoes(t *testing.T) {
	cases := map[string]struct {
		opts  []framework.SimOption
		pod   func(*builder.PodBuilder) *builder.PodBuilder
		grace *int64 // of the delete call
	}{
		"a pod is removed once its grace period has passed": {
			pod:   func(b *builder.PodBuilder) *builder.PodBuilder { return b },
			grace: ptr.To[int64](1),
		},
		"with a termination delay a pod with a long grace period goes early": {
			opts: []framework.SimOption{framework.WithTerminationDelay(0)},
			pod:  func(b *builder.PodBuilder) *builder.PodBuilder { return b.TerminationGracePeriod(3600) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			startSimulator(t, ns, append(tc.opts, framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))...)
			createPod(t, tc.pod(builder.Pod("doomed", ns)).Obj())
			waitForPod(t, ns, "doomed", statusTimeout, "Ready", isReady)
			if err := env.Clientset.CoreV1().Pods(ns).Delete(context.Background(), "doomed", metav1.DeleteOptions{GracePeriodSeconds: tc.grace}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			waitForPodGone(t, ns, "doomed")
		})
	}
}

func TestAFinalizerKeepsADeletedPodUntilItIsRemoved(t *testing.T) {
	ns := newNamespace(t)
	startSimulator(t, ns, framework.WithTerminationDelay(0), framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))
	const finalizer = "example.com/hold"
	createPod(t, builder.Pod("held", ns).Finalizer(finalizer).Obj())
	waitForPod(t, ns, "held", statusTimeout, "Ready", isReady)
	if err := env.Clientset.CoreV1().Pods(ns).Delete(context.Background(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// The kubelet's delete with grace 0 is what sets deletionGracePeriodSeconds to 0.
	waitForPod(t, ns, "held", deleteTimeout, "terminated and deleted with grace 0, held by the finalizer", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodSucceeded || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 0 {
			return fmt.Errorf("phase %s, deletionGracePeriodSeconds %v", p.Status.Phase, p.DeletionGracePeriodSeconds)
		}
		return nil
	})
	updatePod(t, ns, "held", false, func(p *corev1.Pod) { p.Finalizers = nil })
	waitForPodGone(t, ns, "held")
}

func waitForPodGone(t *testing.T, ns, name string) {
	t.Helper()
	framework.Eventually(t, deleteTimeout, "pod "+name+" removed", func(ctx context.Context) error {
		p, err := getPod(ctx, ns, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: deletionTimestamp %v, phase %s", p.DeletionTimestamp, p.Status.Phase)
	})
}

func TestPodsOnOtherNodesAreUntouched(t *testing.T) {
	ns := newNamespace(t)
	foreign := nodeName(ns, "foreign")
	if _, err := env.Clientset.CoreV1().Nodes().Create(context.Background(), builder.Node(foreign).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create foreign node: %v", err)
	}
	t.Cleanup(func() {
		_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), foreign, metav1.DeleteOptions{})
	})
	sim := nodeName(ns, "sim")
	startSimulator(t, ns, framework.WithTerminationDelay(0), framework.WithNodes(builder.Node(sim).Obj()))

	idle := createPod(t, builder.Pod("foreign-idle", ns).Node(foreign).Obj())
	createPod(t, builder.Pod("foreign-deleted", ns).Node(foreign).Obj())
	if err := env.Clientset.CoreV1().Pods(ns).Delete(context.Background(), "foreign-deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	deleted, err := getPod(context.Background(), ns, "foreign-deleted")
	if err != nil {
		t.Fatalf("a bound pod must wait for its kubelet after delete: %v", err)
	}

	// A pod on the simulated node, created and deleted after the foreign ones, is started and
	// removed only once the simulator has seen the earlier events too.
	createPod(t, builder.Pod("marker", ns).Node(sim).Obj())
	waitForPod(t, ns, "marker", statusTimeout, "Ready", isReady)
	if err := env.Clientset.CoreV1().Pods(ns).Delete(context.Background(), "marker", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete marker: %v", err)
	}
	waitForPodGone(t, ns, "marker")

	for _, want := range []*corev1.Pod{idle, deleted} {
		got, err := getPod(context.Background(), ns, want.Name)
		if err != nil {
			t.Errorf("%s: %v", want.Name, err)
			continue
		}
		if got.ResourceVersion != want.ResourceVersion {
			t.Errorf("%s was written to: resourceVersion %s -> %s, status %+v", want.Name, want.ResourceVersion, got.ResourceVersion, got.Status)
		}
	}
}

func TestKnobsChangeWhatTheKubeletDoes(t *testing.T) {
	ns := newNamespace(t)
	startSimulator(t, ns, framework.WithNodes(builder.Node(nodeName(ns, "n")).Obj()))

	t.Run("not-ready keeps a running pod not ready until it is removed", func(t *testing.T) {
		createPod(t, builder.Pod("stuck", ns).Annotation(framework.AnnotationNotReady, "true").Obj())
		waitForPod(t, ns, "stuck", statusTimeout, "running, not ready", func(p *corev1.Pod) error {
			if p.Status.Phase != corev1.PodRunning || framework.PodCondition(p, corev1.PodReady) != corev1.ConditionFalse {
				return fmt.Errorf("phase %s conditions %v", p.Status.Phase, p.Status.Conditions)
			}
			if cs := framework.ContainerStatus(p, "main"); cs == nil || cs.State.Running == nil {
				return fmt.Errorf("main not running yet")
			}
			return nil
		})
		updatePod(t, ns, "stuck", false, func(p *corev1.Pod) { delete(p.Annotations, framework.AnnotationNotReady) })
		waitForPod(t, ns, "stuck", statusTimeout, "Ready once the knob is gone", isReady)
	})
	t.Run("phase ends the pod Succeeded or Failed", func(t *testing.T) {
		for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
			name := strings.ToLower(string(phase))
			createPod(t, builder.Pod(name, ns).RestartPolicy(corev1.RestartPolicyNever).Annotation(framework.AnnotationPhase, string(phase)).Obj())
			waitForPod(t, ns, name, statusTimeout, "phase "+string(phase), func(p *corev1.Pod) error {
				if p.Status.Phase != phase {
					return fmt.Errorf("phase %s", p.Status.Phase)
				}
				return nil
			})
		}
	})
}
