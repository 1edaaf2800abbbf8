package restore

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

const zone = "topology.kubernetes.io/zone"

func TestInject(t *testing.T) {
	state := appsv1alpha1.PodState{
		NodeName:           "node-1",
		NodeTopologyLabels: map[string]string{zone: "zone-a", "kubernetes.io/hostname": "node-1"},
		Annotations:        map[string]string{"ip": "10.0.0.7"},
	}
	required := &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{zone}}
	preferred := []appsv1alpha1.PreferredTopologyTerm{{Weight: 50, Preference: appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{"kubernetes.io/hostname"}}}}
	type tcase struct {
		spec            appsv1alpha1.PersistentPodStateSpec
		pod             corev1.Pod
		wantChanged     bool
		wantSelector    map[string]string
		wantPreferred   []corev1.PreferredSchedulingTerm
		wantAnnotations map[string]string
	}
	cases := map[string]tcase{
		"required topology becomes a nodeSelector on the recorded value": {
			spec:         appsv1alpha1.PersistentPodStateSpec{RequiredPersistentTopology: required},
			wantChanged:  true,
			wantSelector: map[string]string{zone: "zone-a"},
		},
		"preferred topology becomes a weighted preferred node affinity term": {
			spec:        appsv1alpha1.PersistentPodStateSpec{PreferredPersistentTopology: preferred},
			wantChanged: true,
			wantPreferred: []corev1.PreferredSchedulingTerm{{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}}}},
		},
		"recorded annotations are written back": {
			spec:            appsv1alpha1.PersistentPodStateSpec{RequiredPersistentTopology: required, PersistentPodAnnotations: []appsv1alpha1.PersistentPodAnnotation{{Key: "ip"}}},
			wantChanged:     true,
			wantSelector:    map[string]string{zone: "zone-a"},
			wantAnnotations: map[string]string{"ip": "10.0.0.7"},
		},
		"the pod's own annotation value wins over the recorded one": {
			spec:            appsv1alpha1.PersistentPodStateSpec{PersistentPodAnnotations: []appsv1alpha1.PersistentPodAnnotation{{Key: "ip"}}},
			pod:             corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"ip": "own"}}},
			wantAnnotations: map[string]string{"ip": "own"},
		},
		"a key with no recorded value adds nothing": {
			spec: appsv1alpha1.PersistentPodStateSpec{RequiredPersistentTopology: &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{"rack"}}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		pod := tc.pod.DeepCopy()
		changed := Inject(pod, &tc.spec, state)
		if changed != tc.wantChanged {
			t.Errorf("changed %v, want %v", changed, tc.wantChanged)
		}
		testkit.Diff(t, "nodeSelector", tc.wantSelector, pod.Spec.NodeSelector)
		var gotPreferred []corev1.PreferredSchedulingTerm
		if pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil {
			gotPreferred = pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		testkit.Diff(t, "preferred terms", tc.wantPreferred, gotPreferred)
		testkit.Diff(t, "annotations", tc.wantAnnotations, pod.Annotations)
	})
}
