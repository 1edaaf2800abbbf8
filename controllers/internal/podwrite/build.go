package podwrite

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
)

// NewPod builds a pod of revision rev for owner (of kind gvk), which controls it: the
// template's labels, annotations, finalizers and spec, in the owner's namespace. The caller
// names it and adds the kind's own labels.
func NewPod(owner metav1.Object, gvk schema.GroupVersionKind, rev *appsv1.ControllerRevision) (*corev1.Pod, error) {
	tmpl, err := inplaceupdate.SpecTemplate(rev)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       owner.GetNamespace(),
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			Finalizers:      tmpl.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)},
		},
		Spec: tmpl.Spec,
	}
	for k, v := range tmpl.Labels {
		pod.Labels[k] = v
	}
	for k, v := range tmpl.Annotations {
		pod.Annotations[k] = v
	}
	return pod, nil
}

// MountClaims sets, for each volume claim template, a volume of that name on the pod that mounts
// the claim claimName gives it, in place of a template volume of the same name.
func MountClaims(pod *corev1.Pod, templates []corev1.PersistentVolumeClaim, claimName func(template string) string) {
	for _, vct := range templates {
		vol := corev1.Volume{Name: vct.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(vct.Name)},
		}}
		replaced := false
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == vct.Name {
				pod.Spec.Volumes[i] = vol
				replaced = true
			}
		}
		if !replaced {
			pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		}
	}
}

// NewClaim builds the claim name of volume claim template vct in namespace: the template's
// annotations and spec, and its labels over the selector's match labels.
func NewClaim(namespace, name string, vct corev1.PersistentVolumeClaim, selector *metav1.LabelSelector) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      map[string]string{},
			Annotations: vct.Annotations,
		},
		Spec: vct.Spec,
	}
	if selector != nil {
		for k, v := range selector.MatchLabels {
			pvc.Labels[k] = v
		}
	}
	for k, v := range vct.Labels {
		pvc.Labels[k] = v
	}
	return pvc
}
