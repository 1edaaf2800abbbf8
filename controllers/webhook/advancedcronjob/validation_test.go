package advancedcronjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestValidateAdvancedCronJob(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *appsv1alpha1.AdvancedCronJob)
		// wantField is the field the one error names, "" for a valid job; wantMsg is part of
		// its message.
		wantField, wantMsg string
	}{
		{name: "a five-field schedule with a jobTemplate is valid", change: func(*appsv1alpha1.AdvancedCronJob) {}},
		{
			name:   "a descriptor schedule such as @every is valid",
			change: func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "@every 2s" },
		},
		{
			name:   "an IANA time zone is valid",
			change: func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Europe/Paris") },
		},
		{
			name:      "a minute of 61 is refused, saying what a schedule looks like",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "61 * * * *" },
			wantField: "spec.schedule", wantMsg: `Invalid value: "61 * * * *": end of range (61) above maximum (59)`,
		},
		{
			name:      "a schedule of six fields is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "0 0 * * * *" },
			wantField: "spec.schedule", wantMsg: "five cron fields",
		},
		{
			name:      "an empty schedule is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "" },
			wantField: "spec.schedule", wantMsg: "Required value",
		},
		{
			name: "a CRON_TZ prefix together with timeZone is refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Schedule = "CRON_TZ=UTC 0 * * * *"
				a.Spec.TimeZone = ptr.To("Europe/Paris")
			},
			wantField: "spec.schedule", wantMsg: "must not carry TZ or CRON_TZ",
		},
		{
			name:      "a time zone nobody knows is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Mars/Olympus") },
			wantField: "spec.timeZone", wantMsg: "IANA time zone",
		},
		{
			name:      "time zone Local is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("local") },
			wantField: "spec.timeZone", wantMsg: "not Local",
		},
		{
			name:      "an empty time zone is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("") },
			wantField: "spec.timeZone", wantMsg: "unset or an IANA time zone",
		},
		{
			name:      "a negative startingDeadlineSeconds is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			wantField: "spec.startingDeadlineSeconds", wantMsg: "0 or more",
		},
		{
			name:      "a negative successfulJobsHistoryLimit is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) },
			wantField: "spec.successfulJobsHistoryLimit", wantMsg: "0 or more",
		},
		{
			name:      "a negative failedJobsHistoryLimit is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1) },
			wantField: "spec.failedJobsHistoryLimit", wantMsg: "0 or more",
		},
		{
			name:      "a name with a dot is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Name = "a.b" },
			wantField: "metadata.name", wantMsg: "alphanumeric characters or '-'",
		},
		{
			name:      "no template is refused",
			change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Template.JobTemplate = nil },
			wantField: "spec.template", wantMsg: "exactly one of jobTemplate, broadcastJobTemplate and imageListPullJobTemplate",
		},
		{
			name: "two templates are refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.ImageListPullJobTemplate = &appsv1alpha1.ImageListPullJobTemplateSpec{}
			},
			wantField: "spec.template", wantMsg: "exactly one",
		},
		{
			name: "a jobTemplate's pod without containers is refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.Containers = nil
			},
			wantField: "spec.template.jobTemplate.spec.template.spec.containers", wantMsg: "at least one container",
		},
		{
			name: "a jobTemplate's pod with restartPolicy Always is refused: a job's pod must end",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			},
			wantField: "spec.template.jobTemplate.spec.template.spec.restartPolicy", wantMsg: `"Never", "OnFailure"`,
		},
		{
			name: "a jobTemplate's container without an image is refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.Containers[0].Image = ""
			},
			wantField: "spec.template.jobTemplate.spec.template.spec.containers[0].image", wantMsg: "Required value",
		},
		{
			name: "a broadcastJobTemplate's pod may leave restartPolicy to the BroadcastJob's default",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				*a = *kinds.AdvancedCronJob("nightly", "ns").BroadcastJob().Obj()
				a.Spec.Template.BroadcastJobTemplate.Spec.Template.Spec.RestartPolicy = ""
			},
		},
		{
			name: "a broadcastJobTemplate's container with an invalid name is refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				*a = *kinds.AdvancedCronJob("nightly", "ns").BroadcastJob().Obj()
				a.Spec.Template.BroadcastJobTemplate.Spec.Template.Spec.Containers[0].Name = "Main"
			},
			wantField: "spec.template.broadcastJobTemplate.spec.template.spec.containers[0].name", wantMsg: "RFC 1123",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := kinds.AdvancedCronJob("nightly", "ns").Obj()
			tt.change(a)
			errs := validateAdvancedCronJob(a)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want no error, got %v", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want one error on %s, got %v", tt.wantField, errs)
			}
			if errs[0].Field != tt.wantField || !strings.Contains(errs[0].Error(), tt.wantMsg) {
				t.Errorf("got %q on %s, want %s saying %q", errs[0].Error(), errs[0].Field, tt.wantField, tt.wantMsg)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *appsv1alpha1.AdvancedCronJob)
		// wantRefused: the update is refused, naming spec.template.
		wantRefused bool
	}{
		{
			name: "schedule, time zone, concurrency policy, limits, deadline and paused may change",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Schedule = "0 3 * * *"
				a.Spec.TimeZone = ptr.To("Asia/Tokyo")
				a.Spec.ConcurrencyPolicy = appsv1alpha1.ForbidConcurrent
				a.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](7)
				a.Spec.FailedJobsHistoryLimit = ptr.To[int32](2)
				a.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
				a.Spec.Paused = ptr.To(true)
			},
		},
		{
			name: "a change of the template's image is refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.Containers[0].Image = "busybox:2"
			},
			wantRefused: true,
		},
		{
			name: "a switch to another template kind is refused",
			change: func(a *appsv1alpha1.AdvancedCronJob) {
				*a = *kinds.AdvancedCronJob("nightly", "ns").BroadcastJob().Obj()
			},
			wantRefused: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := kinds.AdvancedCronJob("nightly", "ns").Obj()
			a := old.DeepCopy()
			tt.change(a)
			errs := validateUpdate(a, old)
			if !tt.wantRefused {
				if len(errs) != 0 {
					t.Fatalf("want no error, got %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != "spec.template" || !strings.Contains(errs[0].Error(), "only schedule, timeZone") {
				t.Errorf("got %v, want one error on spec.template saying what may change", errs)
			}
		})
	}
}
