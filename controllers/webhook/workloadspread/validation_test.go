package workloadspread

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func spreadOf(mut ...func(*appsv1alpha1.WorkloadSpread)) *appsv1alpha1.WorkloadSpread {
	ws := &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ws"},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.TargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
			Subsets: []appsv1alpha1.WorkloadSpreadSubset{
				{Name: "a", MaxReplicas: ptr.To(intstr.FromInt32(2))},
				{Name: "b"},
			},
		}}
	for _, m := range mut {
		m(ws)
	}
	return ws
}

func pct(v string) *intstr.IntOrString { return ptr.To(intstr.FromString(v)) }

func TestValidateWorkloadSpread(t *testing.T) {
	cases := map[string]struct {
		ws     *appsv1alpha1.WorkloadSpread
		old    *appsv1alpha1.WorkloadSpread
		others []appsv1alpha1.WorkloadSpread
		custom *workloadref.Whitelist
		want   []string
	}{
		"a plain spread over a CloneSet is valid": {ws: spreadOf()},
		"a Deployment target is valid": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.TargetReference = &appsv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		})},
		"a missing targetRef is required": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.TargetReference = nil }),
			want: []string{"FieldValueRequired spec.targetRef"}},
		"an unsupported kind is named": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.TargetReference = &appsv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "web"}
		}), want: []string{"FieldValueNotSupported spec.targetRef.kind"}},
		"a custom workload the whitelist names is valid": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.TargetReference = &appsv1alpha1.TargetReference{APIVersion: "example.io/v1", Kind: "Run", Name: "web"}
		}), custom: &workloadref.Whitelist{Workloads: []workloadref.CustomWorkload{{GroupVersionKind: schema.GroupVersionKind{Group: "example.io", Kind: "Run"}}}}},
		"a custom workload the whitelist leaves out is named": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.TargetReference = &appsv1alpha1.TargetReference{APIVersion: "example.io/v1", Kind: "Run", Name: "web"}
		}), custom: &workloadref.Whitelist{Workloads: []workloadref.CustomWorkload{{GroupVersionKind: schema.GroupVersionKind{Group: "example.io", Kind: "Other"}}}},
			want: []string{"FieldValueNotSupported spec.targetRef.kind"}},
		"a workload another WorkloadSpread holds is refused": {ws: spreadOf(),
			others: []appsv1alpha1.WorkloadSpread{*spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Name = "other" })},
			want:   []string{"FieldValueInvalid spec.targetRef"}},
		"no subsets is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.Subsets = nil }),
			want: []string{"FieldValueRequired spec.subsets"}},
		"a duplicated subset name is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.Subsets[1].Name = "a" }),
			want: []string{"FieldValueDuplicate spec.subsets[1].name"}},
		"an empty subset name is required": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.Subsets[1].Name = "" }),
			want: []string{"FieldValueRequired spec.subsets[1].name"}},
		"mixed maxReplicas types are refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.Subsets[1].MaxReplicas = pct("50%") }),
			want: []string{"FieldValueInvalid spec.subsets[1].maxReplicas"}},
		"percentages above 100% are refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.Subsets[0].MaxReplicas, w.Spec.Subsets[1].MaxReplicas = pct("60%"), pct("50%")
		}), want: []string{"FieldValueInvalid spec.subsets[1].maxReplicas"}},
		"percentages below 100% with a limited last subset are refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.Subsets[0].MaxReplicas, w.Spec.Subsets[1].MaxReplicas = pct("30%"), pct("50%")
		}), want: []string{"FieldValueInvalid spec.subsets[1].maxReplicas"}},
		"percentages below 100% with an unlimited last subset are valid": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.Subsets[0].MaxReplicas = pct("30%")
		})},
		"a percentage for a StatefulSet is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.TargetReference = &appsv1alpha1.TargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"}
			w.Spec.Subsets[0].MaxReplicas = pct("30%")
		}), want: []string{"FieldValueInvalid spec.subsets[0].maxReplicas"}},
		"a node selector operator that does not exist is named": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.Subsets[0].RequiredNodeSelectorTerm = &corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "Near"}}}
		}), want: []string{"FieldValueNotSupported spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].operator"}},
		"a toleration value with Exists is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.Subsets[0].Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
		}), want: []string{"FieldValueInvalid spec.subsets[0].tolerations[0].value"}},
		"a patch that does not fit a pod is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.Subsets[0].Patch = runtime.RawExtension{Raw: []byte(`{"spec":{"containers":"no"}}`)}
		}), want: []string{"FieldValueInvalid spec.subsets[0].patch"}},
		"adaptive without type Adaptive is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.ScheduleStrategy.Adaptive = &appsv1alpha1.AdaptiveWorkloadSpreadStrategy{}
		}), want: []string{"FieldValueInvalid spec.scheduleStrategy.type"}},
		"adaptive with a limited last subset is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{Type: "Adaptive", Adaptive: &appsv1alpha1.AdaptiveWorkloadSpreadStrategy{}}
			w.Spec.Subsets[1].MaxReplicas = ptr.To(intstr.FromInt32(1))
		}), want: []string{"FieldValueInvalid spec.scheduleStrategy.adaptive"}},
		"rescheduleCriticalSeconds above the bound is refused": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) {
			w.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{Type: "Adaptive",
				Adaptive: &appsv1alpha1.AdaptiveWorkloadSpreadStrategy{RescheduleCriticalSeconds: ptr.To(int32(296))}}
		}), want: []string{"FieldValueInvalid spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"}},
		"an unknown strategy type is named": {ws: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.ScheduleStrategy.Type = "Random" }),
			want: []string{"FieldValueNotSupported spec.scheduleStrategy.type"}},
		"changing the targetRef is forbidden": {ws: spreadOf(), old: spreadOf(func(w *appsv1alpha1.WorkloadSpread) { w.Spec.TargetReference.Name = "api" }),
			want: []string{"FieldValueForbidden spec.targetRef"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, webhooktest.TypedFields(validateWorkloadSpread(tc.ws, tc.old, tc.others, tc.custom))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
