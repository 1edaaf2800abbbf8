package kinds

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// UnitedDeploymentBuilder builds an apps.kruise.io/v1alpha1 UnitedDeployment.
type UnitedDeploymentBuilder struct {
	obj *appsv1alpha1.UnitedDeployment
}

// UnitedDeployment starts a UnitedDeployment selecting "app: <name>", with a CloneSet template
// of one container and no subsets.
func UnitedDeployment(name, namespace string) *UnitedDeploymentBuilder {
	sel, tmpl := builder.AppTemplate(name)
	ud := &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	ud.Spec.Selector = sel
	ud.Spec.Template.CloneSetTemplate = &appsv1alpha1.CloneSetTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec:       appsv1alpha1.CloneSetSpec{Selector: sel.DeepCopy(), Template: tmpl},
	}
	return &UnitedDeploymentBuilder{obj: ud}
}

// Replicas sets spec.replicas.
func (b *UnitedDeploymentBuilder) Replicas(n int32) *UnitedDeploymentBuilder {
	b.obj.Spec.Replicas = &n
	return b
}

// template returns the pod template of whichever kind is set.
func (b *UnitedDeploymentBuilder) template() *corev1.PodTemplateSpec {
	t := &b.obj.Spec.Template
	switch {
	case t.CloneSetTemplate != nil:
		return &t.CloneSetTemplate.Spec.Template
	case t.AdvancedStatefulSetTemplate != nil:
		return &t.AdvancedStatefulSetTemplate.Spec.Template
	case t.StatefulSetTemplate != nil:
		return &t.StatefulSetTemplate.Spec.Template
	default:
		return &t.DeploymentTemplate.Spec.Template
	}
}

// AdvancedStatefulSet switches the template to an advancedStatefulSetTemplate (Parallel).
func (b *UnitedDeploymentBuilder) AdvancedStatefulSet() *UnitedDeploymentBuilder {
	tmpl, meta := *b.template(), b.obj.Spec.Template.CloneSetTemplate.ObjectMeta
	b.obj.Spec.Template = appsv1alpha1.SubsetTemplate{AdvancedStatefulSetTemplate: &appsv1alpha1.AdvancedStatefulSetTemplateSpec{
		ObjectMeta: meta, Spec: appsv1beta1.StatefulSetSpec{Selector: b.obj.Spec.Selector.DeepCopy(), Template: tmpl, PodManagementPolicy: appsv1.ParallelPodManagement}}}
	return b
}

// StatefulSet switches the template to an apps/v1 statefulSetTemplate (Parallel).
func (b *UnitedDeploymentBuilder) StatefulSet() *UnitedDeploymentBuilder {
	tmpl, meta := *b.template(), b.obj.Spec.Template.CloneSetTemplate.ObjectMeta
	b.obj.Spec.Template = appsv1alpha1.SubsetTemplate{StatefulSetTemplate: &appsv1alpha1.StatefulSetTemplateSpec{
		ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: b.obj.Spec.Selector.DeepCopy(), Template: tmpl, PodManagementPolicy: appsv1.ParallelPodManagement}}}
	return b
}

// Deployment switches the template to a deploymentTemplate.
func (b *UnitedDeploymentBuilder) Deployment() *UnitedDeploymentBuilder {
	tmpl, meta := *b.template(), b.obj.Spec.Template.CloneSetTemplate.ObjectMeta
	b.obj.Spec.Template = appsv1alpha1.SubsetTemplate{DeploymentTemplate: &appsv1alpha1.DeploymentTemplateSpec{
		ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: b.obj.Spec.Selector.DeepCopy(), Template: tmpl}}}
	return b
}

// Image sets the image of the template's first container.
func (b *UnitedDeploymentBuilder) Image(image string) *UnitedDeploymentBuilder {
	setImage(b.template(), "", image)
	return b
}

// Zones adds one subset per zone, named after it and placed by topology.kubernetes.io/zone.
func (b *UnitedDeploymentBuilder) Zones(zones ...string) *UnitedDeploymentBuilder {
	for _, z := range zones {
		b.obj.Spec.Topology.Subsets = append(b.obj.Spec.Topology.Subsets, appsv1alpha1.Subset{Name: z,
			NodeSelectorTerm: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{z}}}}})
	}
	return b
}

// subset returns the named subset; it must have been added.
func (b *UnitedDeploymentBuilder) subset(name string) *appsv1alpha1.Subset {
	for i := range b.obj.Spec.Topology.Subsets {
		if b.obj.Spec.Topology.Subsets[i].Name == name {
			return &b.obj.Spec.Topology.Subsets[i]
		}
	}
	panic("no subset " + name)
}

// SubsetReplicas sets a subset's fixed replicas: "3" or "50%".
func (b *UnitedDeploymentBuilder) SubsetReplicas(name, v string) *UnitedDeploymentBuilder {
	b.subset(name).Replicas = ptr.To(intstr.Parse(v))
	return b
}

// SubsetBounds sets a subset's elastic minReplicas and maxReplicas; "" leaves one unset.
func (b *UnitedDeploymentBuilder) SubsetBounds(name, lo, hi string) *UnitedDeploymentBuilder {
	s := b.subset(name)
	if lo != "" {
		s.MinReplicas = ptr.To(intstr.Parse(lo))
	}
	if hi != "" {
		s.MaxReplicas = ptr.To(intstr.Parse(hi))
	}
	return b
}

// Adaptive sets the Adaptive schedule strategy with its two times, in seconds.
func (b *UnitedDeploymentBuilder) Adaptive(rescheduleCritical, unschedulableLast int32) *UnitedDeploymentBuilder {
	b.obj.Spec.Topology.ScheduleStrategy = appsv1alpha1.UnitedDeploymentScheduleStrategy{
		Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
		Adaptive: &appsv1alpha1.AdaptiveUnitedDeploymentStrategy{
			RescheduleCriticalSeconds: &rescheduleCritical, UnschedulableLastSeconds: &unschedulableLast}}
	return b
}

// Partition sets a subset's manualUpdate partition.
func (b *UnitedDeploymentBuilder) Partition(subset string, n int32) *UnitedDeploymentBuilder {
	us := &b.obj.Spec.UpdateStrategy
	us.Type = appsv1alpha1.ManualUpdateStrategyType
	if us.ManualUpdate == nil {
		us.ManualUpdate = &appsv1alpha1.ManualUpdate{Partitions: map[string]int32{}}
	}
	us.ManualUpdate.Partitions[subset] = n
	return b
}

// Obj returns the UnitedDeployment.
func (b *UnitedDeploymentBuilder) Obj() *appsv1alpha1.UnitedDeployment { return b.obj.DeepCopy() }
