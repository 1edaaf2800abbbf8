package cloneset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

const testUID = types.UID("cs-uid")

// valid is a defaulted CloneSet that passes every rule; rows change one thing.
func valid() *appsv1alpha1.CloneSet {
	cs := kinds.CloneSet("web", "ns").Replicas(5).Obj()
	cs.UID = testUID
	setDefaults(cs, true)
	return cs
}

func ownedPod(name string, uid types.UID) *corev1.Pod {
	return builder.Pod(name, "ns").OwnedBy(metav1.OwnerReference{
		APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet", Name: "web", UID: uid,
		Controller: ptr.To(true),
	}).Obj()
}

func TestValidateCloneSetCreate(t *testing.T) {
	terminating := ownedPod("web-terminating", testUID)
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	terminating.Finalizers = []string{"example.com/hold"}

	tests := []struct {
		name   string
		mutate func(*appsv1alpha1.CloneSet)
		pods   []*corev1.Pod
		want   []string
	}{
		{name: "a defaulted CloneSet is valid", mutate: func(*appsv1alpha1.CloneSet) {}},
		{name: "zero replicas are valid", mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](0) }},
		{
			name:   "a name that is not a DNS subdomain is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Name = "Web_1" },
			want:   []string{"FieldValueInvalid metadata.name"},
		},
		{
			name:   "a name of 52 characters is valid: its pods' revision label, <name>-<hash>, fits 63 characters",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Name = strings.Repeat("w", 52) },
		},
		{
			name:   "a name of 53 characters is refused: its pods' revision label would pass 63 characters",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Name = strings.Repeat("w", 53) },
			want:   []string{"FieldValueInvalid metadata.name"},
		},
		{
			name:   "a name of 253 characters, a valid DNS subdomain, is refused for its length",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Name = strings.Repeat("w", 253) },
			want:   []string{"FieldValueInvalid metadata.name"},
		},
		{
			name:   "negative replicas are refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](-1) },
			want:   []string{"FieldValueInvalid spec.replicas"},
		},
		{
			name:   "a missing selector is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Selector = nil },
			want:   []string{"FieldValueRequired spec.selector"},
		},
		{
			name:   "an empty selector is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Selector = &metav1.LabelSelector{} },
			want:   []string{"FieldValueInvalid spec.selector"},
		},
		{
			name: "a selector with an invalid operator is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
			},
			want: []string{"FieldValueInvalid spec.selector.matchExpressions[0].operator", "FieldValueInvalid spec.selector"},
		},
		{
			name:   "a selector that does not match the template labels is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Labels = map[string]string{"app": "other"} },
			want:   []string{"FieldValueInvalid spec.template.metadata.labels"},
		},
		{
			name:   "an invalid template label is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Labels["bad key!"] = "x" },
			want:   []string{"FieldValueInvalid spec.template.metadata.labels"},
		},
		{
			name:   "restartPolicy other than Always is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want:   []string{"FieldValueNotSupported spec.template.spec.restartPolicy"},
		},
		{
			name:   "activeDeadlineSeconds is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			want:   []string{"FieldValueForbidden spec.template.spec.activeDeadlineSeconds"},
		},
		{
			name:   "a template without containers is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers = nil },
			want:   []string{"FieldValueRequired spec.template.spec.containers"},
		},
		{
			name: "two containers of the same name are refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Template.Spec.Containers = append(cs.Spec.Template.Spec.Containers, cs.Spec.Template.Spec.Containers[0])
			},
			want: []string{"FieldValueDuplicate spec.template.spec.containers[1].name"},
		},
		{
			name:   "a container name that is not a DNS label is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Name = "Main" },
			want:   []string{"FieldValueInvalid spec.template.spec.containers[0].name"},
		},
		{
			name:   "a container without an image is valid, as in any pod template",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = "" },
		},
		{
			name: "two volumes of the same name are refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				v := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
				cs.Spec.Template.Spec.Volumes = []corev1.Volume{v, v}
			},
			want: []string{"FieldValueDuplicate spec.template.spec.volumes[1].name"},
		},
		{
			name: "a volume mount of an unknown volume is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			},
			want: []string{"FieldValueNotFound spec.template.spec.containers[0].volumeMounts[0].name"},
		},
		{
			name: "a volume mount of a volume claim template is valid",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
				cs.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			},
		},
		{
			name: "an unknown update strategy type is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = "Rolling"
			},
			want: []string{"FieldValueNotSupported spec.updateStrategy.type"},
		},
		{
			name:   "a negative partition is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(-1)) },
			want:   []string{"FieldValueInvalid spec.updateStrategy.partition"},
		},
		{
			name:   "a partition that is neither a number nor a percentage is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromString("half")) },
			want:   []string{"FieldValueInvalid spec.updateStrategy.partition"},
		},
		{
			name:   "a percentage partition is valid",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromString("40%")) },
		},
		{
			name: "a maxUnavailable that is not a percentage is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("20"))
			},
			// Unparsable, it counts as 0, which with maxSurge 0 also stalls the update.
			want: []string{"FieldValueInvalid spec.updateStrategy.maxUnavailable", "FieldValueInvalid spec.updateStrategy.maxUnavailable"},
		},
		{
			name: "a negative maxSurge is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxSurge = ptr.To(intstr.FromString("-10%"))
			},
			want: []string{"FieldValueInvalid spec.updateStrategy.maxSurge"},
		},
		{
			name: "maxSurge above 0 with InPlaceOnly is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				cs.Spec.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(1))
			},
			want: []string{"FieldValueInvalid spec.updateStrategy.maxSurge"},
		},
		{
			name: "maxSurge above 0 with InPlaceIfPossible is valid",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
				cs.Spec.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(1))
			},
		},
		{
			name: "maxUnavailable and maxSurge both 0 are refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			},
			want: []string{"FieldValueInvalid spec.updateStrategy.maxUnavailable"},
		},
		{
			name: "a maxUnavailable above 100% is valid",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("120%"))
			},
		},
		{
			name: "percentages that round up to one pod are valid",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("1%"))
			},
		},
		{
			name: "maxUnavailable 0 with maxSurge 1 is valid",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(0))
				cs.Spec.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(1))
			},
		},
		{
			name: "maxUnavailable and maxSurge both 0 are valid with 0 replicas",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Replicas = ptr.To[int32](0)
				cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			},
		},
		{
			name: "a scale maxUnavailable that is not a percentage is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.ScaleStrategy.MaxUnavailable = ptr.To(intstr.FromString("x%"))
			},
			want: []string{"FieldValueInvalid spec.scaleStrategy.maxUnavailable"},
		},
		{
			name: "weight and order priorities together are refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
					OrderPriority:  []appspub.UpdatePriorityOrderTerm{{OrderedKey: "rank"}},
					WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}},
				}
			},
			want: []string{"FieldValueForbidden spec.updateStrategy.priorityStrategy"},
		},
		{
			name: "a priority weight above 100 is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
					WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 101, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}},
				}
			},
			want: []string{"FieldValueInvalid spec.updateStrategy.priorityStrategy.weightPriority[0].weight"},
		},
		{
			name: "a priority weight with an empty selector is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
					WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 50}},
				}
			},
			want: []string{"FieldValueRequired spec.updateStrategy.priorityStrategy.weightPriority[0].matchSelector"},
		},
		{
			name: "a priority order with an empty key is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
					OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: ""}},
				}
			},
			want: []string{"FieldValueRequired spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey"},
		},
		{
			name: "a scatter term with an empty key is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.ScatterStrategy = appsv1alpha1.UpdateScatterStrategy{{Key: "", Value: "a"}}
			},
			want: []string{"FieldValueInvalid spec.updateStrategy.scatterStrategy"},
		},
		{
			name: "a scatter term listed twice is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.ScatterStrategy = appsv1alpha1.UpdateScatterStrategy{{Key: "zone", Value: "a"}, {Key: "zone", Value: "a"}}
			},
			want: []string{"FieldValueInvalid spec.updateStrategy.scatterStrategy"},
		},
		{
			name: "a lifecycle label handler with an invalid key is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{"bad key": "true"}}}
			},
			want: []string{"FieldValueInvalid spec.lifecycle.preDelete.labelsHandler"},
		},
		{
			name: "a lifecycle finalizer handler that is not a qualified name is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Lifecycle = &appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/a/b"}}}
			},
			want: []string{"FieldValueInvalid spec.lifecycle.inPlaceUpdate.finalizersHandler[0]"},
		},
		{
			name: "lifecycle hooks with valid handlers are valid",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Lifecycle = &appspub.Lifecycle{
					PreNormal: &appspub.LifecycleHook{LabelsHandler: map[string]string{"example.com/ready": "true"}, MarkPodNotReady: true},
					PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/drain"}},
				}
			},
		},
		{
			name:   "podsToDelete listing a pod twice is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-a", "web-a"} },
			pods:   []*corev1.Pod{ownedPod("web-a", testUID)},
			want:   []string{"FieldValueInvalid spec.scaleStrategy.podsToDelete"},
		},
		{
			name:   "podsToDelete naming a missing pod is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-gone"} },
			want:   []string{"FieldValueInvalid spec.scaleStrategy.podsToDelete"},
		},
		{
			name:   "podsToDelete naming a pod of another owner is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-foreign"} },
			pods:   []*corev1.Pod{ownedPod("web-foreign", "other-uid")},
			want:   []string{"FieldValueInvalid spec.scaleStrategy.podsToDelete"},
		},
		{
			name:   "podsToDelete naming a pod without a controller is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{"bare"} },
			pods:   []*corev1.Pod{builder.Pod("bare", "ns").Obj()},
			want:   []string{"FieldValueInvalid spec.scaleStrategy.podsToDelete"},
		},
		{
			name:   "podsToDelete naming a terminating pod is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-terminating"} },
			pods:   []*corev1.Pod{terminating},
			want:   []string{"FieldValueInvalid spec.scaleStrategy.podsToDelete"},
		},
		{
			name:   "podsToDelete naming pods of this CloneSet is valid",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-a", "web-b"} },
			pods:   []*corev1.Pod{ownedPod("web-a", testUID), ownedPod("web-b", testUID)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := valid()
			tt.mutate(cs)
			got := webhooktest.TypedFields(validateCloneSet(cs, nil, rules{}, tt.pods...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCloneSetUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*appsv1alpha1.CloneSet)
		mutate func(*appsv1alpha1.CloneSet)
		pods   []*corev1.Pod
		want   []string
	}{
		{
			name: "replicas, template, strategies, limits, minReadySeconds, lifecycle and claims may change",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Replicas = ptr.To[int32](7)
				cs.Spec.Template.Spec.Containers[0].Image = "registry.example.com/app:2"
				cs.Spec.Template.Annotations = map[string]string{"a": "b"}
				cs.Spec.UpdateStrategy.Paused = true
				cs.Spec.ScaleStrategy.DisablePVCReuse = true
				cs.Spec.RevisionHistoryLimit = ptr.To[int32](3)
				cs.Spec.MinReadySeconds = 5
				cs.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/x"}}}
				cs.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
			},
		},
		{
			name: "changing the selector is refused",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Selector.MatchLabels["tier"] = "web"
				cs.Spec.Template.Labels["tier"] = "web"
			},
			want: []string{"FieldValueForbidden spec"},
		},
		{
			name: "with InPlaceOnly, changing only images is valid",
			old: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
			},
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				cs.Spec.Template.Spec.Containers[0].Image = "registry.example.com/app:2"
				cs.Spec.Template.Labels["version"] = "2"
			},
		},
		{
			name: "with InPlaceOnly, changing a container's env is refused",
			old: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
			},
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
			},
			want: []string{"FieldValueForbidden spec.template.spec.containers[0]"},
		},
		{
			name: "with InPlaceOnly, adding a container is refused",
			old: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
			},
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				c := cs.Spec.Template.Spec.Containers[0]
				c.Name = "sidecar"
				cs.Spec.Template.Spec.Containers = append(cs.Spec.Template.Spec.Containers, c)
			},
			want: []string{"FieldValueForbidden spec.template.spec.containers"},
		},
		{
			name: "with InPlaceOnly, changing a pod-level field is refused",
			old: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
			},
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				cs.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			},
			want: []string{"FieldValueForbidden spec.template.spec"},
		},
		{
			name:   "an existing CloneSet with a name too long for its pods may still be scaled, to 0 for instance",
			old:    func(cs *appsv1alpha1.CloneSet) { cs.Name = strings.Repeat("w", 60) },
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](0) },
		},
		{
			name: "podsToDelete already listed are not checked again",
			old: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-gone"}
			},
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-gone", "web-a"}
			},
			pods: []*corev1.Pod{ownedPod("web-a", testUID)},
		},
		{
			name: "a newly listed pod of another owner is refused on update",
			old: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-a"}
			},
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-a", "web-foreign"}
			},
			pods: []*corev1.Pod{ownedPod("web-foreign", "other-uid")},
			want: []string{"FieldValueInvalid spec.scaleStrategy.podsToDelete"},
		},
		{
			name:   "the update is also checked like a create",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](-3) },
			want:   []string{"FieldValueInvalid spec.replicas"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := valid()
			old.ResourceVersion = "1"
			if tt.old != nil {
				tt.old(old)
			}
			cs := old.DeepCopy()
			tt.mutate(cs)
			got := webhooktest.TypedFields(validateCloneSet(cs, old, rules{}, tt.pods...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidationMessagesSayWhatIsValid(t *testing.T) {
	cs := valid()
	cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	got := validateCloneSet(cs, nil, rules{}).ToAggregate().Error()
	want := "spec.updateStrategy.maxUnavailable: Invalid value: \"0\": maxUnavailable and maxSurge must not both come to less than 1 pod of 5 replicas"
	if !strings.Contains(got, want) {
		t.Errorf("message %q does not contain %q", got, want)
	}
}

func TestNameLengthLimitFollowsTheRevisionLabel(t *testing.T) {
	tests := map[string]struct {
		rules   rules
		name    string
		wantMsg string
	}{
		"52 characters fit the revision label": {name: strings.Repeat("w", 52)},
		"53 characters do not, and the message names the limit and why": {
			name:    strings.Repeat("w", 53),
			wantMsg: "metadata.name: Invalid value: \"" + strings.Repeat("w", 53) + "\": must be no more than 52 characters: each pod's controller-revision-hash label holds <name>-<revision hash of up to 10 characters>, and a label value is at most 63 characters",
		},
		"with CloneSetShortHash 247 characters fit the pod name": {rules: rules{shortHash: true}, name: strings.Repeat("w", 247)},
		"with CloneSetShortHash 248 characters do not": {
			rules: rules{shortHash: true}, name: strings.Repeat("w", 248),
			wantMsg: "metadata.name: Invalid value: \"" + strings.Repeat("w", 248) + "\": must be no more than 247 characters: each pod is named <name>-<5-character instance ID>, and a pod name is at most 253 characters",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := validateNameLength(tt.name, tt.rules, field.NewPath("metadata", "name")).ToAggregate()
			gotMsg := ""
			if got != nil {
				gotMsg = got.Error()
			}
			if diff := cmp.Diff(tt.wantMsg, gotMsg); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLongestRevisionHashIsWhatHashMakes checks the hash length the name limit assumes against
// the hashes revision.Hash makes: none is longer, and the longest occur.
func TestLongestRevisionHashIsWhatHashMakes(t *testing.T) {
	longest := 0
	for i := range 2000 {
		longest = max(longest, len(revision.Hash([]byte(fmt.Sprintf("template-%d", i)), nil)))
	}
	if longest != maxRevisionHashLength {
		t.Errorf("longest hash of 2000 templates is %d characters; the name limit assumes %d", longest, maxRevisionHashLength)
	}
}

func TestValidateDeletion(t *testing.T) {
	tests := []struct {
		name     string
		label    string
		replicas int32
		wantErr  bool
	}{
		{name: "an unlabelled CloneSet may be deleted", replicas: 3},
		{name: "Always refuses deletion", label: appsv1alpha1.DeletionProtectionTypeAlways, replicas: 0, wantErr: true},
		{name: "Cascading refuses deletion while replicas are above 0", label: appsv1alpha1.DeletionProtectionTypeCascading, replicas: 2, wantErr: true},
		{name: "Cascading allows deletion at 0 replicas", label: appsv1alpha1.DeletionProtectionTypeCascading, replicas: 0},
		{name: "an unknown label value does not protect", label: "Sometimes", replicas: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := valid()
			cs.Spec.Replicas = ptr.To(tt.replicas)
			if tt.label != "" {
				cs.Labels = map[string]string{appsv1alpha1.DeletionProtectionKey: tt.label}
			}
			if diff := cmp.Diff(tt.wantErr, validateDeletion(cs) != nil); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
		})
	}
}
