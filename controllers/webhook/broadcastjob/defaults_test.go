package broadcastjob

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestSetDefaults(t *testing.T) {
	tests := []struct {
		name   string
		change func(j *appsv1alpha1.BroadcastJob)
		want   func(j *appsv1alpha1.BroadcastJob)
	}{
		{
			name: "an empty spec gets completion policy Always, no parallelism cap, FailFast and restartPolicy OnFailure",
			change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.Template.Spec.RestartPolicy = ""
			},
			want: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
				j.Spec.Parallelism = ptr.To(intstr.FromInt32(math.MaxInt32))
				j.Spec.FailurePolicy.Type = appsv1alpha1.FailurePolicyTypeFailFast
				j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			},
		},
		{
			name: "set values are kept",
			change: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy.Type = appsv1alpha1.Never
				j.Spec.Parallelism = ptr.To(intstr.FromString("10%"))
				j.Spec.FailurePolicy.Type = appsv1alpha1.FailurePolicyTypePause
			},
			want: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy.Type = appsv1alpha1.Never
				j.Spec.Parallelism = ptr.To(intstr.FromString("10%"))
				j.Spec.FailurePolicy.Type = appsv1alpha1.FailurePolicyTypePause
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kinds.BroadcastJob("scan", "ns").Obj()
			tt.change(got)
			want := got.DeepCopy()
			tt.want(want)
			setDefaults(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}
