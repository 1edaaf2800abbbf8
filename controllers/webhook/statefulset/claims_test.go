package statefulset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func TestValidateClaimTemplatesUpdate(t *testing.T) {
	classes := map[string]*storagev1.StorageClass{
		"grows": {ObjectMeta: metav1.ObjectMeta{Name: "grows"}, AllowVolumeExpansion: ptr.To(true)},
		"fixed": {ObjectMeta: metav1.ObjectMeta{Name: "fixed"}, AllowVolumeExpansion: ptr.To(false)},
		"unset": {ObjectMeta: metav1.ObjectMeta{Name: "unset"}},
	}
	classOf := func(name *string) (*storagev1.StorageClass, error) {
		if name == nil {
			return classes["fixed"], nil // the cluster's default
		}
		if sc, ok := classes[*name]; ok {
			return sc, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, *name)
	}
	onRolling := func(class *string) func(*appsv1beta1.StatefulSet) {
		return func(s *appsv1beta1.StatefulSet) {
			withClaim(s)
			s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = class
			s.Spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType
		}
	}
	grow := func(s *appsv1beta1.StatefulSet) {
		s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	}
	tests := map[string]struct {
		class     *string
		change    func(*appsv1beta1.StatefulSet)
		wantField []string
	}{
		"a template grows where its StorageClass allows volume expansion":           {class: ptr.To("grows"), change: grow},
		"a template grows where its StorageClass leaves volume expansion unset":     {class: ptr.To("unset"), change: grow},
		"a template cannot grow where its StorageClass forbids volume expansion":    {class: ptr.To("fixed"), change: grow, wantField: []string{"spec.volumeClaimTemplates[0].spec.resources.requests.storage"}},
		"a template without a class cannot grow where the default class forbids it": {change: grow, wantField: []string{"spec.volumeClaimTemplates[0].spec.resources.requests.storage"}},
		"a template whose StorageClass does not exist cannot grow":                  {class: ptr.To("gone"), change: grow, wantField: []string{"spec.volumeClaimTemplates[0].spec.storageClassName"}},
		"a template cannot change its access modes": {class: ptr.To("grows"), change: func(s *appsv1beta1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, wantField: []string{"spec.volumeClaimTemplates[0].spec"}},
		"a template cannot be added": {class: ptr.To("grows"), change: func(s *appsv1beta1.StatefulSet) {
			s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, *s.Spec.VolumeClaimTemplates[0].DeepCopy())
		}, wantField: []string{"spec.volumeClaimTemplates"}},
		"a template cannot be renamed": {class: ptr.To("grows"), change: func(s *appsv1beta1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Name = "logs"
		}, wantField: []string{"spec.volumeClaimTemplates[0].name"}},
		"with OnDelete any template change passes": {class: ptr.To("fixed"), change: func(s *appsv1beta1.StatefulSet) {
			grow(s)
			s.Spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPVCDeleteVolumeClaimUpdateStrategyType
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			old := valid(onRolling(tt.class))
			set := valid(onRolling(tt.class), tt.change)
			errs, err := validateClaimTemplatesUpdate(set, old, classOf)
			if err != nil {
				t.Fatal(err)
			}
			webhooktest.AssertFields(t, errs, tt.wantField)
		})
	}
}
