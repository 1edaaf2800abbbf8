package podtemplate

import (
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxJobNameLength: a job's name becomes a label value on the pods or jobs it creates.
const maxJobNameLength = 63

var jobNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+$`)

// ValidateJobName checks a job's metadata.name: alphanumeric characters or '-' (the refusal
// shows example), and no longer than a label value.
func ValidateJobName(name, example string) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("metadata", "name")
	if !jobNameRE.MatchString(name) && name != "" {
		errs = append(errs, field.Invalid(p, name, "must consist of alphanumeric characters or '-', e.g. '"+example+"'"))
	}
	if len(name) > maxJobNameLength {
		errs = append(errs, field.TooLong(p, name, maxJobNameLength))
	}
	return errs
}

// ValidateJob returns every rule the pod template t of a job breaks, each naming its field
// under p.
func ValidateJob(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	return Validate(t, p, Rules{RestartPolicies: []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure}, Image: true})
}
