package daemonset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// validDaemonSet is a defaulted DaemonSet every rule accepts.
func validDaemonSet() *appsv1alpha1.DaemonSet {
	ds := &appsv1alpha1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"},
		Spec: appsv1alpha1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "agent:1"}}},
			},
		},
	}
	setDefaults(ds)
	return ds
}

func TestValidateDaemonSet(t *testing.T) {
	tests := []webhooktest.Case[*appsv1alpha1.DaemonSet]{
		{Name: "a defaulted DaemonSet is valid", Change: func(*appsv1alpha1.DaemonSet) {}},
		{Name: "a selector that does not match the template labels is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Labels = map[string]string{"app": "other"}
		}, WantField: "spec.template.metadata.labels", WantMsg: "must match spec.selector"},
		{Name: "an empty selector is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Selector = &metav1.LabelSelector{}
		}, WantField: "spec.selector", WantMsg: "must not be empty"},
		{Name: "a restartPolicy other than Always is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, WantField: "spec.template.spec.restartPolicy", WantMsg: `supported values: "Always"`},
		{Name: "activeDeadlineSeconds is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
		}, WantField: "spec.template.spec.activeDeadlineSeconds", WantMsg: "must be unset"},
		{Name: "a read-write persistent disk is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "x"}}}}
		}, WantField: "spec.template.spec.volumes[0].gcePersistentDisk.readOnly", WantMsg: "must be true"},
		{Name: "maxSurge next to a non-zero maxUnavailable is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(1))
		}, WantField: "spec.updateStrategy.rollingUpdate.maxSurge", WantMsg: "set maxUnavailable to 0 to surge"},
		{Name: "maxUnavailable and maxSurge both 0 are refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("0%"))
		}, WantField: "spec.updateStrategy.rollingUpdate.maxUnavailable", WantMsg: "cannot be 0 when maxSurge is 0"},
		{Name: "maxUnavailable above 100% is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("150%"))
		}, WantField: "spec.updateStrategy.rollingUpdate.maxUnavailable", WantMsg: "from 0% to 100%"},
		{Name: "maxUnavailable that is no number is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("half"))
		}, WantField: "spec.updateStrategy.rollingUpdate.maxUnavailable", WantMsg: "such as 10%"},
		{Name: "a surge with InPlaceIfPossible is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ru := ds.Spec.UpdateStrategy.RollingUpdate
			ru.Type, ru.MaxUnavailable, ru.MaxSurge = appsv1alpha1.InplaceRollingUpdateType, ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromInt32(1))
		}, WantField: "spec.updateStrategy.rollingUpdate.maxSurge", WantMsg: "must be 0 for the InPlaceIfPossible type"},
		{Name: "an unknown rollingUpdateType is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.Type = "Fast"
		}, WantField: "spec.updateStrategy.rollingUpdate.rollingUpdateType", WantMsg: `"InPlaceIfPossible"`},
		{Name: "an unknown update strategy type is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.Type = "Recreate"
		}, WantField: "spec.updateStrategy.type", WantMsg: `"OnDelete"`},
		{Name: "RollingUpdate without its rollingUpdate is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate = nil
		}, WantField: "spec.updateStrategy.rollingUpdate", WantMsg: "Required"},
		{Name: "a negative partition is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](-1)
		}, WantField: "spec.updateStrategy.rollingUpdate.partition", WantMsg: "0 or more"},
		{Name: "a negative burstReplicas is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.BurstReplicas = ptr.To(intstr.FromInt32(-3))
		}, WantField: "spec.burstReplicas", WantMsg: "0 or more"},
		{Name: "an inPlaceUpdate hook is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Lifecycle = &appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/x"}}}
		}, WantField: "spec.lifecycle.inPlaceUpdate", WantMsg: "use preDelete or preNormal"},
		{Name: "a preDelete hook with a finalizer that is no name is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"not a name"}}}
		}, WantField: "spec.lifecycle.preDelete.finalizersHandler[0]", WantMsg: "must consist of alphanumeric characters"},
		{Name: "a negative minReadySeconds is refused", Change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.MinReadySeconds = -1
		}, WantField: "spec.minReadySeconds", WantMsg: "0 or more seconds"},
	}
	webhooktest.RunCases(t, tests, validDaemonSet, func(ds *appsv1alpha1.DaemonSet) field.ErrorList { return validateDaemonSet(ds, nil) })
}

func TestValidateDaemonSetUpdateKeepsTheSelector(t *testing.T) {
	old := validDaemonSet()
	old.ResourceVersion = "1"
	ds := validDaemonSet()
	ds.ResourceVersion = "1"
	ds.Spec.Selector.MatchLabels["tier"] = "node"
	ds.Spec.Template.Labels["tier"] = "node"
	errs := validateDaemonSet(ds, old)
	if len(errs) != 1 || errs[0].Field != "spec.selector" || !strings.Contains(errs[0].Error(), "immutable") {
		t.Fatalf("want spec.selector refused as immutable, got %v", errs)
	}
	ds = validDaemonSet()
	ds.ResourceVersion = "1"
	ds.Spec.Template.Spec.Containers[0].Image = "agent:2"
	if errs := validateDaemonSet(ds, old); len(errs) > 0 {
		t.Fatalf("a new image is a valid update, got %v", errs)
	}
}
