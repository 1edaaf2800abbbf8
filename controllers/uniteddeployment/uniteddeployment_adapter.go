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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
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
		return statefulSets
	case t.AdvancedStatefulSetTemplate != nil:
		return advancedStatefulSets
	case t.CloneSetTemplate != nil:
		return cloneSets
	case t.DeploymentTemplate != nil:
		return deployments
	}
	return nil
}

// allAdapters lists every kind, so that workloads of a kind the template no longer names are
// found and removed.
func allAdapters() []adapter {
	return []adapter{statefulSets, advancedStatefulSets, cloneSets, deployments}
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

// subsetKind is the adapter of one subset workload kind W, whose list is L: a row of the table
// below says only what the kind does differently.
type subsetKind[W any, PW interface {
	*W
	client.Object
}, L any, PL interface {
	*L
	client.ObjectList
}] struct {
	name string
	// listed is the list's items.
	listed func(PL) []W
	// template is the UnitedDeployment's template of this kind, and its metadata.
	template func(*appsv1alpha1.UnitedDeployment) metav1.ObjectMeta
	// fill replaces the workload's spec with the template's, with the selector, replicas and
	// partition given, and returns its pod template.
	fill func(ud *appsv1alpha1.UnitedDeployment, w PW, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec
	// state reads the spec's replicas, the partition and the status counts.
	state func(w PW) workloadState
}

func (k subsetKind[W, PW, L, PL]) kind() string               { return k.name }
func (k subsetKind[W, PW, L, PL]) newObject() client.Object   { return PW(new(W)) }
func (k subsetKind[W, PW, L, PL]) newList() client.ObjectList { return PL(new(L)) }
func (k subsetKind[W, PW, L, PL]) items(l client.ObjectList) []client.Object {
	return objects[W, PW](k.listed(l.(PL)))
}
func (k subsetKind[W, PW, L, PL]) templateMeta(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
	return k.template(ud)
}
func (k subsetKind[W, PW, L, PL]) setSpec(ud *appsv1alpha1.UnitedDeployment, obj client.Object, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
	return k.fill(ud, obj.(PW), sel, replicas, partition)
}
func (k subsetKind[W, PW, L, PL]) read(obj client.Object) workloadState { return k.state(obj.(PW)) }

// counts is a workload's state before its partition: its spec's replicas and its status counts.
func counts(specReplicas *int32, replicas, ready int32) workloadState {
	return workloadState{specReplicas: ptr.Deref(specReplicas, 0), replicas: replicas, readyReplicas: ready}
}

// setRollingPartition sets the partition of a StatefulSet's rolling update, ru, making one, when
// the update type is RollingUpdate or unset (then set to RollingUpdate); OnDelete has none.
func setRollingPartition[RU any](typ *appsv1.StatefulSetUpdateStrategyType, ru **RU, field func(*RU) **int32, partition int32) {
	if t := *typ; t != "" && t != appsv1.RollingUpdateStatefulSetStrategyType {
		return
	}
	*typ = appsv1.RollingUpdateStatefulSetStrategyType
	if *ru == nil {
		*ru = new(RU)
	}
	*field(*ru) = &partition
}

var cloneSets = subsetKind[appsv1alpha1.CloneSet, *appsv1alpha1.CloneSet, appsv1alpha1.CloneSetList, *appsv1alpha1.CloneSetList]{
	name:   "CloneSet",
	listed: func(l *appsv1alpha1.CloneSetList) []appsv1alpha1.CloneSet { return l.Items },
	template: func(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
		return ud.Spec.Template.CloneSetTemplate.ObjectMeta
	},
	fill: func(ud *appsv1alpha1.UnitedDeployment, cs *appsv1alpha1.CloneSet, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
		cs.Spec = *ud.Spec.Template.CloneSetTemplate.Spec.DeepCopy()
		cs.Spec.Selector, cs.Spec.Replicas = sel, &replicas
		p := intstr.FromInt32(partition)
		cs.Spec.UpdateStrategy.Partition = &p
		return &cs.Spec.Template
	},
	state: func(cs *appsv1alpha1.CloneSet) workloadState {
		st := counts(cs.Spec.Replicas, cs.Status.Replicas, cs.Status.ReadyReplicas)
		if p := cs.Spec.UpdateStrategy.Partition; p != nil {
			n, _ := intstr.GetScaledValueFromIntOrPercent(p, int(st.specReplicas), true)
			st.partition = int32(n)
		}
		return st
	},
}

var advancedStatefulSets = subsetKind[appsv1beta1.StatefulSet, *appsv1beta1.StatefulSet, appsv1beta1.StatefulSetList, *appsv1beta1.StatefulSetList]{
	name:   "StatefulSet.apps.kruise.io",
	listed: func(l *appsv1beta1.StatefulSetList) []appsv1beta1.StatefulSet { return l.Items },
	template: func(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
		return ud.Spec.Template.AdvancedStatefulSetTemplate.ObjectMeta
	},
	fill: func(ud *appsv1alpha1.UnitedDeployment, set *appsv1beta1.StatefulSet, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
		set.Spec = *ud.Spec.Template.AdvancedStatefulSetTemplate.Spec.DeepCopy()
		set.Spec.Selector, set.Spec.Replicas = sel, &replicas
		us := &set.Spec.UpdateStrategy
		setRollingPartition(&us.Type, &us.RollingUpdate, func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) **int32 { return &ru.Partition }, partition)
		return &set.Spec.Template
	},
	state: func(set *appsv1beta1.StatefulSet) workloadState {
		st := counts(set.Spec.Replicas, set.Status.Replicas, set.Status.ReadyReplicas)
		if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			st.partition = ptr.Deref(ru.Partition, 0)
		}
		return st
	},
}

var statefulSets = subsetKind[appsv1.StatefulSet, *appsv1.StatefulSet, appsv1.StatefulSetList, *appsv1.StatefulSetList]{
	name:   "StatefulSet",
	listed: func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items },
	template: func(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
		return ud.Spec.Template.StatefulSetTemplate.ObjectMeta
	},
	fill: func(ud *appsv1alpha1.UnitedDeployment, set *appsv1.StatefulSet, sel *metav1.LabelSelector, replicas, partition int32) *corev1.PodTemplateSpec {
		set.Spec = *ud.Spec.Template.StatefulSetTemplate.Spec.DeepCopy()
		set.Spec.Selector, set.Spec.Replicas = sel, &replicas
		us := &set.Spec.UpdateStrategy
		setRollingPartition(&us.Type, &us.RollingUpdate, func(ru *appsv1.RollingUpdateStatefulSetStrategy) **int32 { return &ru.Partition }, partition)
		return &set.Spec.Template
	},
	state: func(set *appsv1.StatefulSet) workloadState {
		st := counts(set.Spec.Replicas, set.Status.Replicas, set.Status.ReadyReplicas)
		if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			st.partition = ptr.Deref(ru.Partition, 0)
		}
		return st
	},
}

// deployments runs a subset as a Deployment. A Deployment has no partition: the template change
// reaches all its pods, as in 1.8.
var deployments = subsetKind[appsv1.Deployment, *appsv1.Deployment, appsv1.DeploymentList, *appsv1.DeploymentList]{
	name:   "Deployment",
	listed: func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items },
	template: func(ud *appsv1alpha1.UnitedDeployment) metav1.ObjectMeta {
		return ud.Spec.Template.DeploymentTemplate.ObjectMeta
	},
	fill: func(ud *appsv1alpha1.UnitedDeployment, d *appsv1.Deployment, sel *metav1.LabelSelector, replicas, _ int32) *corev1.PodTemplateSpec {
		d.Spec = *ud.Spec.Template.DeploymentTemplate.Spec.DeepCopy()
		d.Spec.Selector, d.Spec.Replicas = sel, &replicas
		return &d.Spec.Template
	},
	state: func(d *appsv1.Deployment) workloadState {
		return counts(d.Spec.Replicas, d.Status.Replicas, d.Status.ReadyReplicas)
	},
}
