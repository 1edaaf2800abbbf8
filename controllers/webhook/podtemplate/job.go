package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateJob returns every rule the pod template t of a job breaks, each naming its field
// under p.
func ValidateJob(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	sp := p.Child("spec")
	switch t.Spec.RestartPolicy {
	case corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
	default:
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyNever), string(corev1.RestartPolicyOnFailure)}))
	}
	if len(t.Spec.Containers) == 0 {
		errs = append(errs, field.Required(sp.Child("containers"), "at least one container"))
	}
	names := sets.New[string]()
	check := func(cp *field.Path, c *corev1.Container) {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(cp.Child("image"), "the image the container runs"))
		}
	}
	for i := range t.Spec.InitContainers {
		check(sp.Child("initContainers").Index(i), &t.Spec.InitContainers[i])
	}
	for i := range t.Spec.Containers {
		check(sp.Child("containers").Index(i), &t.Spec.Containers[i])
	}
	return errs
}
