package placement

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
)

var (
	// builtInOwners are the built-in kinds a WorkloadSpread may target or a pod it spreads may
	// be owned by; the custom-workload whitelist adds its own.
	builtInOwners = workloadref.KindsOf(workloadref.CloneSet, workloadref.AdvancedStatefulSet,
		workloadref.Deployment, workloadref.ReplicaSet, workloadref.StatefulSet, workloadref.Job)
	statefulKinds = workloadref.KindsOf(workloadref.StatefulSet, workloadref.AdvancedStatefulSet)
	// replicaSets are climbed from a pod to the Deployment that may be the target.
	replicaSets = workloadref.KindsOf(workloadref.ReplicaSet)
)

// refOf is the workload reference of a targetRef.
func refOf(tr *appsv1alpha1.TargetReference) workloadref.Ref { return workloadref.Ref(*tr) }

// IsStateful tells whether ws points at a StatefulSet, whose pods take subsets by ordinal.
func IsStateful(ws *appsv1alpha1.WorkloadSpread) bool {
	return ws.Spec.TargetReference != nil && refOf(ws.Spec.TargetReference).Is(statefulKinds)
}

// Finder finds the WorkloadSpread of a pod and the replicas of its target.
type Finder struct {
	// Client reads from the cache.
	Client client.Reader
	// Live, when set, reads a pod's ReplicaSet the cache has not seen yet: a ReplicaSet
	// creates its first pods at once, often before the manager's cache has it.
	Live client.Reader
	// Config holds the custom workloads a WorkloadSpread may target besides the built-in
	// kinds; it is read only for a target or a pod's owner of another kind. The zero value
	// allows none.
	Config workloadref.Config
	// Spreads, when set and synced, holds the WorkloadSpreads by namespace, read in place of a
	// List of the namespace's WorkloadSpreads for every pod.
	Spreads *podadmission.Snapshot[*appsv1alpha1.WorkloadSpread]
}

// WatchSpreads returns the snapshot of the cache's WorkloadSpreads by namespace (Finder.Spreads).
func WatchSpreads(ctx context.Context, informers cache.Informers) (*podadmission.Snapshot[*appsv1alpha1.WorkloadSpread], error) {
	return podadmission.WatchSnapshot(ctx, informers, &appsv1alpha1.WorkloadSpread{},
		func(ws *appsv1alpha1.WorkloadSpread) []string { return []string{ws.Namespace} })
}

// spreadsIn returns the WorkloadSpreads of namespace ns as the cache holds them: callers must not
// change them.
func (f Finder) spreadsIn(ctx context.Context, ns string) ([]*appsv1alpha1.WorkloadSpread, error) {
	if f.Spreads != nil {
		if held, ok := f.Spreads.Get(ns); ok {
			return held, nil
		}
	}
	list := &appsv1alpha1.WorkloadSpreadList{}
	if err := f.Client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list workloadspreads: %w", err)
	}
	out := make([]*appsv1alpha1.WorkloadSpread, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// workloads reads targets from the cache, then live; the whitelist is read at most once.
func (f Finder) workloads() workloadref.Finder {
	return workloadref.Finder{Readers: []client.Reader{f.Client, f.Live}, Custom: f.Config.WorkloadSpreadWhitelistOnce()}
}

// ForPod returns the WorkloadSpread of the pod's namespace whose targetRef is the pod's
// controller or, for a ReplicaSet, the Deployment owning it, or for a whitelisted custom
// workload the one controlling the pod's owner, and whose targetFilter selects the pod; nil
// when there is none. Pods of other owners are never looked at.
func (f Finder) ForPod(ctx context.Context, pod *corev1.Pod) (*appsv1alpha1.WorkloadSpread, error) {
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return nil, nil
	}
	wf := f.workloads()
	builtIn := workloadref.Ref{APIVersion: owner.APIVersion, Kind: owner.Kind}.Is(builtInOwners)
	if !builtIn && f.Config.Reader == nil {
		return nil, nil
	}
	// The namespace's WorkloadSpreads are read in place from the cache, not copied on every pod
	// admission: only the one returned is copied.
	spreads, err := f.spreadsIn(ctx, pod.Namespace)
	if err != nil {
		return nil, err
	}
	if !builtIn && len(spreads) > 0 {
		// Only a namespace with a WorkloadSpread costs a read of the whitelist.
		custom, err := wf.Custom(ctx)
		if err != nil {
			return nil, err
		}
		if !(workloadref.Ref{APIVersion: owner.APIVersion, Kind: owner.Kind}).Is(custom.Kinds()) {
			return nil, nil
		}
	}
	chain := &ownerChain{owner: owner}
	for _, ws := range spreads {
		if ws.DeletionTimestamp != nil {
			continue
		}
		ok, err := f.targetsWith(ctx, wf, chain, ws, pod)
		if err != nil {
			return nil, err
		}
		if ok {
			return ws.DeepCopy(), nil
		}
	}
	return nil, nil
}

// Targets tells whether ws spreads pod: its targetRef is the pod's controller, the
// Deployment owning the pod's ReplicaSet or, for a whitelisted custom workload, the workload
// controlling the pod's owner, and its targetFilter selects the pod.
func (f Finder) Targets(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	return f.targets(ctx, f.workloads(), ws, pod)
}

func (f Finder) targets(ctx context.Context, wf workloadref.Finder, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	return f.targetsWith(ctx, wf, &ownerChain{owner: metav1.GetControllerOf(pod)}, ws, pod)
}

// ownerChain is a pod's controller and the workloads that control it through ReplicaSets (a
// Deployment's), read once per pod however many WorkloadSpreads with a built-in target its
// namespace holds: each of them used to climb from the pod again, reading the ReplicaSet from
// the cache, or from the apiserver when the cache had not seen it yet.
type ownerChain struct {
	owner *metav1.OwnerReference
	read  bool
	refs  []workloadref.Ref
	// err is the read that ended the climb, met by a target none of refs is.
	err error
}

// controlledBy tells what workloadref.Finder.Controls(target, owner, replicaSets) tells.
func (c *ownerChain) controlledBy(ctx context.Context, wf workloadref.Finder, namespace string, target workloadref.Ref) (bool, error) {
	if !c.read {
		c.read = true
		c.refs, c.err = wf.Chain(ctx, namespace, c.owner, replicaSets)
	}
	for _, ref := range c.refs {
		if workloadref.Same(target, ref) {
			return true, nil
		}
	}
	return false, c.err
}

func (f Finder) targetsWith(ctx context.Context, wf workloadref.Finder, chain *ownerChain, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	tr := ws.Spec.TargetReference
	owner := chain.owner
	if tr == nil || owner == nil {
		return false, nil
	}
	target := refOf(tr)
	var matched bool
	var err error
	if target.Is(builtInOwners) {
		matched, err = chain.controlledBy(ctx, wf, pod.Namespace, target)
	} else {
		// A custom target's pods may belong to it through the kinds it creates.
		custom, cerr := wf.Custom(ctx)
		if cerr != nil {
			return false, cerr
		}
		k, _ := target.GroupKind()
		if custom.Lookup(k) == nil {
			return false, nil
		}
		matched, err = wf.Controls(ctx, pod.Namespace, target, owner, custom.Kinds())
	}
	if err != nil || !matched {
		return false, err
	}
	selected, err := selects(ws.Spec.TargetFilter, pod)
	return err == nil && selected, nil
}

func selects(filter *appsv1alpha1.TargetFilter, pod *corev1.Pod) (bool, error) {
	if filter == nil || filter.Selector == nil {
		return true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(filter.Selector)
	if err != nil {
		return false, fmt.Errorf("targetFilter.selector: %w", err)
	}
	return sel.Matches(labels.Set(pod.Labels)), nil
}

// directPodOwners are the built-in target kinds whose pods they control themselves.
var directPodOwners = workloadref.KindsOf(workloadref.CloneSet, workloadref.AdvancedStatefulSet,
	workloadref.ReplicaSet, workloadref.StatefulSet, workloadref.Job)

// PodOwners returns the UIDs of the objects that control the pods of target, ws's target as
// Target read it: the target's own, or a Deployment's ReplicaSets' (read from the cache). A pod
// Targets takes for ws is controlled by one of them. known is false when that cannot be told
// from the built-in kinds (a custom target, or a nil target, one neither the cache nor the
// apiserver has): then any pod of the namespace may be the target's.
func (f Finder) PodOwners(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, target *workloadref.Workload) (uids []types.UID, known bool, err error) {
	if target == nil {
		return nil, false, nil
	}
	deployment := target.Is(workloadref.KindsOf(workloadref.Deployment))
	if !deployment && !target.Is(directPodOwners) {
		return nil, false, nil
	}
	if !deployment {
		return []types.UID{target.UID}, true, nil
	}
	list := &appsv1.ReplicaSetList{}
	if err := f.Client.List(ctx, list, client.InNamespace(ws.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, fmt.Errorf("list replicasets: %w", err)
	}
	for i := range list.Items {
		if ref := metav1.GetControllerOfNoCopy(&list.Items[i]); ref != nil && ref.UID == target.UID {
			uids = append(uids, list.Items[i].UID)
		}
	}
	return uids, true, nil
}

// Target reads ws's target from the cache, then live. It returns nil when neither has it, or
// when ws names no target of a kind it may spread.
func (f Finder) Target(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (*workloadref.Workload, error) {
	tr := ws.Spec.TargetReference
	if tr == nil {
		return nil, nil
	}
	return f.workloads().Get(ctx, ws.Namespace, refOf(tr))
}

// TargetReplicas returns the replicas of ws's target (see Replicas), read by Target; found is
// false when Target finds none.
func (f Finder) TargetReplicas(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (replicas int32, found bool, err error) {
	w, err := f.Target(ctx, ws)
	if err != nil || w == nil {
		return 0, false, err
	}
	if replicas, err = Replicas(ws, w); err != nil {
		return 0, false, err
	}
	return replicas, true, nil
}

// Replicas returns the replicas of target, ws's target: spec.replicas, a Job's parallelism, a
// whitelisted custom workload's replicasPath, or the sum of targetFilter.replicasPathList when
// that is set.
func Replicas(ws *appsv1alpha1.WorkloadSpread, target *workloadref.Workload) (int32, error) {
	if ws.Spec.TargetFilter != nil && len(ws.Spec.TargetFilter.ReplicasPathList) > 0 {
		replicas, err := workloadref.ReplicasAt(target.Object, ws.Spec.TargetFilter.ReplicasPathList...)
		if err != nil {
			return 0, fmt.Errorf("targetFilter.replicasPathList: %w", err)
		}
		return replicas, nil
	}
	return target.Replicas, nil
}
