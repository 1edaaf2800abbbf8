package kinds

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// UID sets metadata.uid, for planners that match pods by it.
func (b *BroadcastJobBuilder) UID(uid string) *BroadcastJobBuilder {
	b.obj.UID = types.UID(uid)
	return b
}

// Parallelism sets spec.parallelism to a count or, for a string like "50%", a percentage.
func (b *BroadcastJobBuilder) Parallelism(v intstr.IntOrString) *BroadcastJobBuilder {
	b.obj.Spec.Parallelism = &v
	return b
}

// Never sets completion policy Never.
func (b *BroadcastJobBuilder) Never() *BroadcastJobBuilder {
	b.obj.Spec.CompletionPolicy.Type = appsv1alpha1.Never
	return b
}

// ActiveDeadline sets completionPolicy.activeDeadlineSeconds.
func (b *BroadcastJobBuilder) ActiveDeadline(seconds int64) *BroadcastJobBuilder {
	b.obj.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To(seconds)
	return b
}

// TTL sets completionPolicy.ttlSecondsAfterFinished.
func (b *BroadcastJobBuilder) TTL(seconds int32) *BroadcastJobBuilder {
	b.obj.Spec.CompletionPolicy.TTLSecondsAfterFinished = ptr.To(seconds)
	return b
}

// FailurePolicy sets failurePolicy type and restartLimit.
func (b *BroadcastJobBuilder) FailurePolicy(t appsv1alpha1.FailurePolicyType, restartLimit int32) *BroadcastJobBuilder {
	b.obj.Spec.FailurePolicy = appsv1alpha1.FailurePolicy{Type: t, RestartLimit: restartLimit}
	return b
}

// Paused sets spec.paused.
func (b *BroadcastJobBuilder) Paused(p bool) *BroadcastJobBuilder {
	b.obj.Spec.Paused = p
	return b
}

// RestartPolicy sets the pod template's restartPolicy.
func (b *BroadcastJobBuilder) RestartPolicy(p corev1.RestartPolicy) *BroadcastJobBuilder {
	b.obj.Spec.Template.Spec.RestartPolicy = p
	return b
}

// PodAnnotation puts an annotation on the pod template, e.g. a node simulator knob.
func (b *BroadcastJobBuilder) PodAnnotation(key, value string) *BroadcastJobBuilder {
	metav1.SetMetaDataAnnotation(&b.obj.Spec.Template.ObjectMeta, key, value)
	return b
}

// NodeSelector sets the pod template's nodeSelector.
func (b *BroadcastJobBuilder) NodeSelector(sel map[string]string) *BroadcastJobBuilder {
	b.obj.Spec.Template.Spec.NodeSelector = sel
	return b
}

// Tolerate adds a toleration of key=value with effect to the pod template.
func (b *BroadcastJobBuilder) Tolerate(key, value string, effect corev1.TaintEffect) *BroadcastJobBuilder {
	b.obj.Spec.Template.Spec.Tolerations = append(b.obj.Spec.Template.Spec.Tolerations,
		corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: effect})
	return b
}

// Requests sets the resource requests of the pod template's first container.
func (b *BroadcastJobBuilder) Requests(list corev1.ResourceList) *BroadcastJobBuilder {
	b.obj.Spec.Template.Spec.Containers[0].Resources.Requests = list.DeepCopy()
	return b
}

// Status sets the status, for planners.
func (b *BroadcastJobBuilder) Status(st appsv1alpha1.BroadcastJobStatus) *BroadcastJobBuilder {
	b.obj.Status = st
	return b
}

// CompletionPolicy sets completionPolicy.type.
func (b *BroadcastJobBuilder) CompletionPolicy(t appsv1alpha1.CompletionPolicyType) *BroadcastJobBuilder {
	b.obj.Spec.CompletionPolicy.Type = t
	return b
}
