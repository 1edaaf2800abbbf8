package builder

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// JobBuilder builds a batch/v1 Job.
type JobBuilder struct{ job *batchv1.Job }

// Job starts a suspended Job of parallelism 1 selecting "app: <name>" by hand, so that with no
// Job controller, or with one, it runs nothing: it is only an owner for pods a test creates.
func Job(name, namespace string) *JobBuilder {
	selector, tmpl := AppTemplate(name)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &JobBuilder{job: &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](1), Suspend: ptr.To(true), ManualSelector: ptr.To(true),
			Selector: selector, Template: tmpl,
		},
	}}
}

// Parallelism sets spec.parallelism.
func (b *JobBuilder) Parallelism(n int32) *JobBuilder {
	b.job.Spec.Parallelism = ptr.To(n)
	return b
}

// Obj returns a copy of the Job.
func (b *JobBuilder) Obj() *batchv1.Job { return b.job.DeepCopy() }

// ControllerRef is the controller owner reference to obj, of apiVersion and kind (a typed
// object read back from the apiserver carries no TypeMeta, so they are given).
func ControllerRef(apiVersion, kind string, obj metav1.Object) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), Controller: ptr.To(true)}
}
