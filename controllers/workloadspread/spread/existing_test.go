package spread

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func zoneSubset(name, zone string) appsv1alpha1.WorkloadSpreadSubset {
	return appsv1alpha1.WorkloadSpreadSubset{Name: name, RequiredNodeSelectorTerm: &corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}}
}

func node(zone string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"zone": zone, "disk": "ssd"}}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestFavorite(t *testing.T) {
	spot := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectNoSchedule}
	tolerant := func(s appsv1alpha1.WorkloadSpreadSubset) appsv1alpha1.WorkloadSpreadSubset {
		s.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		return s
	}
	preferSSD := func(s appsv1alpha1.WorkloadSpreadSubset) appsv1alpha1.WorkloadSpreadSubset {
		s.PreferredNodeSelectorTerms = []corev1.PreferredSchedulingTerm{{Weight: 5, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}
		return s
	}
	labelled := func(s appsv1alpha1.WorkloadSpreadSubset) appsv1alpha1.WorkloadSpreadSubset {
		s.Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"tier":"gold"}}}`)}
		return s
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	goldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"tier": "gold"}}}
	type tcase struct {
		pod     *corev1.Pod
		node    *corev1.Node
		subsets []appsv1alpha1.WorkloadSpreadSubset
		missing []int32
		want    int
	}
	cases := map[string]tcase{
		"the subset whose zone the node is in": {
			pod: pod, node: node("b"), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a"), zoneSubset("b", "b")}, missing: []int32{1, 1}, want: 1},
		"no subset fits a node of another zone": {
			pod: pod, node: node("z"), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a")}, missing: []int32{1}, want: -1},
		"a subset that does not tolerate the node's taint does not fit": {
			pod: pod, node: node("a", spot), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a"), tolerant(zoneSubset("a2", "a"))}, missing: []int32{1, 1}, want: 1},
		"a subset with room wins over a full one": {
			pod: pod, node: node("a"), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a"), zoneSubset("a2", "a")}, missing: []int32{0, 1}, want: 1},
		"a preferred term matching the node outweighs room": {
			pod: pod, node: node("a"), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a"), preferSSD(zoneSubset("a2", "a"))}, missing: []int32{1, 0}, want: 1},
		"a pod already as the subset's patch makes it outweighs room": {
			pod: goldPod, node: node("a"), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a"), labelled(zoneSubset("a2", "a"))}, missing: []int32{1, 0}, want: 1},
		"on a tie the first subset wins": {
			pod: pod, node: node("a"), subsets: []appsv1alpha1.WorkloadSpreadSubset{zoneSubset("a", "a"), zoneSubset("a2", "a")}, missing: []int32{1, 1}, want: 0},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "favorite", tc.want, Favorite(tc.pod, tc.node, tc.subsets, tc.missing))
	})
}

func TestExistingPodPatch(t *testing.T) {
	s := appsv1alpha1.WorkloadSpreadSubset{Name: "a", Patch: runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"tier":"gold"},"annotations":{"note":"x"}},"spec":{"priorityClassName":"high"}}`)}}
	labels, annotations := ExistingPodPatch("ws", &s, false)
	testkit.Diff(t, "labels", map[string]string{"tier": "gold"}, labels)
	want := map[string]string{"note": "x", appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations: `{"name":"ws","subset":"a"}`}
	testkit.Diff(t, "annotations", want, annotations)
	labels, annotations = ExistingPodPatch("ws", &s, true)
	if len(labels) != 0 || len(annotations) != 1 {
		t.Errorf("with the patch ignored only the match is recorded, got labels %v annotations %v", labels, annotations)
	}
}
