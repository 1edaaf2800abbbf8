package persistentpodstate

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

const zoneKey = "topology.kubernetes.io/zone"

func readyPod(name, node string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func node(name, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{zoneKey: zone, "other": "x"}}}
}

func state(node, zone string, annotations map[string]string) appsv1alpha1.PodState {
	return appsv1alpha1.PodState{NodeName: node, NodeTopologyLabels: map[string]string{zoneKey: zone}, Annotations: annotations}
}

func TestComputeStatus(t *testing.T) {
	spec := appsv1alpha1.PersistentPodStateSpec{
		RequiredPersistentTopology: &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{zoneKey}},
		PersistentPodAnnotations:   []appsv1alpha1.PersistentPodAnnotation{{Key: "ip"}},
	}
	nodes := map[string]*corev1.Node{"n1": node("n1", "a"), "n2": node("n2", "b")}
	sts := &workload{replicas: 2}
	type tcase struct {
		retention appsv1alpha1.PersistentPodStateRetentionPolicyType
		old       map[string]appsv1alpha1.PodState
		w         *workload
		pods      []*corev1.Pod
		want      map[string]appsv1alpha1.PodState
	}
	cases := map[string]tcase{
		"a Ready pod's node zone and annotations are recorded": {
			w:    sts,
			pods: []*corev1.Pod{readyPod("db-0", "n1", map[string]string{"ip": "10.0.0.1", "skip": "y"})},
			want: map[string]appsv1alpha1.PodState{"db-0": state("n1", "a", map[string]string{"ip": "10.0.0.1"})},
		},
		"a pod not yet Ready is not recorded": {
			w:    sts,
			pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "db-0"}, Spec: corev1.PodSpec{NodeName: "n1"}}},
		},
		"a recreated pod not yet Ready keeps its old state": {
			w:    sts,
			old:  map[string]appsv1alpha1.PodState{"db-0": state("n1", "a", nil)},
			pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "db-0"}}},
			want: map[string]appsv1alpha1.PodState{"db-0": state("n1", "a", nil)},
		},
		"a pod that moved to another node is recorded again": {
			w:    sts,
			old:  map[string]appsv1alpha1.PodState{"db-0": state("n1", "a", nil)},
			pods: []*corev1.Pod{readyPod("db-0", "n2", nil)},
			want: map[string]appsv1alpha1.PodState{"db-0": state("n2", "b", nil)},
		},
		"WhenScaled drops the state of a pod scaled away": {
			w:    sts,
			old:  map[string]appsv1alpha1.PodState{"db-1": state("n1", "a", nil), "db-2": state("n2", "b", nil)},
			want: map[string]appsv1alpha1.PodState{"db-1": state("n1", "a", nil)},
		},
		"WhenScaled keeps the state of a pod beyond the size that still exists": {
			w:    sts,
			old:  map[string]appsv1alpha1.PodState{"db-2": state("n2", "b", nil)},
			pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "db-2"}}},
			want: map[string]appsv1alpha1.PodState{"db-2": state("n2", "b", nil)},
		},
		"WhenDeleted keeps the state of a pod scaled away": {
			retention: appsv1alpha1.PersistentPodStateRetentionPolicyWhenDeleted,
			w:         sts,
			old:       map[string]appsv1alpha1.PodState{"db-2": state("n2", "b", nil)},
			want:      map[string]appsv1alpha1.PodState{"db-2": state("n2", "b", nil)},
		},
		"reserved ordinals push the kept ordinals up": {
			w:    &workload{replicas: 2, reserved: []intstr.IntOrString{intstr.FromInt32(0), intstr.FromString("2-3")}},
			old:  map[string]appsv1alpha1.PodState{"db-1": state("n1", "a", nil), "db-4": state("n2", "b", nil), "db-5": state("n2", "b", nil)},
			want: map[string]appsv1alpha1.PodState{"db-1": state("n1", "a", nil), "db-4": state("n2", "b", nil)},
		},
		"a huge StatefulSet keeps the state of a high ordinal, found by arithmetic over its reserved range": {
			w:    &workload{replicas: math.MaxInt32 - 10, reserved: []intstr.IntOrString{intstr.FromString("0-1999999999")}},
			old:  map[string]appsv1alpha1.PodState{"db-2000000000": state("n1", "a", nil), "db-5": state("n2", "b", nil)},
			want: map[string]appsv1alpha1.PodState{"db-2000000000": state("n1", "a", nil)},
		},
		"a deleted workload drops every state, under either policy": {
			retention: appsv1alpha1.PersistentPodStateRetentionPolicyWhenDeleted,
			old:       map[string]appsv1alpha1.PodState{"db-0": state("n1", "a", nil)},
		},
		"a workload being deleted drops every state": {
			w:   &workload{replicas: 2, deleting: true},
			old: map[string]appsv1alpha1.PodState{"db-0": state("n1", "a", nil)},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		pps := &appsv1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: spec}
		pps.Spec.PersistentPodStateRetentionPolicy = tc.retention
		pps.Status.PodStates = tc.old
		pods := map[string]*corev1.Pod{}
		for _, p := range tc.pods {
			pods[p.Name] = p
		}
		got := computeStatus(pps, tc.w, pods, nodes)
		if got.ObservedGeneration != 2 {
			t.Errorf("observedGeneration %d, want 2", got.ObservedGeneration)
		}
		testkit.Diff(t, "podStates", tc.want, got.PodStates)
	})
}

func TestGenerated(t *testing.T) {
	ref := appsv1alpha1.TargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"}
	type tcase struct {
		annotations map[string]string
		want        *appsv1alpha1.PersistentPodStateSpec
	}
	cases := map[string]tcase{
		"no auto-generate annotation asks for nothing": {
			annotations: map[string]string{appsv1alpha1.AnnotationRequiredPersistentTopology: zoneKey},
		},
		"auto-generate without a topology asks for nothing": {
			annotations: map[string]string{appsv1alpha1.AnnotationAutoGeneratePersistentPodState: "true"},
		},
		"required, preferred and annotation keys are split on commas": {
			annotations: map[string]string{
				appsv1alpha1.AnnotationAutoGeneratePersistentPodState: "true",
				appsv1alpha1.AnnotationRequiredPersistentTopology:     zoneKey,
				appsv1alpha1.AnnotationPreferredPersistentTopology:    "kubernetes.io/hostname, rack",
				appsv1alpha1.AnnotationPersistentPodAnnotations:       "ip,mac",
			},
			want: &appsv1alpha1.PersistentPodStateSpec{
				TargetReference:            ref,
				RequiredPersistentTopology: &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{zoneKey}},
				PreferredPersistentTopology: []appsv1alpha1.PreferredTopologyTerm{{Weight: 100,
					Preference: appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: []string{"kubernetes.io/hostname", "rack"}}}},
				PersistentPodAnnotations: []appsv1alpha1.PersistentPodAnnotation{{Key: "ip"}, {Key: "mac"}},
			},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := generated(ref, "ns", "uid-1", tc.annotations)
		if tc.want == nil {
			if got != nil {
				t.Errorf("generated %+v, want none", got.Spec)
			}
			return
		}
		if got == nil {
			t.Fatal("generated none")
		}
		testkit.Diff(t, "spec", *tc.want, got.Spec)
		wantOwner := metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: "StatefulSet", Name: "db", UID: "uid-1", Controller: ptr.To(true)}
		testkit.Diff(t, "generated object's namespace, name and owners (ns/db controlled by the StatefulSet)",
			[]any{"ns", "db", []metav1.OwnerReference{wantOwner}}, []any{got.Namespace, got.Name, got.OwnerReferences})
	})
}
