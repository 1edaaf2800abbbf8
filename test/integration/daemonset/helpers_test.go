package daemonset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// Named timeouts for waits beyond the kit's.
const (
	// rollout bounds a rolling update over the suite's nodes, one or two nodes at a time.
	rollout = 3 * time.Minute
)

const (
	imageV1 = "registry.example.com/agent:1"
	imageV2 = "registry.example.com/agent:2"
	imageV3 = "registry.example.com/agent:3"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "ads-", nil)
}

// createDaemonSet creates ds and, when the test ends, deletes it and waits until the garbage
// collector has removed its pods, so the shared nodes are clean for the next test.
func createDaemonSet(t *testing.T, ds *appsv1alpha1.DaemonSet) {
	t.Helper()
	framework.Create(t, env.Client, ds)
	t.Cleanup(func() { deleteDaemonSet(t, ds.Namespace, ds.Name, ds.Spec.Template.Labels["app"]) })
}

// deleteDaemonSet deletes a DaemonSet in the background and waits until it and its pods,
// labelled app, are gone.
func deleteDaemonSet(t *testing.T, ns, name, app string) {
	t.Helper()
	ds := &appsv1alpha1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Delete(context.Background(), ds, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete DaemonSet %s: %v", name, err)
		return
	}
	framework.Eventually(t, framework.Long, "DaemonSet "+name+" and its pods are gone", func(ctx context.Context) error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(ds), &appsv1alpha1.DaemonSet{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("DaemonSet still there: %v", err)
		}
		var list corev1.PodList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			return err
		}
		return framework.Want(len(list.Items) == 0, fmt.Sprintf("%d pods left", len(list.Items)))
	})
}

// change gets the DaemonSet, applies f and updates it, retrying on conflicts.
func change(t *testing.T, ns, name string, f func(*appsv1alpha1.DaemonSet)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, f)
}

func getDaemonSet(t *testing.T, ns, name string) *appsv1alpha1.DaemonSet {
	t.Helper()
	return framework.Get[appsv1alpha1.DaemonSet](t, env.Client, client.ObjectKey{Namespace: ns, Name: name})
}

// byNode groups pods by the node they are for: the node they run on or, before the scheduler
// binds them, the node their required affinity names. Grouped by spec.nodeName alone, two new
// pods waiting for the scheduler on different nodes would count as two pods on one node.
func byNode(pods []corev1.Pod) map[string][]corev1.Pod {
	out := map[string][]corev1.Pod{}
	for _, p := range pods {
		node := forNode(&p)
		out[node] = append(out[node], p)
	}
	return out
}

// forNode is the node a pod runs on, or the one its required node affinity pins it to by
// metadata.name (as a DaemonSet pins its pods); "" when neither says.
func forNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// servingPod reports whether a pod is Ready and not in an in-place update.
func servingPod(p *corev1.Pod) bool {
	return framework.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue && framework.PodCondition(p, appspub.InPlaceUpdateReady) != corev1.ConditionFalse
}

// waitRolledOut waits until the DaemonSet runs one serving pod of image on each of nodes
// (sorted names) and its status says so for the latest spec; it returns the pods.
func waitRolledOut(t *testing.T, ns, name, image string, nodes []string, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	n := int32(len(nodes))
	framework.Eventually(t, timeout, fmt.Sprintf("DaemonSet %s runs %s on %v", name, image, nodes), func(ctx context.Context) error {
		ds := &appsv1alpha1.DaemonSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ds); err != nil {
			return err
		}
		st := ds.Status
		if st.ObservedGeneration != ds.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, ds.Generation)
		}
		if st.DesiredNumberScheduled != n || st.CurrentNumberScheduled != n || st.UpdatedNumberScheduled != n ||
			st.NumberReady != n || st.NumberAvailable != n || st.NumberUnavailable != 0 || st.NumberMisscheduled != 0 {
			return fmt.Errorf("status %+v", st)
		}
		var err error
		if pods, err = framework.LivePods(ctx, env.Client, ns, name); err != nil {
			return err
		}
		var on []string
		for _, p := range pods {
			if p.Spec.Containers[0].Image != image || !servingPod(&p) {
				return fmt.Errorf("pod %s on %q: image %s, serving %v", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, servingPod(&p))
			}
			on = append(on, p.Spec.NodeName)
		}
		sort.Strings(on)
		return framework.Want(strings.Join(on, ",") == strings.Join(nodes, ","), fmt.Sprintf("pods on %v", on))
	})
	return pods
}

// sampler watches a DaemonSet's pods while a rollout runs and keeps the worst it saw; read its
// figures once finish has returned.
type sampler struct {
	*framework.Sampler
	// maxUnavailable is the most nodes seen without a serving pod; maxPerNode the most live pods
	// on one node; maxTotal the most live pods.
	maxUnavailable, maxPerNode, maxTotal, samples int
}

// sample starts sampling the pods of app on nodes until finish is called.
func sample(ns, app string, nodes []string) *sampler {
	s := &sampler{}
	s.Sampler = framework.Sample(20*time.Millisecond, func() {
		pods, err := framework.LivePods(context.Background(), env.Client, ns, app)
		if err != nil {
			return
		}
		serving := map[string]bool{}
		perNode := 0
		for node, ps := range byNode(pods) {
			perNode = max(perNode, len(ps))
			for i := range ps {
				if servingPod(&ps[i]) {
					serving[node] = true
				}
			}
		}
		unavailable := 0
		for _, n := range nodes {
			if !serving[n] {
				unavailable++
			}
		}
		s.samples++
		s.maxUnavailable = max(s.maxUnavailable, unavailable)
		s.maxPerNode = max(s.maxPerNode, perNode)
		s.maxTotal = max(s.maxTotal, len(pods))
	})
	return s
}

func (s *sampler) finish() *sampler {
	s.Stop()
	return s
}

// revisionHash is the controller-revision-hash label of a pod.
func revisionHash(p *corev1.Pod) string { return p.Labels[appsv1.ControllerRevisionHashLabelKey] }
