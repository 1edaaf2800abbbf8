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
		name string
		// templates is whether the core defaults go into the template too.
		templates bool
		change    func(j *appsv1alpha1.BroadcastJob)
		want      func(j *appsv1alpha1.BroadcastJob)
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
		{
			name:      "with template defaults, a template without restartPolicy gets OnFailure and the pod spec's core defaults",
			templates: true,
			change:    func(j *appsv1alpha1.BroadcastJob) { j.Spec.Template.Spec.RestartPolicy = "" },
			want: func(j *appsv1alpha1.BroadcastJob) {
				j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
				j.Spec.Parallelism = ptr.To(intstr.FromInt32(math.MaxInt32))
				j.Spec.FailurePolicy.Type = appsv1alpha1.FailurePolicyTypeFailFast
				ps := &j.Spec.Template.Spec
				ps.RestartPolicy = corev1.RestartPolicyOnFailure
				ps.DNSPolicy, ps.SchedulerName = corev1.DNSClusterFirst, corev1.DefaultSchedulerName
				ps.SecurityContext, ps.TerminationGracePeriodSeconds = &corev1.PodSecurityContext{}, ptr.To[int64](30)
				for i := range ps.Containers {
					c := &ps.Containers[i]
					c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.TerminationMessagePathDefault, corev1.TerminationMessageReadFile
					c.ImagePullPolicy = corev1.PullIfNotPresent
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kinds.BroadcastJob("scan", "ns").Obj()
			tt.change(got)
			want := got.DeepCopy()
			tt.want(want)
			setDefaults(got, tt.templates)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}
