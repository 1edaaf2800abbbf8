package daemonset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// changeNode gets a node, applies f and updates it, retrying on conflicts; the simulator writes
// node status too.
func changeNode(t *testing.T, name string, f func(*corev1.Node)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Name: name}, f)
}

// waitPodsOn waits until the app's live pods run on exactly nodes (sorted), one each, serving.
func waitPodsOn(t *testing.T, ns, app string, nodes ...string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	framework.Eventually(t, framework.Medium, fmt.Sprintf("pods of %s on %v", app, nodes), func(ctx context.Context) error {
		var err error
		if pods, err = framework.LivePods(ctx, env.Client, ns, app); err != nil {
			return err
		}
		var on []string
		for _, p := range pods {
			if !servingPod(&p) {
				return fmt.Errorf("pod %s on %q not serving", p.Name, p.Spec.NodeName)
			}
			on = append(on, p.Spec.NodeName)
		}
		slices.Sort(on)
		return framework.Want(strings.Join(on, ",") == strings.Join(nodes, ","), fmt.Sprintf("pods on %v", on))
	})
	return pods
}

func TestShouldRunAndStopSimpleDaemon(t *testing.T) {
	ns := newNamespace(t)
	ds := kinds.DaemonSet("simple", ns).Image(imageV1).Obj()
	framework.Create(t, env.Client, ds)
	pods := waitRolledOut(t, ns, "simple", imageV1, baseNodeNames(), framework.Medium)
	hash := getDaemonSet(t, ns, "simple").Status.DaemonSetHash

	for _, p := range pods {
		if p.GenerateName != "simple-" || !strings.HasPrefix(p.Name, "simple-") {
			t.Errorf("pod %s: generateName %q, want simple-", p.Name, p.GenerateName)
		}
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "DaemonSet" || ref.Name != "simple" {
			t.Errorf("pod %s: controller %v, want the DaemonSet", p.Name, ref)
		}
		// The scheduler placed the pod, through required node affinity on the node name.
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != p.Spec.NodeName {
			t.Errorf("pod %s on %s: required node affinity %+v, want matchFields metadata.name In [%s]", p.Name, p.Spec.NodeName, terms, p.Spec.NodeName)
		}
		if revisionHash(&p) != hash || hash == "" {
			t.Errorf("pod %s: controller-revision-hash %q, want status.daemonSetHash %q", p.Name, revisionHash(&p), hash)
		}
		gate := false
		for _, g := range p.Spec.ReadinessGates {
			gate = gate || g.ConditionType == appspub.InPlaceUpdateReady
		}
		if !gate {
			t.Errorf("pod %s: no %s readiness gate", p.Name, appspub.InPlaceUpdateReady)
		}
		tolerates := map[string]bool{}
		for _, tol := range p.Spec.Tolerations {
			tolerates[tol.Key+":"+string(tol.Effect)] = true
		}
		for _, want := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unschedulable:NoSchedule"} {
			if !tolerates[want] {
				t.Errorf("pod %s: does not tolerate %s", p.Name, want)
			}
		}
	}

	// A deleted pod is revived on its node.
	victim := pods[0]
	framework.Delete(t, env.Client, &victim)
	after := waitRolledOut(t, ns, "simple", imageV1, baseNodeNames(), framework.Medium)
	for _, p := range after {
		if p.UID == victim.UID {
			t.Errorf("pod %s was deleted and is still there", p.Name)
		}
	}

	// Stopping the daemon removes its pods.
	deleteDaemonSet(t, ns, "simple", "simple")
}

func TestShouldRunAndStopComplexDaemon(t *testing.T) {
	ns := newNamespace(t)
	key := "color." + ns
	createDaemonSet(t, kinds.DaemonSet("complex", ns).Image(imageV1).NodeSelector(map[string]string{key: "blue"}).Obj())
	framework.Eventually(t, framework.Medium, "no node is blue, so nothing is desired", func(ctx context.Context) error {
		ds := getDaemonSet(t, ns, "complex")
		return framework.Want(ds.Status.ObservedGeneration == ds.Generation && ds.Status.DesiredNumberScheduled == 0, fmt.Sprintf("status %+v", ds.Status))
	})
	if pods := framework.MustLivePods(t, env.Client, ns, "complex"); len(pods) != 0 {
		t.Fatalf("%d pods with no node selected", len(pods))
	}
	node := baseNodeNames()[1]
	t.Cleanup(func() { changeNode(t, node, func(n *corev1.Node) { delete(n.Labels, key) }) })

	changeNode(t, node, func(n *corev1.Node) { n.Labels[key] = "blue" })
	waitPodsOn(t, ns, "complex", node)

	changeNode(t, node, func(n *corev1.Node) { n.Labels[key] = "green" })
	waitPodsOn(t, ns, "complex")

	change(t, ns, "complex", func(ds *appsv1alpha1.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = map[string]string{key: "green"} })
	waitRolledOut(t, ns, "complex", imageV1, []string{node}, framework.Medium)
}

func TestNodesThatJoinLeaveOrAreTaintedAreFollowed(t *testing.T) {
	ns := newNamespace(t)
	key := "pool." + ns
	createDaemonSet(t, kinds.DaemonSet("follow", ns).Image(imageV1).NodeSelector(map[string]string{key: "edge"}).Obj())
	joined := "join-" + ns
	if err := sim.AddNodes(context.Background(), builder.Node(joined).Label(key, "edge").Obj()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: joined}})
	})
	waitRolledOut(t, ns, "follow", imageV1, []string{joined}, framework.Medium)

	// A NoSchedule taint keeps new pods off but lets the running one stay.
	changeNode(t, joined, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	})
	framework.Eventually(t, framework.Medium, "the tainted node is no longer desired", func(ctx context.Context) error {
		st := getDaemonSet(t, ns, "follow").Status
		return framework.Want(st.DesiredNumberScheduled == 0 && st.NumberMisscheduled == 1, fmt.Sprintf("status %+v", st))
	})
	if pods := framework.MustLivePods(t, env.Client, ns, "follow"); len(pods) != 1 {
		t.Fatalf("%d pods, want the running one kept under a NoSchedule taint", len(pods))
	}

	// An untolerated NoExecute taint sends it away.
	changeNode(t, joined, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "evict", Value: "x", Effect: corev1.TaintEffectNoExecute})
	})
	waitPodsOn(t, ns, "follow")

	// Untainted, it gets the pod back; deleted, the pod goes.
	changeNode(t, joined, func(n *corev1.Node) { n.Spec.Taints = nil })
	waitRolledOut(t, ns, "follow", imageV1, []string{joined}, framework.Medium)
	framework.Delete(t, env.Client, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: joined}})
	waitPodsOn(t, ns, "follow")
	// No kubelet is left to finish the pod's deletion; the pod garbage collector of a cluster
	// force-deletes pods of a node that is gone, and so does the test.
	var left corev1.PodList
	if err := env.Client.List(context.Background(), &left, client.InNamespace(ns), client.MatchingLabels{"app": "follow"}); err != nil {
		t.Fatal(err)
	}
	for i := range left.Items {
		if left.Items[i].Spec.NodeName == joined {
			_ = env.Client.Delete(context.Background(), &left.Items[i], client.GracePeriodSeconds(0))
		}
	}
	framework.Eventually(t, framework.Medium, "a deleted node is not desired", func(ctx context.Context) error {
		st := getDaemonSet(t, ns, "follow").Status
		return framework.Want(st.DesiredNumberScheduled == 0 && st.CurrentNumberScheduled == 0 && st.NumberMisscheduled == 0, fmt.Sprintf("status %+v", st))
	})
}

func TestShouldRetryCreatingFailedDaemonPods(t *testing.T) {
	ns := newNamespace(t)
	createDaemonSet(t, kinds.DaemonSet("retry", ns).Image(imageV1).Obj())
	pods := waitRolledOut(t, ns, "retry", imageV1, baseNodeNames(), framework.Medium)
	failed := pods[0]
	failed.Status.Phase = corev1.PodFailed
	if err := env.Client.Status().Update(context.Background(), &failed); err != nil {
		t.Fatalf("mark pod %s Failed: %v", failed.Name, err)
	}
	framework.Eventually(t, framework.Medium, "the failed pod is replaced", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, "retry")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.UID == failed.UID {
				return fmt.Errorf("failed pod %s still live (phase %s)", p.Name, p.Status.Phase)
			}
		}
		return nil
	})
	waitRolledOut(t, ns, "retry", imageV1, baseNodeNames(), framework.Medium)
}
