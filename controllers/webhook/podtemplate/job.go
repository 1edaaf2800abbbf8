package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateJob returns every rule the pod template t of a job breaks, each naming its field
// under p.
func ValidateJob(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	return Validate(t, p, Rules{RestartPolicies: []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure}, Image: true})
}
