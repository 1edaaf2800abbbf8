package pubcheck

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
)

// Kind is a group and kind a budget's targetRef may name.
type Kind struct{ Group, Kind string }

// The kinds a targetRef may name: 1.8's CloneSet, Advanced StatefulSet, Deployment (through
// its ReplicaSets), ReplicaSet and StatefulSet.
var (
	CloneSetKind         = Kind{"apps.kruise.io", "CloneSet"}
	AdvancedStatefulSet  = Kind{"apps.kruise.io", "StatefulSet"}
	DeploymentKind       = Kind{"apps", "Deployment"}
	ReplicaSetKind       = Kind{"apps", "ReplicaSet"}
	StatefulSetKind      = Kind{"apps", "StatefulSet"}
	supportedTargetKinds = []Kind{CloneSetKind, AdvancedStatefulSet, DeploymentKind, ReplicaSetKind, StatefulSetKind}
)

// SupportedTargets lists the kinds a targetRef may name, for error messages.
func SupportedTargets() []Kind { return append([]Kind(nil), supportedTargetKinds...) }

// KindOf parses a targetRef or owner reference into its group and kind.
func KindOf(apiVersion, kind string) (Kind, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Kind{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	return Kind{gv.Group, kind}, nil
}

// workload is what a budget needs of a workload: its identity, desired replicas and selector.
type workload struct {
	kind     Kind
	name     string
	uid      types.UID
	replicas int32
	selector *metav1.LabelSelector
	deleting bool
	owner    *metav1.OwnerReference
}

// Workloads reads workloads and pods for budgets, through the manager's cache.
type Workloads struct {
	Client client.Reader
}

func (w Workloads) get(ctx context.Context, k Kind, ns, name string) (*workload, error) {
	var obj client.Object
	switch k {
	case CloneSetKind:
		obj = &appsv1alpha1.CloneSet{}
	case AdvancedStatefulSet:
		obj = &appsv1beta1.StatefulSet{}
	case DeploymentKind:
		obj = &appsv1.Deployment{}
	case ReplicaSetKind:
		obj = &appsv1.ReplicaSet{}
	case StatefulSetKind:
		obj = &appsv1.StatefulSet{}
	default:
		return nil, nil
	}
	if err := w.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %s %s: %w", k.Kind, name, err)
	}
	out := &workload{kind: k, name: name, uid: obj.GetUID(), deleting: obj.GetDeletionTimestamp() != nil, owner: metav1.GetControllerOf(obj), replicas: 1}
	var replicas *int32
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		replicas, out.selector = o.Spec.Replicas, o.Spec.Selector
	case *appsv1beta1.StatefulSet:
		replicas, out.selector = o.Spec.Replicas, o.Spec.Selector
	case *appsv1.Deployment:
		replicas, out.selector = o.Spec.Replicas, o.Spec.Selector
	case *appsv1.ReplicaSet:
		replicas, out.selector = o.Spec.Replicas, o.Spec.Selector
	case *appsv1.StatefulSet:
		replicas, out.selector = o.Spec.Replicas, o.Spec.Selector
	}
	if replicas != nil {
		out.replicas = *replicas
	}
	return out, nil
}

// PodsFor returns the active pods a budget covers and the desired count its budget is taken
// from: the target's replicas, or with a selector the summed replicas of the pods' workloads;
// the pub.kruise.io/protect-total-replicas annotation overrides either.
func (w Workloads) PodsFor(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget) ([]*corev1.Pod, int32, error) {
	var pods []*corev1.Pod
	var total int32
	var err error
	if ref := pub.Spec.TargetReference; ref != nil {
		pods, total, err = w.podsForRef(ctx, pub.Namespace, ref)
	} else if pub.Spec.Selector != nil {
		pods, total, err = w.podsForSelector(ctx, pub.Namespace, pub.Spec.Selector)
	}
	if err != nil {
		return nil, 0, err
	}
	if v := pub.Annotations[policyv1alpha1.PubProtectTotalReplicasAnnotation]; v != "" {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			total = int32(n)
		}
	}
	return pods, total, nil
}

func (w Workloads) podsForRef(ctx context.Context, ns string, ref *policyv1alpha1.TargetReference) ([]*corev1.Pod, int32, error) {
	k, err := KindOf(ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, 0, nil
	}
	wl, err := w.get(ctx, k, ns, ref.Name)
	if err != nil || wl == nil || wl.deleting || wl.replicas == 0 {
		return nil, 0, err
	}
	pods, err := w.listActive(ctx, ns, wl.selector)
	if err != nil {
		return nil, 0, err
	}
	var out []*corev1.Pod
	for _, p := range pods {
		owned, err := w.ownedBy(ctx, p, wl)
		if err != nil {
			return nil, 0, err
		}
		if owned {
			out = append(out, p)
		}
	}
	return out, wl.replicas, nil
}

// ownedBy reports whether pod is controlled by wl, or for a Deployment by one of its ReplicaSets.
func (w Workloads) ownedBy(ctx context.Context, pod *corev1.Pod, wl *workload) (bool, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return false, nil
	}
	if ref.UID == wl.uid {
		return true, nil
	}
	if wl.kind != DeploymentKind || ref.Kind != ReplicaSetKind.Kind {
		return false, nil
	}
	rs, err := w.get(ctx, ReplicaSetKind, pod.Namespace, ref.Name)
	if err != nil || rs == nil {
		return false, err
	}
	return rs.owner != nil && rs.owner.UID == wl.uid, nil
}

func (w Workloads) listActive(ctx context.Context, ns string, sel *metav1.LabelSelector) ([]*corev1.Pod, error) {
	if sel == nil {
		return nil, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return nil, nil
	}
	list := &corev1.PodList{}
	if err := w.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s}); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if active(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func active(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// podsForSelector lists the selected active pods; the desired count sums the replicas of their
// distinct workloads (a Deployment's, for a pod of one of its ReplicaSets), and counts a pod of
// no known workload as one.
func (w Workloads) podsForSelector(ctx context.Context, ns string, sel *metav1.LabelSelector) ([]*corev1.Pod, int32, error) {
	pods, err := w.listActive(ctx, ns, sel)
	if err != nil {
		return nil, 0, err
	}
	var total int32
	seen := map[types.UID]bool{}
	for _, p := range pods {
		wl, err := w.workloadOf(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		if wl == nil {
			total++
			continue
		}
		if !seen[wl.uid] {
			seen[wl.uid] = true
			total += wl.replicas
		}
	}
	return pods, total, nil
}

// workloadOf returns the workload controlling the pod (a ReplicaSet's Deployment when it has
// one), or nil when the pod has none of a known kind.
func (w Workloads) workloadOf(ctx context.Context, pod *corev1.Pod) (*workload, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil, nil
	}
	k, err := KindOf(ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, nil
	}
	wl, err := w.get(ctx, k, pod.Namespace, ref.Name)
	if err != nil || wl == nil {
		return nil, err
	}
	if k == ReplicaSetKind && wl.owner != nil && wl.owner.Kind == DeploymentKind.Kind {
		dep, err := w.get(ctx, DeploymentKind, pod.Namespace, wl.owner.Name)
		if err != nil {
			return nil, err
		}
		if dep != nil && dep.uid == wl.owner.UID {
			return dep, nil
		}
	}
	return wl, nil
}

// PubFor returns the budget of the pod's namespace that covers a new pod: the first whose
// targetRef names the pod's workload, or whose selector matches its labels; nil when none does.
// It lists budgets through the cache, which indexes them by namespace.
func (w Workloads) PubFor(ctx context.Context, pod *corev1.Pod) (*policyv1alpha1.PodUnavailableBudget, error) {
	list := &policyv1alpha1.PodUnavailableBudgetList{}
	if err := w.Client.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return nil, fmt.Errorf("list podunavailablebudgets: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	var wl *workload
	var wlErr error
	resolved := false
	for i := range list.Items {
		pub := &list.Items[i]
		if pub.DeletionTimestamp != nil {
			continue
		}
		if ref := pub.Spec.TargetReference; ref != nil {
			if !resolved {
				wl, wlErr = w.workloadOf(ctx, pod)
				resolved = true
			}
			if wlErr != nil {
				return nil, wlErr
			}
			if wl == nil {
				continue
			}
			k, err := KindOf(ref.APIVersion, ref.Kind)
			if err == nil && k == wl.kind && ref.Name == wl.name {
				return pub, nil
			}
			continue
		}
		if pub.Spec.Selector == nil {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(pub.Spec.Selector)
		if err != nil || s.Empty() {
			continue
		}
		if s.Matches(labels.Set(pod.Labels)) {
			return pub, nil
		}
	}
	return nil, nil
}
