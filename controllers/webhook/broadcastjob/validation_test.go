package broadcastjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// validJob is a defaulted BroadcastJob every rule accepts.
func validJob() *appsv1alpha1.BroadcastJob {
	job := kinds.BroadcastJob("scan", "ns").Obj()
	setDefaults(job)
	return job
}

func TestValidateBroadcastJob(t *testing.T) {
	tests := []struct {
		name   string
		change func(j *appsv1alpha1.BroadcastJob)
		// wantField is the field the one error names, "" for a valid job; wantMsg is part of
		// its message.
		wantField, wantMsg string
	}{
		{name: "a defaulted job is valid", change: func(*appsv1alpha1.BroadcastJob) {}},
		{
			name:      "a name with a dot is refused, saying what a name may hold",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Name = "a.b" },
			wantField: "metadata.name", wantMsg: "alphanumeric characters or '-'",
		},
		{
			name:      "a name longer than 63 characters is refused",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Name = strings.Repeat("a", 64) },
			wantField: "metadata.name", wantMsg: "63",
		},
		{
			name: "ttlSecondsAfterFinished with completion policy Never is refused",
			change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Never, TTLSecondsAfterFinished: ptr.To[int32](5)}
			},
			wantField: "spec.completionPolicy.ttlSecondsAfterFinished", wantMsg: "only be set when completionPolicy.type is Always",
		},
		{
			name: "activeDeadlineSeconds with completion policy Never is refused",
			change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Never, ActiveDeadlineSeconds: ptr.To[int64](5)}
			},
			wantField: "spec.completionPolicy.activeDeadlineSeconds", wantMsg: "only be set when completionPolicy.type is Always",
		},
		{
			name:      "a zero activeDeadlineSeconds is refused",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](0) },
			wantField: "spec.completionPolicy.activeDeadlineSeconds", wantMsg: "positive",
		},
		{
			name:      "an unknown failure policy is refused, listing the valid ones",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.FailurePolicy.Type = "Retry" },
			wantField: "spec.failurePolicy.type", wantMsg: `"Continue", "FailFast", "Pause"`,
		},
		{
			name:      "a negative restartLimit is refused",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.FailurePolicy.RestartLimit = -1 },
			wantField: "spec.failurePolicy.restartLimit", wantMsg: "0 or more",
		},
		{
			name:      "a negative parallelism is refused",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromInt32(-1)) },
			wantField: "spec.parallelism", wantMsg: "percentage",
		},
		{
			name:      "a parallelism string that is not a percentage is refused",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("half")) },
			wantField: "spec.parallelism", wantMsg: "percentage",
		},
		{
			name:   "a percentage parallelism is valid",
			change: func(j *appsv1alpha1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("30%")) },
		},
		{
			name:      "restartPolicy Always is refused: a job's pod must end",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			wantField: "spec.template.spec.restartPolicy", wantMsg: `"Never", "OnFailure"`,
		},
		{
			name: "a template that presets the controller's labels is refused",
			change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.Template.Labels[appsv1alpha1.BroadcastJobControllerUIDLabel] = "x"
			},
			wantField: "spec.template.metadata.labels[broadcastjob-controller-uid]", wantMsg: "set by the controller",
		},
		{
			name:      "a template without containers is refused",
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Template.Spec.Containers = nil },
			wantField: "spec.template.spec.containers", wantMsg: "at least one container",
		},
		{
			name: "two containers of one name are refused",
			change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.Template.Spec.Containers = append(j.Spec.Template.Spec.Containers, j.Spec.Template.Spec.Containers[0])
			},
			wantField: "spec.template.spec.containers[1].name", wantMsg: "Duplicate",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := validJob()
			tt.change(j)
			errs := validateBroadcastJob(j)
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
