package daemonset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
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
	tests := []struct {
		name   string
		change func(ds *appsv1alpha1.DaemonSet)
		// wantField is the field the one error names, "" for a valid DaemonSet; wantMsg is part
		// of its message.
		wantField, wantMsg string
	}{
		{name: "a defaulted DaemonSet is valid", change: func(*appsv1alpha1.DaemonSet) {}},
		{name: "a selector that does not match the template labels is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Labels = map[string]string{"app": "other"}
		}, wantField: "spec.template.metadata.labels", wantMsg: "must match spec.selector"},
		{name: "an empty selector is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Selector = &metav1.LabelSelector{}
		}, wantField: "spec.selector", wantMsg: "must not be empty"},
		{name: "a restartPolicy other than Always is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, wantField: "spec.template.spec.restartPolicy", wantMsg: `supported values: "Always"`},
		{name: "activeDeadlineSeconds is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
		}, wantField: "spec.template.spec.activeDeadlineSeconds", wantMsg: "must be unset"},
		{name: "a read-write persistent disk is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "x"}}}}
		}, wantField: "spec.template.spec.volumes[0].gcePersistentDisk.readOnly", wantMsg: "must be true"},
		{name: "maxSurge next to a non-zero maxUnavailable is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(1))
		}, wantField: "spec.updateStrategy.rollingUpdate.maxSurge", wantMsg: "set maxUnavailable to 0 to surge"},
		{name: "maxUnavailable and maxSurge both 0 are refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("0%"))
		}, wantField: "spec.updateStrategy.rollingUpdate.maxUnavailable", wantMsg: "cannot be 0 when maxSurge is 0"},
		{name: "maxUnavailable above 100% is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("150%"))
		}, wantField: "spec.updateStrategy.rollingUpdate.maxUnavailable", wantMsg: "from 0% to 100%"},
		{name: "maxUnavailable that is no number is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("half"))
		}, wantField: "spec.updateStrategy.rollingUpdate.maxUnavailable", wantMsg: "such as 10%"},
		{name: "a surge with InPlaceIfPossible is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ru := ds.Spec.UpdateStrategy.RollingUpdate
			ru.Type, ru.MaxUnavailable, ru.MaxSurge = appsv1alpha1.InplaceRollingUpdateType, ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromInt32(1))
		}, wantField: "spec.updateStrategy.rollingUpdate.maxSurge", wantMsg: "must be 0 for the InPlaceIfPossible type"},
		{name: "an unknown rollingUpdateType is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.Type = "Fast"
		}, wantField: "spec.updateStrategy.rollingUpdate.rollingUpdateType", wantMsg: `"InPlaceIfPossible"`},
		{name: "an unknown update strategy type is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.Type = "Recreate"
		}, wantField: "spec.updateStrategy.type", wantMsg: `"OnDelete"`},
		{name: "RollingUpdate without its rollingUpdate is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate = nil
		}, wantField: "spec.updateStrategy.rollingUpdate", wantMsg: "Required"},
		{name: "a negative partition is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](-1)
		}, wantField: "spec.updateStrategy.rollingUpdate.partition", wantMsg: "0 or more"},
		{name: "a negative burstReplicas is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.BurstReplicas = ptr.To(intstr.FromInt32(-3))
		}, wantField: "spec.burstReplicas", wantMsg: "0 or more"},
		{name: "an inPlaceUpdate hook is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Lifecycle = &appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/x"}}}
		}, wantField: "spec.lifecycle.inPlaceUpdate", wantMsg: "use preDelete or preNormal"},
		{name: "a preDelete hook with a finalizer that is no name is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"not a name"}}}
		}, wantField: "spec.lifecycle.preDelete.finalizersHandler[0]", wantMsg: "must consist of alphanumeric characters"},
		{name: "a negative minReadySeconds is refused", change: func(ds *appsv1alpha1.DaemonSet) {
			ds.Spec.MinReadySeconds = -1
		}, wantField: "spec.minReadySeconds", wantMsg: "0 or more seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := validDaemonSet()
			tt.change(ds)
			errs := validateDaemonSet(ds, nil)
			if tt.wantField == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want one error on %s, got %v", tt.wantField, errs)
			}
			if errs[0].Field != tt.wantField || !strings.Contains(errs[0].Error(), tt.wantMsg) {
				t.Errorf("got %q on %s, want %q on %s", errs[0].Error(), errs[0].Field, tt.wantMsg, tt.wantField)
			}
		})
	}
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
