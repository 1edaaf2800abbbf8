package uniteddeployment

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
)

// adapter is what the controller needs of one subset workload kind. Each kind maps the
// UnitedDeployment's template, a subset's replicas and its partition onto its own spec, and
// reads back its replicas, partition and status.
type adapter interface {
	// kind names the workload kind in events and logs.
	kind() string
	newObject() client.Object
	newList() client.ObjectList
	items(client.ObjectList) []client.Object
	// templateMeta is the metadata of the UnitedDeployment's template for this kind.
	templateMeta(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta
	// setSpec replaces obj's spec with the template's, with the selector, replicas and
	// partition given, and returns its pod template for the subset's additions.
	setSpec(ud *appsv1alpha1.UnitedDeployment, obj client.Object, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec
	// read returns what the workload holds now.
	read(obj client.Object) workloadState
}

// workloadState is what one subset workload holds.
type workloadState struct {
	specReplicas, partition int32
	replicas, readyReplicas int32
}

// adapterFor returns the adapter for the template the UnitedDeployment sets, or nil.
func adapterFor(t appsv1alpha1.SubsetTemplate) adapter {
	switch {
	case t.StatefulSetTemplate != nil:
		return statefulSetAdapter{}
	case t.AdvancedStatefulSetTemplate != nil:
		return advancedStatefulSetAdapter{}
	case t.CloneSetTemplate != nil:
		return cloneSetAdapter{}
	case t.DeploymentTemplate != nil:
		return deploymentAdapter{}
	}
	return nil
}

// allAdapters lists every kind, so that workloads of a kind the template no longer names are
// found and removed.
func allAdapters() []adapter {
	return []adapter{statefulSetAdapter{}, advancedStatefulSetAdapter{}, cloneSetAdapter{}, deploymentAdapter{}}
}

// objects lists a typed list's items as client.Objects.
func objects[T any, PT interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, 0, len(items))
	for i := range items {
		out = append(out, PT(&items[i]))
	}
	return out
}

// subsetPrefix is the generateName of a subset workload: <ud>-<subset>-, or <ud>- when that
// would not be a valid name.
func subsetPrefix(ud, subset string) string {
	p := fmt.Sprintf("%s-%s-", ud, subset)
	if len(validation.NameIsDNSSubdomain(p, true)) != 0 {
		return ud + "-"
	}
	return p
}

// buildSubset fills obj (new or existing) as the workload of the named subset at revision, with
// replicas and partition. Labels and annotations already on obj are kept; the template's, the
// selector's, the revision and the subset name are set over them.
func buildSubset(a adapter, ud *appsv1alpha1.UnitedDeployment, subset *appsv1alpha1.Subset, revision string, replicas, partition int32, obj client.Object) error {
	meta := a.templateMeta(ud)
	obj.SetNamespace(ud.Namespace)
	if obj.GetName() == "" {
		obj.SetGenerateName(subsetPrefix(ud.Name, subset.Name))
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range meta.Labels {
		labels[k] = v
	}
	for k, v := range ud.Spec.Selector.MatchLabels {
		labels[k] = v
	}
	labels[appsv1alpha1.ControllerRevisionHashLabelKey] = revision
	labels[appsv1alpha1.SubSetNameLabelKey] = subset.Name
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range meta.Annotations {
		annotations[k] = v
	}
	annotations[appsv1alpha1.AnnotationSubsetPatchKey] = string(subset.Patch.Raw)
	obj.SetAnnotations(annotations)
	obj.SetOwnerReferences(ownerRefs(obj.GetOwnerReferences(), ud))

	sel := ud.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[appsv1alpha1.SubSetNameLabelKey] = subset.Name
	tmpl := a.setSpec(ud, obj, sel, replicas, partition)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[appsv1alpha1.SubSetNameLabelKey] = subset.Name
	tmpl.Labels[appsv1alpha1.ControllerRevisionHashLabelKey] = revision
	addNodeSelectorTerm(&tmpl.Spec, subset.NodeSelectorTerm)
	tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, subset.Tolerations...)
	if len(subset.Patch.Raw) > 0 {
		patched, err := applyPatch(*tmpl, subset.Patch.Raw)
		if err != nil {
			return fmt.Errorf("spec.topology.subsets[%s].patch: %w", subset.Name, err)
		}
		*tmpl = patched
	}
	return nil
}

// ownerRefs makes ud the controller of a subset workload, keeping other owners.
func ownerRefs(refs []metav1.OwnerReference, ud *appsv1alpha1.UnitedDeployment) []metav1.OwnerReference {
	own := *metav1.NewControllerRef(ud, controllerKind)
	out := []metav1.OwnerReference{own}
	for _, r := range refs {
		if r.UID != ud.UID && (r.Controller == nil || !*r.Controller) {
			out = append(out, r)
		}
	}
	return out
}

// addNodeSelectorTerm ANDs the subset's match expressions into every required node selector
// term of the pod, making one when there is none.
func addNodeSelectorTerm(spec *corev1.PodSpec, term corev1.NodeSelectorTerm) {
	if len(term.MatchExpressions) == 0 {
		return
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	req := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil {
		req = &corev1.NodeSelector{}
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = req
	}
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchExpressions = append(req.NodeSelectorTerms[i].MatchExpressions, term.MatchExpressions...)
	}
}

// applyPatch merges a subset's strategic merge patch into the pod template.
func applyPatch(tmpl corev1.PodTemplateSpec, patch []byte) (corev1.PodTemplateSpec, error) {
	raw, err := json.Marshal(tmpl)
	if err != nil {
		return tmpl, fmt.Errorf("encode pod template: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(raw, patch, &corev1.PodTemplateSpec{})
	if err != nil {
		return tmpl, fmt.Errorf("merge into the pod template: %w", err)
	}
	var out corev1.PodTemplateSpec
	if err := json.Unmarshal(merged, &out); err != nil {
		return tmpl, fmt.Errorf("decode patched pod template: %w", err)
	}
	return out, nil
}

type cloneSetAdapter struct{}

func (cloneSetAdapter) kind() string               { return "CloneSet" }
func (cloneSetAdapter) newObject() client.Object   { return &appsv1alpha1.CloneSet{} }
func (cloneSetAdapter) newList() client.ObjectList { return &appsv1alpha1.CloneSetList{} }
func (cloneSetAdapter) items(l client.ObjectList) []client.Object {
	return objects[appsv1alpha1.CloneSet](l.(*appsv1alpha1.CloneSetList).Items)
}
func (cloneSetAdapter) templateMeta(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
	return ud.Spec.Template.CloneSetTemplate.ObjectMeta
}
func (cloneSetAdapter) setSpec(ud *appsv1alpha1.UnitedDeployment, obj client.Object, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	cs := obj.(*appsv1alpha1.CloneSet)
	cs.Spec = *ud.Spec.Template.CloneSetTemplate.Spec.DeepCopy()
	cs.Spec.Selector = sel
	cs.Spec.Replicas = &replicas
	p := intstr.FromInt32(partition)
	cs.Spec.UpdateStrategy.Partition = &p
	return &cs.Spec.Template
}
func (cloneSetAdapter) read(obj client.Object) workloadState {
	cs := obj.(*appsv1alpha1.CloneSet)
	st := workloadState{replicas: cs.Status.Replicas, readyReplicas: cs.Status.ReadyReplicas}
	st.specReplicas, _ = workloadref.SpecReplicas(obj)
	if p := cs.Spec.UpdateStrategy.Partition; p != nil {
		n, _ := intstr.GetScaledValueFromIntOrPercent(p, int(st.specReplicas), true)
		st.partition = int32(n)
	}
	return st
}

type advancedStatefulSetAdapter struct{}

func (advancedStatefulSetAdapter) kind() string               { return "StatefulSet.apps.kruise.io" }
func (advancedStatefulSetAdapter) newObject() client.Object   { return &appsv1beta1.StatefulSet{} }
func (advancedStatefulSetAdapter) newList() client.ObjectList { return &appsv1beta1.StatefulSetList{} }
func (advancedStatefulSetAdapter) items(l client.ObjectList) []client.Object {
	return objects[appsv1beta1.StatefulSet](l.(*appsv1beta1.StatefulSetList).Items)
}
func (advancedStatefulSetAdapter) templateMeta(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
	return ud.Spec.Template.AdvancedStatefulSetTemplate.ObjectMeta
}
func (advancedStatefulSetAdapter) setSpec(ud *appsv1alpha1.UnitedDeployment, obj client.Object, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	set := obj.(*appsv1beta1.StatefulSet)
	set.Spec = *ud.Spec.Template.AdvancedStatefulSetTemplate.Spec.DeepCopy()
	set.Spec.Selector = sel
	set.Spec.Replicas = &replicas
	if t := set.Spec.UpdateStrategy.Type; t == "" || t == appsv1.RollingUpdateStatefulSetStrategyType {
		set.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if set.Spec.UpdateStrategy.RollingUpdate == nil {
			set.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.RollingUpdateStatefulSetStrategy{}
		}
		set.Spec.UpdateStrategy.RollingUpdate.Partition = &partition
	}
	return &set.Spec.Template
}
func (advancedStatefulSetAdapter) read(obj client.Object) workloadState {
	set := obj.(*appsv1beta1.StatefulSet)
	st := workloadState{replicas: set.Status.Replicas, readyReplicas: set.Status.ReadyReplicas}
	st.specReplicas, _ = workloadref.SpecReplicas(obj)
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		st.partition = *ru.Partition
	}
	return st
}

type statefulSetAdapter struct{}

func (statefulSetAdapter) kind() string               { return "StatefulSet" }
func (statefulSetAdapter) newObject() client.Object   { return &appsv1.StatefulSet{} }
func (statefulSetAdapter) newList() client.ObjectList { return &appsv1.StatefulSetList{} }
func (statefulSetAdapter) items(l client.ObjectList) []client.Object {
	return objects[appsv1.StatefulSet](l.(*appsv1.StatefulSetList).Items)
}
func (statefulSetAdapter) templateMeta(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
	return ud.Spec.Template.StatefulSetTemplate.ObjectMeta
}
func (statefulSetAdapter) setSpec(ud *appsv1alpha1.UnitedDeployment, obj client.Object, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	set := obj.(*appsv1.StatefulSet)
	set.Spec = *ud.Spec.Template.StatefulSetTemplate.Spec.DeepCopy()
	set.Spec.Selector = sel
	set.Spec.Replicas = &replicas
	if t := set.Spec.UpdateStrategy.Type; t == "" || t == appsv1.RollingUpdateStatefulSetStrategyType {
		set.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if set.Spec.UpdateStrategy.RollingUpdate == nil {
			set.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		set.Spec.UpdateStrategy.RollingUpdate.Partition = &partition
	}
	return &set.Spec.Template
}
func (statefulSetAdapter) read(obj client.Object) workloadState {
	set := obj.(*appsv1.StatefulSet)
	st := workloadState{replicas: set.Status.Replicas, readyReplicas: set.Status.ReadyReplicas}
	st.specReplicas, _ = workloadref.SpecReplicas(obj)
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		st.partition = *ru.Partition
	}
	return st
}

// deploymentAdapter runs a subset as a Deployment. A Deployment has no partition: the
// template change reaches all its pods, as in 1.8.
type deploymentAdapter struct{}

func (deploymentAdapter) kind() string               { return "Deployment" }
func (deploymentAdapter) newObject() client.Object   { return &appsv1.Deployment{} }
func (deploymentAdapter) newList() client.ObjectList { return &appsv1.DeploymentList{} }
func (deploymentAdapter) items(l client.ObjectList) []client.Object {
	return objects[appsv1.Deployment](l.(*appsv1.DeploymentList).Items)
}
func (deploymentAdapter) templateMeta(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
	return ud.Spec.Template.DeploymentTemplate.ObjectMeta
}
func (deploymentAdapter) setSpec(ud *appsv1alpha1.UnitedDeployment, obj client.Object, sel *metav1.LabelSelector, replicas, _ int32) *corev1.PodTemplateSpec {
	d := obj.(*appsv1.Deployment)
	d.Spec = *ud.Spec.Template.DeploymentTemplate.Spec.DeepCopy()
	d.Spec.Selector = sel
	d.Spec.Replicas = &replicas
	return &d.Spec.Template
}
func (deploymentAdapter) read(obj client.Object) workloadState {
	d := obj.(*appsv1.Deployment)
	st := workloadState{replicas: d.Status.Replicas, readyReplicas: d.Status.ReadyReplicas}
	st.specReplicas, _ = workloadref.SpecReplicas(obj)
	return st
}
