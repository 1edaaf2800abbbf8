package statefulset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// defaultClassAnnotation marks the cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// storageClassOf returns the StorageClass a claim template names, or the cluster's default one
// (the newest of those marked so) when it names none; nil when there is no default.
type storageClassOf func(name *string) (*storagev1.StorageClass, error)

// readStorageClasses looks StorageClasses up through r.
func readStorageClasses(ctx context.Context, r client.Reader) storageClassOf {
	return func(name *string) (*storagev1.StorageClass, error) {
		if name != nil {
			sc := &storagev1.StorageClass{}
			return sc, r.Get(ctx, client.ObjectKey{Name: *name}, sc)
		}
		var list storagev1.StorageClassList
		if err := r.List(ctx, &list); err != nil {
			return nil, err
		}
		var def *storagev1.StorageClass
		for i := range list.Items {
			sc := &list.Items[i]
			if sc.Annotations[defaultClassAnnotation] == "true" && (def == nil || def.CreationTimestamp.Before(&sc.CreationTimestamp)) {
				def = sc
			}
		}
		return def, nil
	}
}

// validateClaimTemplatesUpdate checks, as 1.8 does with StatefulSetAutoResizePVCGate, a change
// of volumeClaimTemplates under volumeClaimUpdateStrategy OnPodRollingUpdate: templates are
// neither added, removed nor renamed, only their storage size changes, and only where the
// StorageClass does not forbid volume expansion. An error reading a StorageClass other than
// its absence is returned for a retry.
func validateClaimTemplatesUpdate(set, old *appsv1beta1.StatefulSet, classOf storageClassOf) (field.ErrorList, error) {
	if set.Spec.VolumeClaimUpdateStrategy.Type != appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType {
		return nil, nil
	}
	p := field.NewPath("spec", "volumeClaimTemplates")
	templates, olds := set.Spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates
	if len(templates) != len(olds) {
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf("templates cannot be added or removed with volumeClaimUpdateStrategy %s (from %d to %d); use OnDelete for that change",
			appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType, len(olds), len(templates)))}, nil
	}
	byName := make(map[string]*corev1.PersistentVolumeClaim, len(olds))
	for i := range olds {
		byName[olds[i].Name] = &olds[i]
	}
	var errs field.ErrorList
	for i := range templates {
		t := &templates[i]
		tp := p.Index(i)
		o, ok := byName[t.Name]
		if !ok {
			errs = append(errs, field.Forbidden(tp.Child("name"), fmt.Sprintf("a template cannot be renamed with volumeClaimUpdateStrategy %s; use OnDelete for that change", appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType)))
			continue
		}
		if !sameShape(t, o) {
			errs = append(errs, field.Forbidden(tp.Child("spec"), fmt.Sprintf("only resources.requests.storage and resources.limits.storage may change with volumeClaimUpdateStrategy %s; use OnDelete for other changes", appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType)))
			continue
		}
		if sameSize(t, o) {
			continue
		}
		sc, err := classOf(t.Spec.StorageClassName)
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, field.NotFound(tp.Child("spec", "storageClassName"), *t.Spec.StorageClassName))
			continue
		case err != nil:
			return nil, fmt.Errorf("read the storage class of spec.volumeClaimTemplates[%d]: %w", i, err)
		case sc == nil:
			continue // no default class: nothing to check
		}
		if sc.AllowVolumeExpansion != nil && !*sc.AllowVolumeExpansion {
			errs = append(errs, field.Forbidden(tp.Child("spec", "resources", "requests", "storage"),
				fmt.Sprintf("storage class %s does not allow volume expansion: set allowVolumeExpansion on it, or use volumeClaimUpdateStrategy OnDelete", sc.Name)))
		}
	}
	return errs, nil
}

// sameShape: a template keeps its storage class (when both name one) and access modes.
func sameShape(t, old *corev1.PersistentVolumeClaim) bool {
	a, b := t.Spec.StorageClassName, old.Spec.StorageClassName
	if a != nil && b != nil && *a != *b {
		return false
	}
	if len(t.Spec.AccessModes) != len(old.Spec.AccessModes) {
		return false
	}
	for i := range t.Spec.AccessModes {
		if t.Spec.AccessModes[i] != old.Spec.AccessModes[i] {
			return false
		}
	}
	return true
}

// sameSize: a template keeps its storage request and limit.
func sameSize(t, old *corev1.PersistentVolumeClaim) bool {
	r := t.Spec.Resources
	o := old.Spec.Resources
	return r.Requests.Storage().Cmp(*o.Requests.Storage()) == 0 && r.Limits.Storage().Cmp(*o.Limits.Storage()) == 0
}
