package advancedcronjob

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/podtemplate"
)

// validateAdvancedCronJob returns every rule acj breaks, each naming its field.
func validateAdvancedCronJob(acj *appsv1alpha1.AdvancedCronJob) field.ErrorList {
	errs := podtemplate.ValidateJobName(acj.Name, "nightly-backup")
	return append(errs, validateSpec(&acj.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *appsv1alpha1.AdvancedCronJobSpec, p *field.Path) field.ErrorList {
	errs := validateSchedule(spec, p.Child("schedule"))
	errs = append(errs, validateTimeZone(spec.TimeZone, p.Child("timeZone"))...)
	errs = append(errs, fieldrule.NonNegative(p.Child("startingDeadlineSeconds"), spec.StartingDeadlineSeconds, "seconds")...)
	errs = append(errs, fieldrule.NonNegative(p.Child("successfulJobsHistoryLimit"), spec.SuccessfulJobsHistoryLimit, "jobs")...)
	errs = append(errs, fieldrule.NonNegative(p.Child("failedJobsHistoryLimit"), spec.FailedJobsHistoryLimit, "jobs")...)
	return append(errs, validateTemplate(&spec.Template, p.Child("template"))...)
}

// validateSchedule: standard five-field cron syntax or a descriptor such as "@hourly" or
// "@every 1h", parsed as the controller parses it.
func validateSchedule(spec *appsv1alpha1.AdvancedCronJobSpec, p *field.Path) field.ErrorList {
	if spec.Schedule == "" {
		return field.ErrorList{field.Required(p, "a cron schedule, e.g. '*/5 * * * *'")}
	}
	var errs field.ErrorList
	if _, err := cron.ParseStandard(spec.Schedule); err != nil {
		errs = append(errs, field.Invalid(p, spec.Schedule, err.Error()+"; want five cron fields (minute hour day-of-month month day-of-week), e.g. '*/5 * * * *'"))
	}
	if spec.TimeZone != nil && strings.Contains(spec.Schedule, "TZ") {
		errs = append(errs, field.Invalid(p, spec.Schedule, "must not carry TZ or CRON_TZ when spec.timeZone is set"))
	}
	return errs
}

// validateTimeZone: unset, or an IANA time zone the controller's time zone database knows.
func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	switch {
	case *tz == "":
		return field.ErrorList{field.Invalid(p, *tz, "must be unset or an IANA time zone, e.g. 'Europe/Paris'")}
	case strings.EqualFold(*tz, "Local"):
		return field.ErrorList{field.Invalid(p, *tz, "must be an explicit IANA time zone, e.g. 'Europe/Paris', not Local")}
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		return field.ErrorList{field.Invalid(p, *tz, "must be an IANA time zone, e.g. 'Europe/Paris': "+err.Error())}
	}
	return nil
}

// validateTemplate: exactly one template, and a pod template a job can run. A
// broadcastJobTemplate may leave the pod's restartPolicy out: the BroadcastJob's defaulting
// sets it to OnFailure.
func validateTemplate(t *appsv1alpha1.CronJobTemplate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := 0
	if t.JobTemplate != nil {
		set++
		errs = append(errs, podtemplate.ValidateJob(&t.JobTemplate.Spec.Template, p.Child("jobTemplate", "spec", "template"))...)
	}
	if t.BroadcastJobTemplate != nil {
		set++
		pod := t.BroadcastJobTemplate.Spec.Template.DeepCopy()
		if pod.Spec.RestartPolicy == "" {
			pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		errs = append(errs, podtemplate.ValidateJob(pod, p.Child("broadcastJobTemplate", "spec", "template"))...)
	}
	if t.ImageListPullJobTemplate != nil {
		set++
	}
	if set != 1 {
		errs = append(errs, field.Invalid(p, set, "must set exactly one of jobTemplate, broadcastJobTemplate and imageListPullJobTemplate"))
	}
	return errs
}

// validateUpdate: as in 1.8, only the schedule, time zone, concurrency policy, history limits,
// starting deadline and paused may change.
func validateUpdate(acj, old *appsv1alpha1.AdvancedCronJob) field.ErrorList {
	spec := acj.Spec.DeepCopy()
	spec.Schedule = old.Spec.Schedule
	spec.TimeZone = old.Spec.TimeZone
	spec.ConcurrencyPolicy = old.Spec.ConcurrencyPolicy
	spec.SuccessfulJobsHistoryLimit = old.Spec.SuccessfulJobsHistoryLimit
	spec.FailedJobsHistoryLimit = old.Spec.FailedJobsHistoryLimit
	spec.StartingDeadlineSeconds = old.Spec.StartingDeadlineSeconds
	spec.Paused = old.Spec.Paused
	if apiequality.Semantic.DeepEqual(spec, &old.Spec) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "template"),
		"is immutable; only schedule, timeZone, concurrencyPolicy, successfulJobsHistoryLimit, failedJobsHistoryLimit, startingDeadlineSeconds and paused may change")}
}
