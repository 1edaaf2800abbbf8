package broadcastjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/podtemplate"
)

// validateBroadcastJob returns every rule job breaks, each naming its field.
func validateBroadcastJob(job *appsv1alpha1.BroadcastJob) field.ErrorList {
	errs := podtemplate.ValidateJobName(job.Name, "nightly-scan")
	return append(errs, validateSpec(&job.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *appsv1alpha1.BroadcastJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cp := p.Child("completionPolicy")
	switch spec.CompletionPolicy.Type {
	case appsv1alpha1.Always:
		errs = append(errs, fieldrule.Positive(cp.Child("activeDeadlineSeconds"), spec.CompletionPolicy.ActiveDeadlineSeconds, "seconds")...)
		errs = append(errs, fieldrule.NonNegative(cp.Child("ttlSecondsAfterFinished"), spec.CompletionPolicy.TTLSecondsAfterFinished, "seconds")...)
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

// validateTemplate: a job's pod template that does not preset the labels the controller puts
// on every pod of the job.
func validateTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := podtemplate.ValidateJob(t, p)
	lp := p.Child("metadata", "labels")
	for _, k := range []string{appsv1alpha1.BroadcastJobNameLabel, appsv1alpha1.BroadcastJobControllerUIDLabel} {
		if _, ok := t.Labels[k]; ok {
			errs = append(errs, field.Forbidden(lp.Key(k), fmt.Sprintf("is set by the controller on every pod of the job; remove %q and %q from the template", appsv1alpha1.BroadcastJobNameLabel, appsv1alpha1.BroadcastJobControllerUIDLabel)))
		}
	}
	return errs
}
