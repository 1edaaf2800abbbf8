package broadcastjob

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// maxNameLength: the job's name becomes a label value on its pods.
const maxNameLength = 63

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+$`)

// validateBroadcastJob returns every rule job breaks, each naming its field.
func validateBroadcastJob(job *appsv1alpha1.BroadcastJob) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	if !nameRE.MatchString(job.Name) && job.Name != "" {
		errs = append(errs, field.Invalid(name, job.Name, "must consist of alphanumeric characters or '-', e.g. 'nightly-scan'"))
	}
	if len(job.Name) > maxNameLength {
		errs = append(errs, field.TooLong(name, job.Name, maxNameLength))
	}
	return append(errs, validateSpec(&job.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *appsv1alpha1.BroadcastJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cp := p.Child("completionPolicy")
	switch spec.CompletionPolicy.Type {
	case appsv1alpha1.Always:
		if v := spec.CompletionPolicy.ActiveDeadlineSeconds; v != nil && *v <= 0 {
			errs = append(errs, field.Invalid(cp.Child("activeDeadlineSeconds"), *v, "must be a positive number of seconds"))
		}
		if v := spec.CompletionPolicy.TTLSecondsAfterFinished; v != nil && *v < 0 {
			errs = append(errs, field.Invalid(cp.Child("ttlSecondsAfterFinished"), *v, "must be 0 or more seconds"))
		}
	case appsv1alpha1.Never:
		if v := spec.CompletionPolicy.TTLSecondsAfterFinished; v != nil {
			errs = append(errs, field.Invalid(cp.Child("ttlSecondsAfterFinished"), *v, "may only be set when completionPolicy.type is Always"))
		}
		if v := spec.CompletionPolicy.ActiveDeadlineSeconds; v != nil {
			errs = append(errs, field.Invalid(cp.Child("activeDeadlineSeconds"), *v, "may only be set when completionPolicy.type is Always"))
		}
	default:
		errs = append(errs, field.NotSupported(cp.Child("type"), spec.CompletionPolicy.Type, []string{string(appsv1alpha1.Always), string(appsv1alpha1.Never)}))
	}
	fp := p.Child("failurePolicy")
	switch spec.FailurePolicy.Type {
	case appsv1alpha1.FailurePolicyTypeContinue, appsv1alpha1.FailurePolicyTypeFailFast, appsv1alpha1.FailurePolicyTypePause:
	default:
		errs = append(errs, field.NotSupported(fp.Child("type"), spec.FailurePolicy.Type, []string{
			string(appsv1alpha1.FailurePolicyTypeContinue), string(appsv1alpha1.FailurePolicyTypeFailFast), string(appsv1alpha1.FailurePolicyTypePause)}))
	}
	if spec.FailurePolicy.RestartLimit < 0 {
		errs = append(errs, field.Invalid(fp.Child("restartLimit"), spec.FailurePolicy.RestartLimit, "must be 0 or more restarts"))
	}
	if spec.Parallelism != nil {
		errs = append(errs, validateParallelism(*spec.Parallelism, p.Child("parallelism"))...)
	}
	return append(errs, validateTemplate(&spec.Template, p.Child("template"))...)
}

// validateParallelism: a count of 0 or more, or a percentage like "50%".
func validateParallelism(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must be 0 or more pods, or a percentage like '50%'")}
		}
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, true)
	if err != nil || n < 0 {
		return field.ErrorList{field.Invalid(p, v.StrVal, "must be 0 or more pods, or a percentage like '50%'")}
	}
	return nil
}

func validateTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	lp := p.Child("metadata", "labels")
	errs := metav1validation.ValidateLabels(t.Labels, lp)
	for _, k := range []string{appsv1alpha1.BroadcastJobNameLabel, appsv1alpha1.BroadcastJobControllerUIDLabel} {
		if _, ok := t.Labels[k]; ok {
			errs = append(errs, field.Forbidden(lp.Key(k), fmt.Sprintf("is set by the controller on every pod of the job; remove %q and %q from the template", appsv1alpha1.BroadcastJobNameLabel, appsv1alpha1.BroadcastJobControllerUIDLabel)))
		}
	}
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
