package broadcastjob

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
)

// setDefaults fills what a BroadcastJob leaves out, as 1.8 does: completion policy Always,
// parallelism 2147483647 (no cap), failure policy FailFast, and restartPolicy OnFailure for the
// pod. withTemplate also applies the core defaults to the pod template (the caller decides when:
// admit.TemplateDefaults), after restartPolicy OnFailure, so that a template without a
// restartPolicy gets the job's default rather than the pod's (Always, which a job refuses).
func setDefaults(job *appsv1alpha1.BroadcastJob, withTemplate bool) {
	spec := &job.Spec
	if spec.Template.Spec.RestartPolicy == "" {
		spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}
	if withTemplate {
		coredefaults.PodSpec(&spec.Template.Spec)
	}
	if spec.CompletionPolicy.Type == "" {
		spec.CompletionPolicy.Type = appsv1alpha1.Always
	}
	if spec.Parallelism == nil {
		v := intstr.FromInt32(math.MaxInt32)
		spec.Parallelism = &v
	}
	if spec.FailurePolicy.Type == "" {
		spec.FailurePolicy.Type = appsv1alpha1.FailurePolicyTypeFailFast
	}
}
