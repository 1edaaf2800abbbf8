// Package kinds builds the add-on's own kinds for tests, in the same fluent style as package
// builder, which stays free of the add-on's APIs so that the framework may use it.
package kinds

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// setImage sets the image of the named container, or of the first one when name is empty.
func setImage(t *corev1.PodTemplateSpec, container, image string) {
	for i := range t.Spec.Containers {
		if container == "" || t.Spec.Containers[i].Name == container {
			t.Spec.Containers[i].Image = image
			return
		}
	}
	t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: container, Image: image})
}

// addReadinessGate adds the gate once.
func addReadinessGate(t *corev1.PodTemplateSpec, c corev1.PodConditionType) {
	for _, g := range t.Spec.ReadinessGates {
		if g.ConditionType == c {
			return
		}
	}
	t.Spec.ReadinessGates = append(t.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: c})
}

// CloneSetBuilder builds a CloneSet.
type CloneSetBuilder struct{ obj *appsv1alpha1.CloneSet }

// CloneSet starts a CloneSet of one replica selecting "app: <name>".
func CloneSet(name, namespace string) *CloneSetBuilder {
	sel, tmpl := builder.AppTemplate(name)
	return &CloneSetBuilder{obj: &appsv1alpha1.CloneSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: tmpl},
	}}
}

// Replicas sets spec.replicas.
func (b *CloneSetBuilder) Replicas(n int32) *CloneSetBuilder { b.obj.Spec.Replicas = &n; return b }

// Image sets the image of the first container.
func (b *CloneSetBuilder) Image(image string) *CloneSetBuilder {
	setImage(&b.obj.Spec.Template, "", image)
	return b
}

// Resources sets the requests and limits of the first container.
func (b *CloneSetBuilder) Resources(r corev1.ResourceRequirements) *CloneSetBuilder {
	b.obj.Spec.Template.Spec.Containers[0].Resources = r
	return b
}

// ContainerImage sets the image of the named container, adding it when absent.
func (b *CloneSetBuilder) ContainerImage(container, image string) *CloneSetBuilder {
	setImage(&b.obj.Spec.Template, container, image)
	return b
}

// UpdateType sets spec.updateStrategy.type.
func (b *CloneSetBuilder) UpdateType(t appsv1alpha1.CloneSetUpdateStrategyType) *CloneSetBuilder {
	b.obj.Spec.UpdateStrategy.Type = t
	return b
}

// Partition sets spec.updateStrategy.partition, e.g. intstr.FromInt32(2) or intstr.FromString("40%").
func (b *CloneSetBuilder) Partition(p intstr.IntOrString) *CloneSetBuilder {
	b.obj.Spec.UpdateStrategy.Partition = &p
	return b
}

// MaxUnavailable sets spec.updateStrategy.maxUnavailable.
func (b *CloneSetBuilder) MaxUnavailable(v intstr.IntOrString) *CloneSetBuilder {
	b.obj.Spec.UpdateStrategy.MaxUnavailable = &v
	return b
}

// MaxSurge sets spec.updateStrategy.maxSurge.
func (b *CloneSetBuilder) MaxSurge(v intstr.IntOrString) *CloneSetBuilder {
	b.obj.Spec.UpdateStrategy.MaxSurge = &v
	return b
}

// Paused sets spec.updateStrategy.paused.
func (b *CloneSetBuilder) Paused(p bool) *CloneSetBuilder {
	b.obj.Spec.UpdateStrategy.Paused = p
	return b
}

// PodsToDelete sets spec.scaleStrategy.podsToDelete.
func (b *CloneSetBuilder) PodsToDelete(names ...string) *CloneSetBuilder {
	b.obj.Spec.ScaleStrategy.PodsToDelete = names
	return b
}

// ReadinessGate adds a readiness gate to the pod template.
func (b *CloneSetBuilder) ReadinessGate(c corev1.PodConditionType) *CloneSetBuilder {
	addReadinessGate(&b.obj.Spec.Template, c)
	return b
}

// MinReadySeconds sets spec.minReadySeconds.
func (b *CloneSetBuilder) MinReadySeconds(n int32) *CloneSetBuilder {
	b.obj.Spec.MinReadySeconds = n
	return b
}

// PreDeleteHook sets spec.lifecycle.preDelete to hold pods that carry the label key=value.
func (b *CloneSetBuilder) PreDeleteHook(key, value string) *CloneSetBuilder {
	if b.obj.Spec.Lifecycle == nil {
		b.obj.Spec.Lifecycle = &appspub.Lifecycle{}
	}
	b.obj.Spec.Lifecycle.PreDelete = &appspub.LifecycleHook{LabelsHandler: map[string]string{key: value}}
	return b
}

// TemplateLabel adds a label to the pod template.
func (b *CloneSetBuilder) TemplateLabel(key, value string) *CloneSetBuilder {
	b.obj.Spec.Template.Labels[key] = value
	return b
}

// TemplateAnnotation adds an annotation to the pod template.
func (b *CloneSetBuilder) TemplateAnnotation(key, value string) *CloneSetBuilder {
	metav1.SetMetaDataAnnotation(&b.obj.Spec.Template.ObjectMeta, key, value)
	return b
}

// Env sets an environment variable on the first container.
func (b *CloneSetBuilder) Env(name, value string) *CloneSetBuilder {
	c := &b.obj.Spec.Template.Spec.Containers[0]
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return b
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
	return b
}

// VolumeClaimTemplate adds a volume claim template of the given size, mounted at /data.
func (b *CloneSetBuilder) VolumeClaimTemplate(name, size string) *CloneSetBuilder {
	b.obj.Spec.VolumeClaimTemplates = append(b.obj.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	})
	c := &b.obj.Spec.Template.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: "/data"})
	return b
}

// Obj returns the built object.
func (b *CloneSetBuilder) Obj() *appsv1alpha1.CloneSet { return b.obj }

// StatefulSetBuilder builds an Advanced StatefulSet at the storage version, v1beta1.
type StatefulSetBuilder struct{ obj *appsv1beta1.StatefulSet }

// StatefulSet starts an Advanced StatefulSet of one replica selecting "app: <name>".
func StatefulSet(name, namespace string) *StatefulSetBuilder {
	sel, tmpl := builder.AppTemplate(name)
	return &StatefulSetBuilder{obj: &appsv1beta1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1beta1.GroupVersion.String(), Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       appsv1beta1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: tmpl, ServiceName: name},
	}}
}

// Replicas sets spec.replicas.
func (b *StatefulSetBuilder) Replicas(n int32) *StatefulSetBuilder {
	b.obj.Spec.Replicas = &n
	return b
}

// Image sets the image of the first container.
func (b *StatefulSetBuilder) Image(image string) *StatefulSetBuilder {
	setImage(&b.obj.Spec.Template, "", image)
	return b
}

// Resources sets the requests and limits of the first container.
func (b *StatefulSetBuilder) Resources(r corev1.ResourceRequirements) *StatefulSetBuilder {
	b.obj.Spec.Template.Spec.Containers[0].Resources = r
	return b
}

// ReserveOrdinals sets spec.reserveOrdinals.
func (b *StatefulSetBuilder) ReserveOrdinals(o ...intstr.IntOrString) *StatefulSetBuilder {
	b.obj.Spec.ReserveOrdinals = o
	return b
}

// PodUpdatePolicy sets the rolling update's podUpdatePolicy.
func (b *StatefulSetBuilder) PodUpdatePolicy(p appsv1beta1.PodUpdateStrategyType) *StatefulSetBuilder {
	b.rollingUpdate().PodUpdatePolicy = p
	return b
}

// Partition sets the rolling update's partition.
func (b *StatefulSetBuilder) Partition(p int32) *StatefulSetBuilder {
	b.rollingUpdate().Partition = &p
	return b
}

// Parallel sets spec.podManagementPolicy to Parallel.
func (b *StatefulSetBuilder) Parallel() *StatefulSetBuilder {
	b.obj.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	return b
}

// MaxUnavailable sets the rolling update's maxUnavailable.
func (b *StatefulSetBuilder) MaxUnavailable(v intstr.IntOrString) *StatefulSetBuilder {
	b.rollingUpdate().MaxUnavailable = &v
	return b
}

// ReadinessGate adds a readiness gate to the pod template.
func (b *StatefulSetBuilder) ReadinessGate(c corev1.PodConditionType) *StatefulSetBuilder {
	addReadinessGate(&b.obj.Spec.Template, c)
	return b
}

func (b *StatefulSetBuilder) rollingUpdate() *appsv1beta1.RollingUpdateStatefulSetStrategy {
	if b.obj.Spec.UpdateStrategy.RollingUpdate == nil {
		b.obj.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.RollingUpdateStatefulSetStrategy{}
	}
	return b.obj.Spec.UpdateStrategy.RollingUpdate
}

// Obj returns the built object.
func (b *StatefulSetBuilder) Obj() *appsv1beta1.StatefulSet { return b.obj }

// DaemonSetBuilder builds an Advanced DaemonSet.
type DaemonSetBuilder struct{ obj *appsv1alpha1.DaemonSet }

// DaemonSet starts an Advanced DaemonSet selecting "app: <name>".
func DaemonSet(name, namespace string) *DaemonSetBuilder {
	sel, tmpl := builder.AppTemplate(name)
	return &DaemonSetBuilder{obj: &appsv1alpha1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       appsv1alpha1.DaemonSetSpec{Selector: sel, Template: tmpl},
	}}
}

// Image sets the image of the first container.
func (b *DaemonSetBuilder) Image(image string) *DaemonSetBuilder {
	setImage(&b.obj.Spec.Template, "", image)
	return b
}

// NodeSelector sets the pod template's node selector.
func (b *DaemonSetBuilder) NodeSelector(sel map[string]string) *DaemonSetBuilder {
	b.obj.Spec.Template.Spec.NodeSelector = sel
	return b
}

// rollingUpdate returns the rolling update, made a RollingUpdate strategy first.
func (b *DaemonSetBuilder) rollingUpdate() *appsv1alpha1.RollingUpdateDaemonSet {
	us := &b.obj.Spec.UpdateStrategy
	us.Type = appsv1alpha1.RollingUpdateDaemonSetStrategyType
	if us.RollingUpdate == nil {
		us.RollingUpdate = &appsv1alpha1.RollingUpdateDaemonSet{}
	}
	return us.RollingUpdate
}

// RollingUpdateType sets rollingUpdate.rollingUpdateType; InPlaceIfPossible also adds the
// InPlaceUpdateReady readiness gate, as in-place updates want.
func (b *DaemonSetBuilder) RollingUpdateType(t appsv1alpha1.RollingUpdateType) *DaemonSetBuilder {
	b.rollingUpdate().Type = t
	if t == appsv1alpha1.InplaceRollingUpdateType {
		addReadinessGate(&b.obj.Spec.Template, appspub.InPlaceUpdateReady)
	}
	return b
}

// MaxUnavailable sets rollingUpdate.maxUnavailable.
func (b *DaemonSetBuilder) MaxUnavailable(v intstr.IntOrString) *DaemonSetBuilder {
	b.rollingUpdate().MaxUnavailable = &v
	return b
}

// MaxSurge sets rollingUpdate.maxSurge.
func (b *DaemonSetBuilder) MaxSurge(v intstr.IntOrString) *DaemonSetBuilder {
	b.rollingUpdate().MaxSurge = &v
	return b
}

// Partition sets rollingUpdate.partition.
func (b *DaemonSetBuilder) Partition(n int32) *DaemonSetBuilder {
	b.rollingUpdate().Partition = &n
	return b
}

// Paused sets rollingUpdate.paused.
func (b *DaemonSetBuilder) Paused(p bool) *DaemonSetBuilder {
	b.rollingUpdate().Paused = &p
	return b
}

// UpdateSelector sets rollingUpdate.selector to match the given node labels.
func (b *DaemonSetBuilder) UpdateSelector(labels map[string]string) *DaemonSetBuilder {
	b.rollingUpdate().Selector = &metav1.LabelSelector{MatchLabels: labels}
	return b
}

// OnDelete sets the OnDelete update strategy.
func (b *DaemonSetBuilder) OnDelete() *DaemonSetBuilder {
	b.obj.Spec.UpdateStrategy = appsv1alpha1.DaemonSetUpdateStrategy{Type: appsv1alpha1.OnDeleteDaemonSetStrategyType}
	return b
}

// MinReadySeconds sets spec.minReadySeconds.
func (b *DaemonSetBuilder) MinReadySeconds(n int32) *DaemonSetBuilder {
	b.obj.Spec.MinReadySeconds = n
	return b
}

// BurstReplicas sets spec.burstReplicas.
func (b *DaemonSetBuilder) BurstReplicas(v intstr.IntOrString) *DaemonSetBuilder {
	b.obj.Spec.BurstReplicas = &v
	return b
}

// PreDeleteHook holds pods that carry the label key=value in PreparingDelete.
func (b *DaemonSetBuilder) PreDeleteHook(key, value string) *DaemonSetBuilder {
	b.obj.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{key: value}}}
	return b
}

// Toleration adds a toleration to the pod template.
func (b *DaemonSetBuilder) Toleration(t corev1.Toleration) *DaemonSetBuilder {
	b.obj.Spec.Template.Spec.Tolerations = append(b.obj.Spec.Template.Spec.Tolerations, t)
	return b
}

// Obj returns the built object.
func (b *DaemonSetBuilder) Obj() *appsv1alpha1.DaemonSet { return b.obj }

// BroadcastJobBuilder builds a BroadcastJob.
type BroadcastJobBuilder struct{ obj *appsv1alpha1.BroadcastJob }

// BroadcastJob starts a BroadcastJob whose pod never restarts.
func BroadcastJob(name, namespace string) *BroadcastJobBuilder {
	_, tmpl := builder.AppTemplate(name)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &BroadcastJobBuilder{obj: &appsv1alpha1.BroadcastJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "BroadcastJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       appsv1alpha1.BroadcastJobSpec{Template: tmpl},
	}}
}

// Image sets the image of the first container.
func (b *BroadcastJobBuilder) Image(image string) *BroadcastJobBuilder {
	setImage(&b.obj.Spec.Template, "", image)
	return b
}

// Obj returns the built object.
func (b *BroadcastJobBuilder) Obj() *appsv1alpha1.BroadcastJob { return b.obj }
