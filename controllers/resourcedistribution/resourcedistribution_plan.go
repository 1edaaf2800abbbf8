package resourcedistribution

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// forbidden are the namespaces allNamespaces never selects; naming them in
// includedNamespaces or matching them by label still does.
var forbidden = sets.New("kube-system", "kube-public")

// DecodeResource returns spec.resource as an object, or an error saying what is wrong with it.
func DecodeResource(raw []byte) (*unstructured.Unstructured, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty resource")
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	return u, nil
}

// HashResource is the hash each copy records of spec.resource.
func HashResource(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// targetNamespaces splits the existing namespaces into the ones targets select and the
// others. Included namespaces that do not exist or are terminating are selected too: they
// count as desired and are reported as NamespaceNotExists. The namespaces of excluded
// (--resourcedistribution-excluded-namespaces) are never selected, as if every spec listed
// them in excludedNamespaces.
func targetNamespaces(targets *appsv1alpha1.ResourceDistributionTargets, namespaces []corev1.Namespace, excluded sets.Set[string]) (matched, unmatched []string, err error) {
	selector := labels.Nothing()
	if s := targets.NamespaceLabelSelector; len(s.MatchLabels) > 0 || len(s.MatchExpressions) > 0 {
		if selector, err = metav1.LabelSelectorAsSelector(&s); err != nil {
			return nil, nil, fmt.Errorf("spec.targets.namespaceLabelSelector: %w", err)
		}
	}
	in := sets.New[string]()
	for _, n := range targets.IncludedNamespaces.List {
		in.Insert(n.Name)
	}
	all := sets.New[string]()
	for i := range namespaces {
		ns := &namespaces[i]
		all.Insert(ns.Name)
		// A terminating namespace is no target of allNamespaces or of the selector: nothing
		// can be created there any more.
		if ns.DeletionTimestamp != nil {
			continue
		}
		if (targets.AllNamespaces && !forbidden.Has(ns.Name)) || selector.Matches(labels.Set(ns.Labels)) {
			in.Insert(ns.Name)
		}
	}
	for _, n := range targets.ExcludedNamespaces.List {
		in.Delete(n.Name)
	}
	in = in.Difference(excluded)
	return sets.List(in), sets.List(all.Difference(in)), nil
}

// action is what one namespace needs.
type action string

const (
	actionNone     action = "none"
	actionCreate   action = "create"
	actionUpdate   action = "update"
	actionDelete   action = "delete"
	actionConflict action = "conflict"
	actionMissing  action = "namespace missing"
)

// decide says what a namespace needs: targeted tells whether the targets select it, active
// whether it exists and is not terminating, existing is the object of the resource's kind and
// name there (nil when none) and want the copy as it should be.
func decide(rd *appsv1alpha1.ResourceDistribution, targeted, active bool, existing, want *unstructured.Unstructured) action {
	switch {
	case !targeted:
		if active && existing != nil && controlledBy(existing, rd.UID) {
			return actionDelete
		}
		return actionNone
	case !active:
		return actionMissing
	case existing == nil:
		return actionCreate
	case !controlledBy(existing, rd.UID):
		return actionConflict
	case differs(existing, want):
		return actionUpdate
	}
	return actionNone
}

// controlledBy tells whether obj's controller is the object of uid.
func controlledBy(obj *unstructured.Unstructured, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}

// differs tells whether existing is out of date against want: its content (all but metadata
// and status), or the labels, annotations and hash the copy must carry.
func differs(existing, want *unstructured.Unstructured) bool {
	a, b := existing.DeepCopy().Object, want.DeepCopy().Object
	for _, k := range []string{"metadata", "status"} {
		delete(a, k)
		delete(b, k)
	}
	if !reflect.DeepEqual(a, b) {
		return true
	}
	return !subset(want.GetLabels(), existing.GetLabels()) || !subset(want.GetAnnotations(), existing.GetAnnotations())
}

// subset tells whether every key of want has its value in have.
func subset(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// desiredCopy is the copy of resource for namespace: the resource's content, labels and
// annotations, the hash and source annotations and a controller reference to rd. On update,
// existing's other labels, annotations, finalizers and owners are kept, and so is its
// resourceVersion.
func desiredCopy(rd *appsv1alpha1.ResourceDistribution, resource *unstructured.Unstructured, hash, namespace string, existing *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range resource.DeepCopy().Object {
		if k != "metadata" && k != "status" {
			out.Object[k] = v
		}
	}
	out.SetAPIVersion(resource.GetAPIVersion())
	out.SetKind(resource.GetKind())
	out.SetName(resource.GetName())
	out.SetNamespace(namespace)
	lbls := map[string]string{}
	annotations := map[string]string{}
	var owners []metav1.OwnerReference
	if existing != nil {
		for k, v := range existing.GetLabels() {
			lbls[k] = v
		}
		for k, v := range existing.GetAnnotations() {
			annotations[k] = v
		}
		owners = existing.GetOwnerReferences()
		out.SetFinalizers(existing.GetFinalizers())
		out.SetResourceVersion(existing.GetResourceVersion())
	}
	for k, v := range resource.GetLabels() {
		lbls[k] = v
	}
	for k, v := range resource.GetAnnotations() {
		annotations[k] = v
	}
	annotations[appsv1alpha1.ResourceDistributionHashCodeAnnotation] = hash
	annotations[appsv1alpha1.ResourceDistributionSourceAnnotation] = rd.Name
	if len(lbls) > 0 {
		out.SetLabels(lbls)
	}
	out.SetAnnotations(annotations)
	found := false
	for _, o := range owners {
		found = found || o.UID == rd.UID
	}
	if !found {
		owners = append(owners, *metav1.NewControllerRef(rd, appsv1alpha1.GroupVersion.WithKind("ResourceDistribution")))
	}
	out.SetOwnerReferences(owners)
	return out
}

// failure is one namespace where the pass failed, under the condition it counts in.
type failure struct {
	condition appsv1alpha1.ResourceDistributionConditionType
	namespace string
	err       error
}

// conditionOrder is the order of status.conditions: every type, always listed.
var conditionOrder = []appsv1alpha1.ResourceDistributionConditionType{
	appsv1alpha1.ResourceDistributionGetResourceFailed,
	appsv1alpha1.ResourceDistributionCreateResourceFailed,
	appsv1alpha1.ResourceDistributionUpdateResourceFailed,
	appsv1alpha1.ResourceDistributionDeleteResourceFailed,
	appsv1alpha1.ResourceDistributionConflictOccurred,
	appsv1alpha1.ResourceDistributionNamespaceNotExists,
}

// succeededReason is a condition's reason while it reports no failure.
const succeededReason = "Succeeded"

// computeStatus is the status after a pass over desired target namespaces with failures:
// every condition type is listed, True with the failed namespaces and the error of the first of them when
// something failed, False with reason Succeeded otherwise; a condition's
// lastTransitionTime moves only when its status changes. Failures of deletions in untargeted
// namespaces do not count against succeeded.
func computeStatus(rd *appsv1alpha1.ResourceDistribution, desired int, failures []failure, now metav1.Time) appsv1alpha1.ResourceDistributionStatus {
	failures = append([]failure(nil), failures...)
	sort.SliceStable(failures, func(i, j int) bool { return failures[i].namespace < failures[j].namespace })
	byType := map[appsv1alpha1.ResourceDistributionConditionType][]failure{}
	failedTargets := sets.New[string]()
	for _, f := range failures {
		byType[f.condition] = append(byType[f.condition], f)
		if f.condition != appsv1alpha1.ResourceDistributionDeleteResourceFailed {
			failedTargets.Insert(f.namespace)
		}
	}
	old := map[appsv1alpha1.ResourceDistributionConditionType]appsv1alpha1.ResourceDistributionCondition{}
	for _, c := range rd.Status.Conditions {
		old[c.Type] = c
	}
	status := appsv1alpha1.ResourceDistributionStatus{
		Desired:            int32(desired),
		Failed:             int32(failedTargets.Len()),
		Succeeded:          int32(desired - failedTargets.Len()),
		ObservedGeneration: rd.Generation,
	}
	for _, t := range conditionOrder {
		c := appsv1alpha1.ResourceDistributionCondition{Type: t, Status: appsv1alpha1.ResourceDistributionConditionFalse, Reason: succeededReason}
		if fs := byType[t]; len(fs) > 0 {
			c.Status = appsv1alpha1.ResourceDistributionConditionTrue
			c.Reason = fs[0].err.Error()
			for _, f := range fs {
				c.FailedNamespaces = append(c.FailedNamespaces, f.namespace)
			}
		}
		c.LastTransitionTime = now
		if prev, ok := old[t]; ok && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
		status.Conditions = append(status.Conditions, c)
	}
	return status
}
