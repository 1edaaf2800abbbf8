package builder

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultImage is the image of the container a new pod builder starts with.
const DefaultImage = "registry.example.com/pause:3.10"

// PodBuilder builds a Pod.
type PodBuilder struct {
	Meta[*PodBuilder]
	pod *corev1.Pod
}

// Pod starts a pod with one container, "main", running DefaultImage.
func Pod(name, namespace string) *PodBuilder {
	b := &PodBuilder{pod: &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: DefaultImage}},
		},
	}}
	b.Meta = Meta[*PodBuilder]{obj: &b.pod.ObjectMeta, builder: b}
	return b
}

// Finalizer adds a finalizer.
func (b *PodBuilder) Finalizer(f string) *PodBuilder {
	b.pod.Finalizers = append(b.pod.Finalizers, f)
	return b
}

// OwnedBy adds an owner reference.
func (b *PodBuilder) OwnedBy(ref metav1.OwnerReference) *PodBuilder {
	b.pod.OwnerReferences = append(b.pod.OwnerReferences, ref)
	return b
}

// Image sets the image of the first container.
func (b *PodBuilder) Image(image string) *PodBuilder {
	b.pod.Spec.Containers[0].Image = image
	return b
}

// Container adds a container, or sets the image of the container of that name.
func (b *PodBuilder) Container(name, image string) *PodBuilder {
	b.pod.Spec.Containers = setOrAppend(b.pod.Spec.Containers,
		func(c *corev1.Container) bool { return c.Name == name },
		func(c *corev1.Container) { c.Image = image },
		corev1.Container{Name: name, Image: image})
	return b
}

// Env adds the env variable name=value to the container called container.
func (b *PodBuilder) Env(container, name, value string) *PodBuilder {
	for i := range b.pod.Spec.Containers {
		if c := &b.pod.Spec.Containers[i]; c.Name == container {
			c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
		}
	}
	return b
}

// InitContainer adds an init container that runs to completion before the others.
func (b *PodBuilder) InitContainer(name, image string) *PodBuilder {
	b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, corev1.Container{Name: name, Image: image})
	return b
}

// Node binds the pod to a node, bypassing the scheduler.
func (b *PodBuilder) Node(name string) *PodBuilder {
	b.pod.Spec.NodeName = name
	return b
}

// NodeSelector sets each of the node selector's labels, keeping others.
func (b *PodBuilder) NodeSelector(selector map[string]string) *PodBuilder {
	b.pod.Spec.NodeSelector = merge(b.pod.Spec.NodeSelector, selector)
	return b
}

// RequireNodeLabelIn adds a required node affinity term: the node's label key must have one of
// values. Terms are ORed, as in the API.
func (b *PodBuilder) RequireNodeLabelIn(key string, values ...string) *PodBuilder {
	spec := &b.pod.Spec
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	req.NodeSelectorTerms = append(req.NodeSelectorTerms, corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: key, Operator: corev1.NodeSelectorOpIn, Values: append([]string(nil), values...),
		}},
	})
	return b
}

// Toleration adds a toleration.
func (b *PodBuilder) Toleration(t corev1.Toleration) *PodBuilder {
	b.pod.Spec.Tolerations = append(b.pod.Spec.Tolerations, t)
	return b
}

// Tolerate adds a toleration of the taint key=value with effect.
func (b *PodBuilder) Tolerate(key, value string, effect corev1.TaintEffect) *PodBuilder {
	return b.Toleration(corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: effect})
}

// ReadinessGate adds a readiness gate on the pod condition of that type.
func (b *PodBuilder) ReadinessGate(conditionType corev1.PodConditionType) *PodBuilder {
	b.pod.Spec.ReadinessGates = append(b.pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: conditionType})
	return b
}

// SchedulerName sets the scheduler that should bind the pod.
func (b *PodBuilder) SchedulerName(name string) *PodBuilder {
	b.pod.Spec.SchedulerName = name
	return b
}

// TerminationGracePeriod sets how long the pod may take to stop once deleted.
func (b *PodBuilder) TerminationGracePeriod(seconds int64) *PodBuilder {
	b.pod.Spec.TerminationGracePeriodSeconds = &seconds
	return b
}

// RestartPolicy sets the pod's restart policy.
func (b *PodBuilder) RestartPolicy(p corev1.RestartPolicy) *PodBuilder {
	b.pod.Spec.RestartPolicy = p
	return b
}

// HostNetwork runs the pod in its node's network namespace.
func (b *PodBuilder) HostNetwork() *PodBuilder {
	b.pod.Spec.HostNetwork = true
	return b
}

// Condition sets a status condition, for objects handed to code under test rather than
// created (the apiserver ignores status on create).
func (b *PodBuilder) Condition(t corev1.PodConditionType, status corev1.ConditionStatus) *PodBuilder {
	b.pod.Status.Conditions = setOrAppend(b.pod.Status.Conditions,
		func(c *corev1.PodCondition) bool { return c.Type == t },
		func(c *corev1.PodCondition) { c.Status = status },
		corev1.PodCondition{Type: t, Status: status})
	return b
}

// Phase sets the status phase; see Condition.
func (b *PodBuilder) Phase(p corev1.PodPhase) *PodBuilder {
	b.pod.Status.Phase = p
	return b
}

// Obj returns a copy of the pod built so far.
func (b *PodBuilder) Obj() *corev1.Pod {
	return b.pod.DeepCopy()
}
