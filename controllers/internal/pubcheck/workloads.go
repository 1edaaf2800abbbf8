package pubcheck

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
)

// targetKinds are the kinds a budget's targetRef may name, and the workloads whose replicas a
// selector's budget sums: 1.8's CloneSet, Advanced StatefulSet, Deployment (through its
// ReplicaSets), ReplicaSet and StatefulSet.
var targetKinds = workloadref.KindsOf(workloadref.CloneSet, workloadref.AdvancedStatefulSet,
	workloadref.Deployment, workloadref.ReplicaSet, workloadref.StatefulSet)

// Workloads reads workloads and pods for budgets, through the manager's cache.
type Workloads struct {
	Client client.Reader
}

func (w Workloads) finder() workloadref.Finder {
	return workloadref.Finder{Readers: []client.Reader{w.Client}}
}

// get reads a workload of one of targetKinds; nil when it is of another kind or absent.
func (w Workloads) get(ctx context.Context, ns string, ref workloadref.Ref) (*workloadref.Workload, error) {
	if !ref.Is(targetKinds) {
		return nil, nil
	}
	return w.finder().Get(ctx, ns, ref)
}

// PodsFor returns the active pods a budget covers and the desired count its budget is taken
// from: the target's replicas, or with a selector the summed replicas of the pods' workloads;
// the pub.kruise.io/protect-total-replicas annotation overrides either. The pods are the cache's
// own objects, listed without a copy: read them only, and write a copy.
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
	target := workloadref.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
	if _, err := target.GroupKind(); err != nil {
		return nil, 0, nil
	}
	if !target.Is(targetKinds) {
		return w.podsForScale(ctx, ns, target)
	}
	wl, err := w.get(ctx, ns, target)
	if err != nil || wl == nil || wl.Deleting() || wl.Replicas == 0 {
		return nil, 0, err
	}
	pods, err := w.listActive(ctx, ns, wl.Selector)
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
	return out, wl.Replicas, nil
}

// podsForScale returns the active pods of a custom workload and its replicas, both read through
// its scale sub-resource: the pods it owns or, when it owns none (it runs them through
// workloads of its own), those its scale's status.selector matches. A workload that serves no
// scale covers no pod.
func (w Workloads) podsForScale(ctx context.Context, ns string, target workloadref.Ref) ([]*corev1.Pod, int32, error) {
	scales, ok := w.Client.(client.SubResourceClientConstructor)
	if !ok {
		return nil, 0, nil
	}
	wl, err := workloadref.ScaleOf(ctx, scales, ns, target)
	if err != nil || wl == nil || wl.Replicas == 0 {
		return nil, 0, err
	}
	sel := labels.Nothing()
	if wl.Selector != nil {
		if sel, err = metav1.LabelSelectorAsSelector(wl.Selector); err != nil {
			return nil, 0, nil
		}
	}
	list := &corev1.PodList{}
	if err := w.Client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, 0, fmt.Errorf("list pods: %w", err)
	}
	var owned, selected []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		switch {
		case !active(p):
		case ownedByUID(p, wl.UID):
			owned = append(owned, p)
		case sel.Matches(labels.Set(p.Labels)):
			selected = append(selected, p)
		}
	}
	if len(owned) == 0 {
		owned = selected
	}
	return owned, wl.Replicas, nil
}

func ownedByUID(p *corev1.Pod, uid types.UID) bool {
	for _, r := range p.OwnerReferences {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// ownedBy reports whether pod is controlled by wl, or for a Deployment by one of its ReplicaSets.
func (w Workloads) ownedBy(ctx context.Context, pod *corev1.Pod, wl *workloadref.Workload) (bool, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return false, nil
	}
	if ref.UID == wl.UID {
		return true, nil
	}
	if !wl.Is(workloadref.KindsOf(workloadref.Deployment)) || ref.Kind != workloadref.ReplicaSet.Kind {
		return false, nil
	}
	rs, err := w.get(ctx, pod.Namespace, workloadref.Ref{APIVersion: "apps/v1", Kind: ref.Kind, Name: ref.Name})
	if err != nil || rs == nil {
		return false, err
	}
	return rs.Controller != nil && rs.Controller.UID == wl.UID, nil
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
	if err := w.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s}, client.UnsafeDisableDeepCopy); err != nil {
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
// distinct workloads (a Deployment's, for a pod of one of its ReplicaSets). As in 1.8, a pod
// whose workload is gone or being deleted (for a ReplicaSet's pod, also its Deployment) adds
// nothing, so the pods a garbage collector removes
// after their workload are not held. A pod no known workload controls (a bare pod, or one of a
// kind the budget does not know) counts as one, where 1.8 counts a bare pod as none.
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
			if ref := metav1.GetControllerOf(p); ref == nil || !(workloadref.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind}).Is(targetKinds) {
				total++
			}
			continue
		}
		if wl.Deleting() || orphanedReplicaSet(wl) {
			continue
		}
		if !seen[wl.UID] {
			seen[wl.UID] = true
			total += wl.Replicas
		}
	}
	return pods, total, nil
}

// orphanedReplicaSet tells a ReplicaSet whose controlling Deployment is gone (the finder
// returns a Deployment's ReplicaSet itself only then): the garbage collector is about to take
// it and its pods, so, as in 1.8, it adds no replica.
func orphanedReplicaSet(wl *workloadref.Workload) bool {
	k, _ := wl.GroupKind()
	return k == workloadref.ReplicaSet && wl.Controller != nil &&
		(workloadref.Ref{APIVersion: wl.Controller.APIVersion, Kind: wl.Controller.Kind}).Is(workloadref.KindsOf(workloadref.Deployment))
}

// workloadOf returns the workload controlling the pod (a ReplicaSet's Deployment when it has
// one), or nil when the pod has none of a known kind.
func (w Workloads) workloadOf(ctx context.Context, pod *corev1.Pod) (*workloadref.Workload, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || !(workloadref.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind}).Is(targetKinds) {
		return nil, nil
	}
	return w.finder().ControllerOf(ctx, pod.Namespace, ref)
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
	var wl *workloadref.Workload
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
			target := workloadref.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
			if wl == nil {
				// A custom workload's pod belongs to the targetRef naming its controller.
				if owner := metav1.GetControllerOf(pod); owner != nil && !target.Is(targetKinds) &&
					workloadref.Same(target, workloadref.Ref{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name}) {
					return pub, nil
				}
				continue
			}
			if workloadref.Same(target, wl.Ref) {
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
