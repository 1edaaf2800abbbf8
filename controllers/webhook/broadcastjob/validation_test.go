package broadcastjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// validJob is a defaulted BroadcastJob every rule accepts.
func validJob() *appsv1alpha1.BroadcastJob {
	job := kinds.BroadcastJob("scan", "ns").Obj()
	setDefaults(job, false)
	return job
}

func TestValidateBroadcastJob(t *testing.T) {
	tests := []webhooktest.Case[*appsv1alpha1.BroadcastJob]{
		{Name: "a defaulted job is valid", Change: func(*appsv1alpha1.BroadcastJob) {}},
		{
			Name:      "a name with a dot is refused, saying what a name may hold",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Name = "a.b" },
			WantField: "metadata.name", WantMsg: "alphanumeric characters or '-'",
		},
		{
			Name:      "a name longer than 63 characters is refused",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Name = strings.Repeat("a", 64) },
			WantField: "metadata.name", WantMsg: "63",
		},
		{
			Name: "ttlSecondsAfterFinished with completion policy Never is refused",
			Change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Never, TTLSecondsAfterFinished: ptr.To[int32](5)}
			},
			WantField: "spec.completionPolicy.ttlSecondsAfterFinished", WantMsg: "only be set when completionPolicy.type is Always",
		},
		{
			Name: "activeDeadlineSeconds with completion policy Never is refused",
			Change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Never, ActiveDeadlineSeconds: ptr.To[int64](5)}
			},
			WantField: "spec.completionPolicy.activeDeadlineSeconds", WantMsg: "only be set when completionPolicy.type is Always",
		},
		{
			Name:      "a zero activeDeadlineSeconds is refused",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](0) },
			WantField: "spec.completionPolicy.activeDeadlineSeconds", WantMsg: "positive",
		},
		{
			Name:      "an unknown failure policy is refused, listing the valid ones",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.FailurePolicy.Type = "Retry" },
			WantField: "spec.failurePolicy.type", WantMsg: `"Continue", "FailFast", "Pause"`,
		},
		{
			Name:      "a negative restartLimit is refused",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.FailurePolicy.RestartLimit = -1 },
			WantField: "spec.failurePolicy.restartLimit", WantMsg: "0 or more",
		},
		{
			Name:      "a negative parallelism is refused",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromInt32(-1)) },
			WantField: "spec.parallelism", WantMsg: "percentage",
		},
		{
			Name:      "a parallelism string that is not a percentage is refused",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("half")) },
			WantField: "spec.parallelism", WantMsg: "percentage",
		},
		{
			Name:   "a percentage parallelism is valid",
			Change: func(j *appsv1alpha1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("30%")) },
		},
		{
			Name:      "restartPolicy Always is refused: a job's pod must end",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			WantField: "spec.template.spec.restartPolicy", WantMsg: `"Never", "OnFailure"`,
		},
		{
			Name: "a template that presets the controller's labels is refused",
			Change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.Template.Labels[appsv1alpha1.BroadcastJobControllerUIDLabel] = "x"
			},
			WantField: "spec.template.metadata.labels[broadcastjob-controller-uid]", WantMsg: "set by the controller",
		},
		{
			Name:      "a template without containers is refused",
			Change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Template.Spec.Containers = nil },
			WantField: "spec.template.spec.containers", WantMsg: "at least one container",
		},
		{
			Name: "two containers of one name are refused",
			Change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.Template.Spec.Containers = append(j.Spec.Template.Spec.Containers, j.Spec.Template.Spec.Containers[0])
			},
			WantField: "spec.template.spec.containers[1].name", WantMsg: "Duplicate",
		},
	}
	webhooktest.RunCases(t, tests, validJob, validateBroadcastJob)
}
