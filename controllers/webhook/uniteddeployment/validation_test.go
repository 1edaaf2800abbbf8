package uniteddeployment

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// zones starts a UnitedDeployment of three CloneSet subsets, one per zone, that sets no
// replicas.
func zones() *kinds.UnitedDeploymentBuilder {
	return kinds.UnitedDeployment("web", "ns").Zones("zone-a", "zone-b", "zone-c")
}

// validUD is a valid UnitedDeployment of six replicas over the three zones.
func validUD() *appsv1alpha1.UnitedDeployment { return zones().Replicas(6).Obj() }

func with(f func(*appsv1alpha1.UnitedDeployment)) *appsv1alpha1.UnitedDeployment {
	ud := validUD()
	f(ud)
	return ud
}

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
			ud:         zones().Replicas(6).SubsetReplicas("zone-a", "4").SubsetReplicas("zone-b", "3").Obj(),
			wantFields: []string{"spec.topology.subsets"},
		},
		"subsets' replicas below spec.replicas are accepted while a subset takes the rest": {
			ud: zones().Replicas(6).SubsetReplicas("zone-a", "50%").Obj(),
		},
		"every subset setting replicas must add up to spec.replicas": {
			ud:         zones().Replicas(6).SubsetReplicas("zone-a", "1").SubsetReplicas("zone-b", "1").SubsetReplicas("zone-c", "1").Obj(),
			wantFields: []string{"spec.topology.subsets"},
		},
		"without spec.replicas every subset must set replicas": {
			ud:         zones().SubsetReplicas("zone-a", "1").Obj(),
			wantFields: []string{"spec.topology.subsets"},
		},
		"a percentage without spec.replicas is refused": {
			ud:         zones().SubsetReplicas("zone-a", "10%").SubsetReplicas("zone-b", "10%").SubsetReplicas("zone-c", "10%").Obj(),
			wantFields: []string{"spec.topology.subsets[0].replicas", "spec.topology.subsets[1].replicas", "spec.topology.subsets[2].replicas"},
		},
		"fixed replicas and elastic bounds together are refused": {
			ud:         zones().Replicas(6).SubsetReplicas("zone-a", "1").SubsetBounds("zone-b", "", "2").Obj(),
			wantFields: []string{"spec.topology.subsets"},
		},
		"elastic subsets that all set maxReplicas are refused": {
			ud:         zones().Replicas(6).SubsetBounds("zone-a", "", "2").SubsetBounds("zone-b", "", "2").SubsetBounds("zone-c", "", "2").Obj(),
			wantFields: []string{"spec.topology.subsets"},
		},
		"a subset's minReplicas above its maxReplicas is refused": {
			ud:         zones().Replicas(6).SubsetBounds("zone-a", "3", "2").Obj(),
			wantFields: []string{"spec.topology.subsets[0].minReplicas"},
		},
		"elastic subsets without spec.replicas are refused": {
			ud:         zones().SubsetBounds("zone-a", "", "2").Obj(),
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
	ud := zones().Replicas(6).SubsetBounds("zone-a", "", "2").Obj()
	setDefaults(ud, false)
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
