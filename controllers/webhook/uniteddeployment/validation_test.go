package uniteddeployment

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// validUD is a valid UnitedDeployment of three CloneSet subsets, one per zone.
func validUD() *appsv1alpha1.UnitedDeployment {
	ud := &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	ud.Spec.Replicas = ptr.To[int32](6)
	ud.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	ud.Spec.Template.CloneSetTemplate = &appsv1alpha1.CloneSetTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	ud.Spec.Template.CloneSetTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	ud.Spec.Template.CloneSetTemplate.Spec.Template.Labels = map[string]string{"app": "web"}
	for _, z := range []string{"zone-a", "zone-b", "zone-c"} {
		ud.Spec.Topology.Subsets = append(ud.Spec.Topology.Subsets, appsv1alpha1.Subset{Name: z,
			NodeSelectorTerm: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{z}}}}})
	}
	return ud
}

func with(f func(*appsv1alpha1.UnitedDeployment)) *appsv1alpha1.UnitedDeployment {
	ud := validUD()
	f(ud)
	return ud
}

func iv(v string) *intstr.IntOrString { x := intstr.Parse(v); return &x }

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		ud, old *appsv1alpha1.UnitedDeployment
		// wantFields are the fields the errors name; nil for none.
		wantFields []string
	}{
		"a UnitedDeployment of three zone subsets is valid": {ud: validUD()},
		"two subsets of one name are refused": {
			ud:         with(func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Topology.Subsets[1].Name = "zone-a" }),
			wantFields: []string{"spec.topology.subsets[1].name"},
		},
		"a subset name that is not a DNS label is refused": {
			ud:         with(func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Topology.Subsets[0].Name = "Zone_A" }),
			wantFields: []string{"spec.topology.subsets[0].name"},
		},
		"a subset without a name is refused": {
			ud:         with(func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Topology.Subsets[0].Name = "" }),
			wantFields: []string{"spec.topology.subsets[0].name"},
		},
		"a node selector requirement without values for In is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[0].NodeSelectorTerm.MatchExpressions[0].Values = nil
			}),
			wantFields: []string{"spec.topology.subsets[0].nodeSelectorTerm"},
		},
		"a toleration with an unknown operator is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[0].Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}}
			}),
			wantFields: []string{"spec.topology.subsets[0].tolerations[0].operator"},
		},
		"subsets' replicas above spec.replicas are refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[0].Replicas, u.Spec.Topology.Subsets[1].Replicas = iv("4"), iv("3")
			}),
			wantFields: []string{"spec.topology.subsets"},
		},
		"subsets' replicas below spec.replicas are accepted while a subset takes the rest": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Topology.Subsets[0].Replicas = iv("50%") }),
		},
		"every subset setting replicas must add up to spec.replicas": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				for i := range u.Spec.Topology.Subsets {
					u.Spec.Topology.Subsets[i].Replicas = iv("1")
				}
			}),
			wantFields: []string{"spec.topology.subsets"},
		},
		"without spec.replicas every subset must set replicas": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Replicas = nil
				u.Spec.Topology.Subsets[0].Replicas = iv("1")
			}),
			wantFields: []string{"spec.topology.subsets"},
		},
		"a percentage without spec.replicas is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Replicas = nil
				for i := range u.Spec.Topology.Subsets {
					u.Spec.Topology.Subsets[i].Replicas = iv("10%")
				}
			}),
			wantFields: []string{"spec.topology.subsets[0].replicas", "spec.topology.subsets[1].replicas", "spec.topology.subsets[2].replicas"},
		},
		"fixed replicas and elastic bounds together are refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[0].Replicas, u.Spec.Topology.Subsets[1].MaxReplicas = iv("1"), iv("2")
			}),
			wantFields: []string{"spec.topology.subsets"},
		},
		"elastic subsets that all set maxReplicas are refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				for i := range u.Spec.Topology.Subsets {
					u.Spec.Topology.Subsets[i].MaxReplicas = iv("2")
				}
			}),
			wantFields: []string{"spec.topology.subsets"},
		},
		"a subset's minReplicas above its maxReplicas is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[0].MinReplicas, u.Spec.Topology.Subsets[0].MaxReplicas = iv("3"), iv("2")
			}),
			wantFields: []string{"spec.topology.subsets[0].minReplicas"},
		},
		"elastic subsets without spec.replicas are refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Replicas = nil
				u.Spec.Topology.Subsets[0].MaxReplicas = iv("2")
			}),
			wantFields: []string{"spec.replicas"},
		},
		"a partition of a subset that does not exist is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.UpdateStrategy.ManualUpdate = &appsv1alpha1.ManualUpdate{Partitions: map[string]int32{"zone-x": 1}}
			}),
			wantFields: []string{"spec.updateStrategy.manualUpdate.partitions[zone-x]"},
		},
		"no template is refused": {
			ud:         with(func(u *appsv1alpha1.UnitedDeployment) { u.Spec.Template.CloneSetTemplate = nil }),
			wantFields: []string{"spec.template"},
		},
		"a StatefulSet template whose labels the selector does not match is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Template.CloneSetTemplate = nil
				u.Spec.Template.StatefulSetTemplate = &appsv1alpha1.StatefulSetTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}}
				u.Spec.Template.StatefulSetTemplate.Spec.Template.Labels = map[string]string{"app": "web"}
			}),
			wantFields: []string{"spec.template.statefulSetTemplate.metadata.labels"},
		},
		"a StatefulSet template that sets replicas is refused": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Template.CloneSetTemplate = nil
				u.Spec.Template.StatefulSetTemplate = &appsv1alpha1.StatefulSetTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
				u.Spec.Template.StatefulSetTemplate.Spec.Template.Labels = map[string]string{"app": "web"}
				u.Spec.Template.StatefulSetTemplate.Spec.Replicas = ptr.To[int32](3)
			}),
			wantFields: []string{"spec.template.statefulSetTemplate.spec.replicas"},
		},
		"an Advanced StatefulSet template with the schema's replicas and partition defaults is valid": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Template.CloneSetTemplate = nil
				u.Spec.Template.AdvancedStatefulSetTemplate = &appsv1alpha1.AdvancedStatefulSetTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
				s := &u.Spec.Template.AdvancedStatefulSetTemplate.Spec
				s.Template.Labels = map[string]string{"app": "web"}
				s.Replicas = ptr.To[int32](1)
				s.UpdateStrategy = appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1beta1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}}
			}),
		},
		"a CloneSet template is taken as it is, whatever its selector": {
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Template.CloneSetTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"other": "x"}}
			}),
		},
		"a change of the CloneSet template's selector is accepted": {
			old: validUD(),
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Template.CloneSetTemplate.Spec.Selector.MatchLabels["tier"] = "front"
			}),
		},
		"a change of the selector is refused": {
			old: validUD(),
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Selector.MatchLabels["tier"] = "front"
				u.Spec.Template.CloneSetTemplate.Labels["tier"] = "front"
			}),
			wantFields: []string{"spec.selector"},
		},
		"a change of an existing subset's nodeSelectorTerm is refused": {
			old: validUD(),
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[0].NodeSelectorTerm.MatchExpressions[0].Values = []string{"zone-z"}
			}),
			wantFields: []string{"spec.topology.subsets[0].nodeSelectorTerm"},
		},
		"a change of an existing subset's tolerations is refused": {
			old: validUD(),
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Topology.Subsets[2].Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
			}),
			wantFields: []string{"spec.topology.subsets[2].tolerations"},
		},
		"a new subset may be added and replicas changed": {
			old: validUD(),
			ud: with(func(u *appsv1alpha1.UnitedDeployment) {
				u.Spec.Replicas = ptr.To[int32](9)
				u.Spec.Topology.Subsets = append(u.Spec.Topology.Subsets, appsv1alpha1.Subset{Name: "zone-d"})
			}),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validate(c.ud, c.old)
			for _, e := range errs {
				if strings.TrimSpace(e.Detail) == "" && e.Type != "FieldValueDuplicate" {
					t.Errorf("error on %s says nothing of what would be valid: %v", e.Field, e)
				}
			}
			webhooktest.AssertFields(t, errs, c.wantFields)
		})
	}
}

func TestDefaults(t *testing.T) {
	ud := validUD()
	ud.Spec.Topology.Subsets[0].MaxReplicas = iv("2")
	setDefaults(ud)
	got := struct {
		History  int32
		Strategy appsv1alpha1.UpdateStrategyType
		Manual   bool
		Min      []string
	}{*ud.Spec.RevisionHistoryLimit, ud.Spec.UpdateStrategy.Type, ud.Spec.UpdateStrategy.ManualUpdate != nil, nil}
	for _, s := range ud.Spec.Topology.Subsets {
		got.Min = append(got.Min, s.MinReplicas.String())
	}
	want := got
	want.History, want.Strategy, want.Manual, want.Min = 10, appsv1alpha1.ManualUpdateStrategyType, true, []string{"0", "0", "0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

func TestDeletionProtection(t *testing.T) {
	ud := validUD()
	ud.Labels = map[string]string{appsv1alpha1.DeletionProtectionKey: appsv1alpha1.DeletionProtectionTypeCascading}
	if validateDeletion(ud) == nil {
		t.Error("a Cascading-protected UnitedDeployment with replicas was let go")
	}
	ud.Spec.Replicas = ptr.To[int32](0)
	if err := validateDeletion(ud); err != nil {
		t.Errorf("a Cascading-protected UnitedDeployment at 0 replicas was refused: %v", err)
	}
	ud.Labels[appsv1alpha1.DeletionProtectionKey] = appsv1alpha1.DeletionProtectionTypeAlways
	if validateDeletion(ud) == nil {
		t.Error("an Always-protected UnitedDeployment was let go")
	}
}
