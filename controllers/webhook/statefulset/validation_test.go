package statefulset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// valid is a defaulted StatefulSet that passes validation.
func valid(f ...func(*appsv1beta1.StatefulSet)) *appsv1beta1.StatefulSet {
	set := kinds.StatefulSet("web", "ns").Replicas(3).Image("nginx:1").Obj()
	set.ResourceVersion = "1"
	setDefaults(&set.Spec, features.NewGate(), false)
	for _, fn := range f {
		fn(set)
	}
	return set
}

func TestValidateStatefulSet(t *testing.T) {
	parallel := func(s *appsv1beta1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }
	policy := func(p appsv1beta1.PodUpdateStrategyType) func(*appsv1beta1.StatefulSet) {
		return func(s *appsv1beta1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy = p }
	}
	gate := func(s *appsv1beta1.StatefulSet) {
		s.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	}
	tests := map[string]struct {
		set, old   *appsv1beta1.StatefulSet
		wantFields []string
	}{
		"a defaulted StatefulSet is valid": {set: valid()},
		"InPlaceIfPossible without the InPlaceUpdateReady readiness gate is refused": {
			set: valid(policy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType)), wantFields: []string{"spec.template.spec.readinessGates"},
		},
		"InPlaceOnly without the InPlaceUpdateReady readiness gate is refused": {
			set: valid(policy(appsv1beta1.InPlaceOnlyPodUpdateStrategyType)), wantFields: []string{"spec.template.spec.readinessGates"},
		},
		"InPlaceIfPossible with the readiness gate is valid": {set: valid(policy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType), gate)},
		"an unknown podUpdatePolicy is refused": {
			set: valid(policy("Sometimes")), wantFields: []string{"spec.updateStrategy.rollingUpdate.podUpdatePolicy"},
		},
		"maxUnavailable above 1 needs Parallel": {
			set: valid(func(s *appsv1beta1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
			}),
			wantFields: []string{"spec.updateStrategy.rollingUpdate.maxUnavailable"},
		},
		"maxUnavailable 0 is refused": {
			set: valid(parallel, func(s *appsv1beta1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			}),
			wantFields: []string{"spec.updateStrategy.rollingUpdate.maxUnavailable"},
		},
		"a percentage maxUnavailable works with Parallel": {
			set: valid(parallel, func(s *appsv1beta1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("50%"))
			}),
		},
		"minReadySeconds above 300 is refused": {
			set: valid(func(s *appsv1beta1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate.MinReadySeconds = ptr.To[int32](301)
			}),
			wantFields: []string{"spec.updateStrategy.rollingUpdate.minReadySeconds"},
		},
		"a negative partition is refused": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](-1) }),
			wantFields: []string{"spec.updateStrategy.rollingUpdate.partition"},
		},
		"unorderedUpdate needs Parallel": {
			set: valid(func(s *appsv1beta1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate.UnorderedUpdate = &appsv1beta1.UnorderedUpdateStrategy{}
			}),
			wantFields: []string{"spec.updateStrategy.rollingUpdate.unorderedUpdate"},
		},
		"rollingUpdate with OnDelete is refused": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }),
			wantFields: []string{"spec.updateStrategy.rollingUpdate"},
		},
		"scaleStrategy.maxUnavailable needs Parallel": {
			set: valid(func(s *appsv1beta1.StatefulSet) {
				s.Spec.ScaleStrategy = &appsv1beta1.StatefulSetScaleStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(2))}
			}),
			wantFields: []string{"spec.scaleStrategy.maxUnavailable"},
		},
		"a bad reserveOrdinals entry is named by its index": {
			set: valid(func(s *appsv1beta1.StatefulSet) {
				s.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(1), intstr.FromString("5-2")}
			}),
			wantFields: []string{"spec.reserveOrdinals[1]"},
		},
		"an unknown retention policy is refused": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = "Keep" }),
			wantFields: []string{"spec.persistentVolumeClaimRetentionPolicy.whenScaled"},
		},
		"a template that the selector does not match is refused": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Spec.Template.Labels = map[string]string{"app": "other"} }),
			wantFields: []string{"spec.template.metadata.labels"},
		},
		"restartPolicy other than Always is refused": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }),
			wantFields: []string{"spec.template.spec.restartPolicy"},
		},
		"a name that is not a DNS label is refused": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Name = "web.v1" }),
			wantFields: []string{"metadata.name"},
		},
		"a name of 52 characters is accepted": {
			set: valid(func(s *appsv1beta1.StatefulSet) { s.Name = strings.Repeat("a", 52) }),
		},
		"a name of 53 characters is refused: the pods' revision label would not fit": {
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Name = strings.Repeat("a", 53) }),
			wantFields: []string{"metadata.name"},
		},
		"replicas, template, updateStrategy, reserveOrdinals and the retention policy may change": {
			old: valid(),
			set: valid(func(s *appsv1beta1.StatefulSet) {
				s.Spec.Replicas = ptr.To[int32](5)
				s.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				s.Spec.UpdateStrategy.RollingUpdate.Paused = true
				s.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(0)}
				s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType
			}),
		},
		"serviceName may not change": {
			old:        valid(),
			set:        valid(func(s *appsv1beta1.StatefulSet) { s.Spec.ServiceName = "other" }),
			wantFields: []string{"spec"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			webhooktest.AssertFields(t, validateStatefulSet(tt.set, tt.old), tt.wantFields)
		})
	}
}

func TestSetDefaults(t *testing.T) {
	set := kinds.StatefulSet("web", "ns").Obj()
	set.Spec.Replicas, set.Spec.PodManagementPolicy = nil, ""
	setDefaults(&set.Spec, features.NewGate(), false)
	want := appsv1beta1.StatefulSetSpec{
		Replicas:            ptr.To[int32](1),
		PodManagementPolicy: appsv1.OrderedReadyPodManagement,
		UpdateStrategy: appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1beta1.RollingUpdateStatefulSetStrategy{
			Partition: ptr.To[int32](0), MaxUnavailable: ptr.To(intstr.FromInt32(1)), PodUpdatePolicy: appsv1beta1.RecreatePodUpdateStrategyType, MinReadySeconds: ptr.To[int32](0),
		}},
		RevisionHistoryLimit: ptr.To[int32](10),
		PersistentVolumeClaimRetentionPolicy: &appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType,
		},
	}
	got := set.Spec
	got.Selector, got.Template, got.ServiceName = nil, corev1.PodTemplateSpec{}, ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	// As in 1.8, the InPlaceUpdateReady gate is not added to the template: validation asks the
	// user for it instead.
	in := kinds.StatefulSet("web", "ns").PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).Obj()
	setDefaults(&in.Spec, features.NewGate(), false)
	if len(in.Spec.Template.Spec.ReadinessGates) != 0 {
		t.Errorf("defaulting added readiness gates %v; 1.8 leaves the template alone", in.Spec.Template.Spec.ReadinessGates)
	}
}
