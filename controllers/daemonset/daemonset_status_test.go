package daemonset

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var statusNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// statusScope is a DaemonSet at generation 2 with the defaults the webhook sets, on the given
// nodes, whose update revision has hash "new".
func statusScope(nodes []*corev1.Node, pods map[string][]*corev1.Pod, mutate func(*appsv1alpha1.DaemonSet)) *scope {
	ds := &appsv1alpha1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "ns", Generation: 2},
		Spec: appsv1alpha1.DaemonSetSpec{
			UpdateStrategy: appsv1alpha1.DaemonSetUpdateStrategy{Type: appsv1alpha1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1alpha1.RollingUpdateDaemonSet{
				Type: appsv1alpha1.StandardRollingUpdateType, Partition: ptr.To[int32](0), Paused: ptr.To(false),
			}},
		},
	}
	if mutate != nil {
		mutate(ds)
	}
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "ds-new", Labels: map[string]string{revision.HashLabel: "new"}}}
	return &scope{ds: ds, nodes: nodes, pods: pods, Tracked: revision.Tracked{Revisions: revision.Revisions{Update: rev, History: []*appsv1.ControllerRevision{rev}}}}
}

func statusNode(name string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}
}

func statusPod(name, hash string, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: hash}}}
	if ready {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(statusNow.Add(-time.Minute))}}
	}
	return p
}

func TestComputeStatus(t *testing.T) {
	noExec := corev1.Taint{Key: "gone", Effect: corev1.TaintEffectNoExecute}
	s := statusScope(
		[]*corev1.Node{statusNode("a"), statusNode("b"), statusNode("c"), statusNode("d"), statusNode("e", noExec)},
		map[string][]*corev1.Pod{
			"a": {statusPod("a-1", "new", true)},
			"b": {statusPod("b-1", "old", true)},
			"c": {statusPod("c-1", "new", false)},
			// d has no pod yet
			"e":    {statusPod("e-1", "new", true)},
			"gone": {statusPod("gone-1", "new", true)},
		}, nil)
	want := appsv1alpha1.DaemonSetStatus{
		ObservedGeneration:     2,
		DesiredNumberScheduled: 4,
		CurrentNumberScheduled: 3,
		NumberMisscheduled:     2,
		NumberReady:            2,
		NumberAvailable:        2,
		NumberUnavailable:      2,
		UpdatedNumberScheduled: 2,
		CollisionCount:         ptr.To[int32](0),
		DaemonSetHash:          "new",
	}
	testkit.Diff(t, "status", want, computeStatus(s, statusNow))
}

// argoHealth is Argo CD's built-in health check for apps.kruise.io DaemonSet
// (resource_customizations/apps.kruise.io/DaemonSet/health.lua), written out in Go: the fields
// it reads and the order it reads them in.
func argoHealth(ds *appsv1alpha1.DaemonSet) string {
	st := ds.Status
	if ds.Generation != st.ObservedGeneration {
		return "Progressing"
	}
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	switch {
	case ptr.Deref(ru.Paused, false):
		return "Suspended"
	case (ru.Partition == nil || *ru.Partition != 0) && ds.Generation > 1:
		// The script compares partition with 0 and then subtracts it: a missing partition
		// breaks the check, which is why the webhook always sets it.
		if ru.Partition == nil {
			return "error: partition is not set"
		}
		if st.UpdatedNumberScheduled > st.DesiredNumberScheduled-*ru.Partition {
			return "Suspended"
		}
	case st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberAvailable == st.DesiredNumberScheduled:
		return "Healthy"
	case st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberUnavailable == st.DesiredNumberScheduled:
		return "Degraded"
	}
	return "Progressing"
}

func TestStatusReadsRightInArgoCD(t *testing.T) {
	nodes := []*corev1.Node{statusNode("a"), statusNode("b")}
	type tcase struct {
		pods   map[string][]*corev1.Pod
		mutate func(*appsv1alpha1.DaemonSet)
		want   string
	}
	tests := map[string]tcase{
		"a finished rollout is Healthy": {
			pods: map[string][]*corev1.Pod{"a": {statusPod("a-1", "new", true)}, "b": {statusPod("b-1", "new", true)}},
			want: "Healthy",
		},
		"a rollout with an old pod left is Progressing": {
			pods: map[string][]*corev1.Pod{"a": {statusPod("a-1", "new", true)}, "b": {statusPod("b-1", "old", true)}},
			want: "Progressing",
		},
		"a rollout whose new pod is not ready yet is Progressing": {
			pods: map[string][]*corev1.Pod{"a": {statusPod("a-1", "new", true)}, "b": {statusPod("b-1", "new", false)}},
			want: "Progressing",
		},
		"a paused rollout is Suspended": {
			pods:   map[string][]*corev1.Pod{"a": {statusPod("a-1", "new", true)}, "b": {statusPod("b-1", "old", true)}},
			mutate: func(ds *appsv1alpha1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.Paused = ptr.To(true) },
			want:   "Suspended",
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s := statusScope(nodes, tt.pods, tt.mutate)
		ds := s.ds.DeepCopy()
		ds.Status = computeStatus(s, statusNow)
		if got := argoHealth(ds); got != tt.want {
			t.Errorf("Argo CD health = %s, want %s (status %+v)", got, tt.want, ds.Status)
		}
	})
}
