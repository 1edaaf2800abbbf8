package persistentpodstate

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ordinals"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
)

// workload is what the controller needs of a StatefulSet, apps/v1 or Advanced.
type workload struct {
	ref      appsv1alpha1.TargetReference
	uid      types.UID
	replicas int
	// start is the first ordinal; reserved are the ordinals skipped (Advanced only).
	start    int
	reserved []intstr.IntOrString
	deleting bool
}

// ordinals are the ordinals the workload's pods take at its current size: from start, skipping
// the reserved ones, until replicas are counted. It is arithmetic over the reserved ranges
// (controllers/internal/ordinals), whatever replicas is. Entries that do not parse reserve
// nothing; the StatefulSet webhook refuses them.
func (w *workload) ordinals() ordinals.Set {
	r, _ := ordinals.ParseReserved(w.reserved, field.NewPath("spec", "reserveOrdinals"))
	return ordinals.New(w.start, w.replicas, r)
}

// ordinalOf returns the ordinal at the end of a StatefulSet pod's name.
func ordinalOf(pod string) (int, bool) {
	i := strings.LastIndex(pod, "-")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(pod[i+1:])
	return n, err == nil && n >= 0
}

// topologyKeys are the node label keys a PersistentPodState records.
func topologyKeys(spec *appsv1alpha1.PersistentPodStateSpec) sets.Set[string] {
	keys := sets.New[string]()
	if spec.RequiredPersistentTopology != nil {
		keys.Insert(spec.RequiredPersistentTopology.NodeTopologyKeys...)
	}
	for _, p := range spec.PreferredPersistentTopology {
		keys.Insert(p.Preference.NodeTopologyKeys...)
	}
	return keys
}

// computeStatus is the status after one pass. w is the target (nil when it does not exist);
// pods are its pods by name; nodes its pods' nodes by name.
//   - With no target, or a target being deleted, every state is dropped.
//   - A Ready pod on a node has its state recorded: the node, the node's values of the
//     topology keys and the pod's values of the annotation keys. A state that still names
//     the pod's node and the same keys is kept as it is, so a relabelled node does not move
//     a pod's recorded zone while it runs.
//   - A pod whose node is unknown keeps its old state.
//   - Under WhenScaled (the default), the state of a pod the workload no longer has at its
//     size, and that no longer exists, is dropped; WhenDeleted keeps it for a later scale-out.
func computeStatus(pps *appsv1alpha1.PersistentPodState, w *workload, pods map[string]*corev1.Pod, nodes map[string]*corev1.Node) appsv1alpha1.PersistentPodStateStatus {
	status := appsv1alpha1.PersistentPodStateStatus{ObservedGeneration: pps.Generation}
	if w == nil || w.deleting {
		return status
	}
	states := map[string]appsv1alpha1.PodState{}
	for name, s := range pps.Status.PodStates {
		states[name] = *s.DeepCopy()
	}
	keys := topologyKeys(&pps.Spec)
	annotationKeys := sets.New[string]()
	for _, a := range pps.Spec.PersistentPodAnnotations {
		annotationKeys.Insert(a.Key)
	}
	for name, pod := range pods {
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || !podsort.IsReady(pod) {
			continue
		}
		if old, ok := states[name]; ok && old.NodeName == pod.Spec.NodeName &&
			keys.Equal(sets.KeySet(old.NodeTopologyLabels)) && annotationKeys.Equal(sets.KeySet(old.Annotations)) {
			continue
		}
		node, ok := nodes[pod.Spec.NodeName]
		if !ok {
			continue
		}
		s := appsv1alpha1.PodState{NodeName: pod.Spec.NodeName}
		for _, k := range sets.List(keys) {
			if v, ok := node.Labels[k]; ok {
				s.NodeTopologyLabels = setKey(s.NodeTopologyLabels, k, v)
			}
		}
		for _, k := range sets.List(annotationKeys) {
			if v, ok := pod.Annotations[k]; ok {
				s.Annotations = setKey(s.Annotations, k, v)
			}
		}
		states[name] = s
	}
	if pps.Spec.PersistentPodStateRetentionPolicy != appsv1alpha1.PersistentPodStateRetentionPolicyWhenDeleted {
		kept := w.ordinals()
		for name := range states {
			o, ok := ordinalOf(name)
			if !ok || kept.Has(o) {
				continue
			}
			if _, exists := pods[name]; !exists {
				delete(states, name)
			}
		}
	}
	if len(states) > 0 {
		status.PodStates = states
	}
	return status
}

func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// generated is the PersistentPodState a workload's annotations ask for, or nil when they ask
// for none: kruise.io/auto-generate-persistent-pod-state "true" and a required or preferred
// topology. It is named after the workload and controlled by it.
func generated(ref appsv1alpha1.TargetReference, namespace string, uid types.UID, annotations map[string]string) *appsv1alpha1.PersistentPodState {
	if annotations[appsv1alpha1.AnnotationAutoGeneratePersistentPodState] != "true" {
		return nil
	}
	required := splitKeys(annotations[appsv1alpha1.AnnotationRequiredPersistentTopology])
	preferred := splitKeys(annotations[appsv1alpha1.AnnotationPreferredPersistentTopology])
	if len(required) == 0 && len(preferred) == 0 {
		return nil
	}
	pps := &appsv1alpha1.PersistentPodState{
		ObjectMeta: metav1.ObjectMeta{
			Name: ref.Name, Namespace: namespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: uid,
				// No blockOwnerDeletion: under OwnerReferencesPermissionEnforcement it would need
				// update on the finalizers of apps/v1 StatefulSets, which the manager lacks.
				Controller: ptr.To(true),
			}},
		},
		Spec: appsv1alpha1.PersistentPodStateSpec{TargetReference: ref},
	}
	if len(required) > 0 {
		pps.Spec.RequiredPersistentTopology = &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: required}
	}
	if len(preferred) > 0 {
		pps.Spec.PreferredPersistentTopology = []appsv1alpha1.PreferredTopologyTerm{{Weight: 100, Preference: appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: preferred}}}
	}
	for _, k := range splitKeys(annotations[appsv1alpha1.AnnotationPersistentPodAnnotations]) {
		pps.Spec.PersistentPodAnnotations = append(pps.Spec.PersistentPodAnnotations, appsv1alpha1.PersistentPodAnnotation{Key: k})
	}
	return pps
}

// generatingAnnotations are the workload annotations whose change makes the generator write its
// PersistentPodState again; any other change (a scale, a new template) leaves it, and what a
// user changed in it, alone.
var generatingAnnotations = []string{appsv1alpha1.AnnotationAutoGeneratePersistentPodState,
	appsv1alpha1.AnnotationRequiredPersistentTopology, appsv1alpha1.AnnotationPreferredPersistentTopology}

// generatingEvents lets the generator see a workload created with annotations that ask for a
// PersistentPodState, and an update that changes one of generatingAnnotations, as 1.8 does.
// Deletions need nothing: the generated PersistentPodState is owned by the workload.
var generatingEvents = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool {
		a := e.Object.GetAnnotations()
		return a[appsv1alpha1.AnnotationAutoGeneratePersistentPodState] == "true" &&
			(a[appsv1alpha1.AnnotationRequiredPersistentTopology] != "" || a[appsv1alpha1.AnnotationPreferredPersistentTopology] != "")
	},
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
		for _, k := range generatingAnnotations {
			if before[k] != after[k] {
				return true
			}
		}
		return false
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// splitKeys splits a comma-separated annotation value, dropping blanks.
func splitKeys(v string) []string {
	var out []string
	for _, k := range strings.Split(v, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}
