package advancedcronjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestValidateAdvancedCronJob(t *testing.T) {
	tests := []webhooktest.Case[*appsv1alpha1.AdvancedCronJob]{
		{Name: "a five-field schedule with a jobTemplate is valid", Change: func(*appsv1alpha1.AdvancedCronJob) {}},
		{
			Name:   "a descriptor schedule such as @every is valid",
			Change: func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "@every 2s" },
		},
		{
			Name:   "an IANA time zone is valid",
			Change: func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Europe/Paris") },
		},
		{
			Name:      "a minute of 61 is refused, saying what a schedule looks like",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "61 * * * *" },
			WantField: "spec.schedule", WantMsg: `Invalid value: "61 * * * *": end of range (61) above maximum (59)`,
		},
		{
			Name:      "a schedule of six fields is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "0 0 * * * *" },
			WantField: "spec.schedule", WantMsg: "five cron fields",
		},
		{
			Name:      "an empty schedule is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "" },
			WantField: "spec.schedule", WantMsg: "Required value",
		},
		{
			Name: "a CRON_TZ prefix together with timeZone is refused",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Schedule = "CRON_TZ=UTC 0 * * * *"
				a.Spec.TimeZone = ptr.To("Europe/Paris")
			},
			WantField: "spec.schedule", WantMsg: "must not carry TZ or CRON_TZ",
		},
		{
			Name:      "a time zone nobody knows is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Mars/Olympus") },
			WantField: "spec.timeZone", WantMsg: "IANA time zone",
		},
		{
			Name:      "time zone Local is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("local") },
			WantField: "spec.timeZone", WantMsg: "not Local",
		},
		{
			Name:      "an empty time zone is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("") },
			WantField: "spec.timeZone", WantMsg: "unset or an IANA time zone",
		},
		{
			Name:      "a name with a dot is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Name = "a.b" },
			WantField: "metadata.name", WantMsg: "alphanumeric characters or '-'",
		},
		{
			Name:      "no template is refused",
			Change:    func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Template.JobTemplate = nil },
			WantField: "spec.template", WantMsg: "exactly one of jobTemplate, broadcastJobTemplate and imageListPullJobTemplate",
		},
		{
			Name: "two templates are refused",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.ImageListPullJobTemplate = &appsv1alpha1.ImageListPullJobTemplateSpec{}
			},
			WantField: "spec.template", WantMsg: "exactly one",
		},
		{
			Name: "a jobTemplate's pod without containers is refused",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.Containers = nil
			},
			WantField: "spec.template.jobTemplate.spec.template.spec.containers", WantMsg: "at least one container",
		},
		{
			Name: "a jobTemplate's pod with restartPolicy Always is refused: a job's pod must end",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			},
			WantField: "spec.template.jobTemplate.spec.template.spec.restartPolicy", WantMsg: `"Never", "OnFailure"`,
		},
		{
			Name: "a jobTemplate's container without an image is refused",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Template.JobTemplate.Spec.Template.Spec.Containers[0].Image = ""
			},
			WantField: "spec.template.jobTemplate.spec.template.spec.containers[0].image", WantMsg: "Required value",
		},
		{
			Name: "a broadcastJobTemplate's pod may leave restartPolicy to the BroadcastJob's default",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				*a = *kinds.AdvancedCronJob("nightly", "ns").BroadcastJob().Obj()
				a.Spec.Template.BroadcastJobTemplate.Spec.Template.Spec.RestartPolicy = ""
			},
		},
		{
			Name: "a broadcastJobTemplate's container with an invalid name is refused",
			Change: func(a *appsv1alpha1.AdvancedCronJob) {
				*a = *kinds.AdvancedCronJob("nightly", "ns").BroadcastJob().Obj()
				a.Spec.Template.BroadcastJobTemplate.Spec.Template.Spec.Containers[0].Name = "Main"
			},
			WantField: "spec.template.broadcastJobTemplate.spec.template.spec.containers[0].name", WantMsg: "RFC 1123",
		},
	}
	// The counts: each row sets one count of the spec out of its range.
	for _, r := range []struct {
		name, field, msg string
		change           func(s *appsv1alpha1.AdvancedCronJobSpec)
	}{
		{"a negative startingDeadlineSeconds is refused", "startingDeadlineSeconds", "0 or more", func(s *appsv1alpha1.AdvancedCronJobSpec) { s.StartingDeadlineSeconds = ptr.To[int64](-1) }},
		{"a negative successfulJobsHistoryLimit is refused", "successfulJobsHistoryLimit", "0 or more", func(s *appsv1alpha1.AdvancedCronJobSpec) { s.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) }},
		{"a negative failedJobsHistoryLimit is refused", "failedJobsHistoryLimit", "0 or more", func(s *appsv1alpha1.AdvancedCronJobSpec) { s.FailedJobsHistoryLimit = ptr.To[int32](-1) }},
	} {
		tests = append(tests, webhooktest.Case[*appsv1alpha1.AdvancedCronJob]{Name: r.name, WantField: "spec." + r.field, WantMsg: r.msg,
			Change: func(a *appsv1alpha1.AdvancedCronJob) { r.change(&a.Spec) }})
	}
	webhooktest.RunCases(t, tests, func() *appsv1alpha1.AdvancedCronJob { return kinds.AdvancedCronJob("nightly", "ns").Obj() }, validateAdvancedCronJob)
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
