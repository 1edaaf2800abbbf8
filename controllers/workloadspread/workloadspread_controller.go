package workloadspread

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/placement"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
)

// Name is the controller's name, also its key for --workloadspread-workers.
const Name = "workloadspread"

// IgnorePatchExistingPodsAnnotation on a WorkloadSpread, set to "true", keeps the labels and
// annotations of subset patches off the pods that predate it.
const IgnorePatchExistingPodsAnnotation = "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"

// SetupWithManager registers the WorkloadSpread controller with mgr.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), Config: placement.WhitelistConfig(mgr, d)}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, injectedIndex, injectedName); err != nil {
		return fmt.Errorf("index pods by their WorkloadSpread: %w", err)
	}
	if err := ownedpods.Index(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	prologue := kit.Object[*appsv1alpha1.WorkloadSpread]{Reader: r.Client, Kind: "WorkloadSpread", Pass: r.reconcile}
	late, err := kit.SetupLate(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.WorkloadSpread{}).
			Watches(&corev1.Pod{}, kit.Map(podToSpread)).
			// A target's replicas size percentage subsets; a change needs no pod event to count.
			Watches(&appsv1alpha1.CloneSet{}, kit.Map(r.targetHandler("apps.kruise.io", "CloneSet"))).
			Watches(&appsv1beta1.StatefulSet{}, kit.Map(r.targetHandler("apps.kruise.io", "StatefulSet"))).
			Watches(&appsv1.Deployment{}, kit.Map(r.targetHandler("apps", "Deployment"))).
			Watches(&appsv1.ReplicaSet{}, kit.Map(r.targetHandler("apps", "ReplicaSet"))).
			Watches(&batchv1.Job{}, kit.Map(r.targetHandler("batch", "Job")))
	}, func(gk schema.GroupKind) handler.EventHandler { return kit.Map(r.targetHandler(gk.Group, gk.Kind)) })
	r.late = late
	return err
}

// podToSpread maps a pod to the WorkloadSpread its annotation names.
func podToSpread(_ context.Context, obj client.Object) []client.ObjectKey {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	in, ok, err := spread.InjectedOf(pod)
	if err != nil || !ok || in.Name == "" {
		return nil
	}
	return []client.ObjectKey{{Namespace: pod.Namespace, Name: in.Name}}
}

// targetHandler maps a workload of group and kind to the WorkloadSpreads of its namespace that
// target it.
func (r *Reconciler) targetHandler(group, kind string) kit.KeysOf {
	return func(ctx context.Context, obj client.Object) []client.ObjectKey {
		list := &appsv1alpha1.WorkloadSpreadList{}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		var out []client.ObjectKey
		for _, ws := range list.Items {
			tr := ws.Spec.TargetReference
			if tr == nil || tr.Kind != kind || tr.Name != obj.GetName() {
				continue
			}
			if gv, err := schema.ParseGroupVersion(tr.APIVersion); err != nil || gv.Group != group {
				continue
			}
			out = append(out, client.ObjectKey{Namespace: ws.Namespace, Name: ws.Name})
		}
		return out
	}
}

// Reconciler keeps WorkloadSpread statuses and its pods' deletion costs.
type Reconciler struct {
	kit.Tools
	// Config holds the custom workloads a WorkloadSpread may target.
	Config workloadref.Config
	// late watches the custom workload kinds targets are found of, from the first pass that
	// finds one, so that a change of their replicas needs no pod event to count.
	late *kit.LateWatches
}

// finder reads targets through the cache, and the whitelist of custom ones.
func (r *Reconciler) finder() placement.Finder {
	return placement.Finder{Client: r.Client, Config: r.Config}
}

// scope is what one pass reads.
type scope struct {
	ws       *appsv1alpha1.WorkloadSpread
	replicas int32
	// unsized is set when percentage subsets have no target to size them: it is not in the
	// cache yet, or gone. Nothing else is read then.
	unsized bool
	// bySubset holds every pod of the WorkloadSpread by subset; "" for a subset no longer listed.
	bySubset map[string][]podEntry
}

// reconcile reads the WorkloadSpread's pods, writes deletion costs, writes the status when it
// changed, and deletes pods stuck unschedulable under Adaptive.
func (r *Reconciler) reconcile(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (ctrl.Result, error) {
	if ws.Spec.TargetReference == nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	sc, err := r.read(ctx, ws)
	if err != nil {
		return ctrl.Result{}, err
	}
	if sc.unsized {
		// Percentages of a target not seen are of nothing: no subset status is written, so
		// none says 0. The watch on the target kinds brings the target here when it appears,
		// and the pod webhook sizes its pods by the target it reads at admission.
		log.V(2).Info("Waiting for the target to size percentage subsets", "target", klog.KRef(ws.Namespace, ws.Spec.TargetReference.Name))
		return r.writeStatus(ctx, ws, appsv1alpha1.WorkloadSpreadStatus{ObservedGeneration: ws.Generation})
	}
	if err := r.writeCosts(ctx, sc); err != nil {
		return ctrl.Result{}, err
	}
	res, err := computeStatus(ws, sc.bySubset, sc.replicas, r.Clock.Now())
	if err != nil {
		r.Recorder.Eventf(ws, corev1.EventTypeWarning, "InvalidSpec", "Cannot compute subset statuses: %v", err)
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	stale, err := r.writeStatus(ctx, ws, res.status)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, pod := range res.reschedule {
		if err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete unschedulable pod %s: %w", pod.Name, err)
		}
		r.Recorder.Eventf(ws, corev1.EventTypeNormal, "Reschedule", "Deleted pod %s, unschedulable in its subset, so its replacement goes to the next subset", pod.Name)
	}
	return kit.Sooner(ctrl.Result{RequeueAfter: res.requeueAfter}, stale), nil
}

// writeStatus writes status when it differs from ws's. The kit's write fails on a conflict, as it
// must when a webhook recorded a pod meanwhile; the pass over the newer object writes it.
func (r *Reconciler) writeStatus(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, status appsv1alpha1.WorkloadSpreadStatus) (ctrl.Result, error) {
	return kit.WriteStatus(ctx, r.Client, ws.DeepCopy(), func(ws *appsv1alpha1.WorkloadSpread) { ws.Status = status })
}

func (r *Reconciler) read(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (*scope, error) {
	// The target is read once, for its replicas and for the pods it may adopt.
	target, err := r.finder().Target(ctx, ws)
	if err != nil {
		return nil, err
	}
	found := target != nil
	var replicas int32
	if found {
		if replicas, err = placement.Replicas(ws, target); err != nil {
			return nil, err
		}
	}
	if tr := ws.Spec.TargetReference; found {
		gvk := schema.FromAPIVersionAndKind(tr.APIVersion, tr.Kind)
		if !workloadref.IsBuiltIn(gvk.GroupKind()) {
			if err := r.late.Watch(gvk); err != nil {
				return nil, err
			}
		}
	}
	if !found && spread.HasPercent(ws) {
		return &scope{ws: ws, unsized: true}, nil
	}
	// Pods are read in place from the cache: nothing here changes a listed pod, and the two
	// writes below change a copy. The WorkloadSpread's own pods come from injectedIndex, the
	// pods it may adopt from ownedpods.ControllerIndex, so a pass costs the target's pods, not
	// the namespace's (at ten thousand pods and fifty WorkloadSpreads in one namespace, the scan
	// was most of the manager's CPU).
	injected := &corev1.PodList{}
	if err := r.Client.List(ctx, injected, client.InNamespace(ws.Namespace), client.MatchingFields{injectedIndex: ws.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	known := map[string]bool{}
	for _, s := range ws.Spec.Subsets {
		known[s.Name] = true
	}
	sc := &scope{ws: ws, replicas: replicas, bySubset: map[string][]podEntry{}}
	placed := map[types.UID]bool{}
	for i := range injected.Items {
		pod := &injected.Items[i]
		in, ok, err := spread.InjectedOf(pod)
		if err != nil || !ok || in.Name != ws.Name || in.Subset == "" {
			continue // not this WorkloadSpread's by its annotation, whatever the index said
		}
		placed[pod.UID] = true
		subset := in.Subset
		if !known[subset] {
			subset = ""
		}
		sc.bySubset[subset] = append(sc.bySubset[subset], podEntry{pod: pod, key: in.Key(pod.Name)})
	}
	others, err := r.adoptable(ctx, ws, target)
	if err != nil {
		return nil, err
	}
	var unmatched []*corev1.Pod
	for _, pod := range others {
		if !placed[pod.UID] {
			unmatched = append(unmatched, pod)
		}
	}
	if err := r.adoptExisting(ctx, sc, unmatched); err != nil {
		return nil, err
	}
	return sc, nil
}

// adoptable returns the pods adoptExisting looks at: those of the objects that control the
// pods of target, ws's target (placement.Finder.PodOwners), or every pod of the namespace when
// those cannot be told. Either way adoptExisting keeps only the pods Targets takes.
func (r *Reconciler) adoptable(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, target *workloadref.Workload) ([]*corev1.Pod, error) {
	owners, known, err := r.finder().PodOwners(ctx, ws, target)
	if err != nil {
		return nil, err
	}
	if !known {
		all := &corev1.PodList{}
		if err := r.Client.List(ctx, all, client.InNamespace(ws.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		out := make([]*corev1.Pod, len(all.Items))
		for i := range all.Items {
			out[i] = &all.Items[i]
		}
		return out, nil
	}
	var out []*corev1.Pod
	for _, uid := range owners {
		pods, err := ownedpods.Controlled(ctx, r.Client, ws.Namespace, uid)
		if err != nil {
			return nil, err
		}
		out = append(out, pods...)
	}
	return out, nil
}

// injectedIndex indexes pods by the WorkloadSpread whose subset they are recorded in (the
// apps.kruise.io/matched-workloadspread annotation), so that a pass reads its own pods without
// decoding the annotation of every pod of the namespace.
const injectedIndex = "workloadspread.kruise.io/injected"

// injectedName is the injectedIndex value of a pod: the WorkloadSpread named by a well-formed
// annotation that records a subset.
func injectedName(obj client.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	in, ok, err := spread.InjectedOf(pod)
	if err != nil || !ok || in.Name == "" || in.Subset == "" {
		return nil
	}
	return []string{in.Name}
}

// adoptExisting puts the target's pods that no webhook placed (they predate the
// WorkloadSpread) into the subset their node fits, as spread.Favorite judges it, and records
// that on the pod; a pod that fits no subset, or has no node yet, counts in no subset.
func (r *Reconciler) adoptExisting(ctx context.Context, sc *scope, pods []*corev1.Pod) error {
	ws := sc.ws
	finder := r.finder()
	var missing []int32
	for i := range ws.Spec.Subsets {
		limit, err := spread.MaxReplicas(&ws.Spec.Subsets[i], sc.replicas)
		if err != nil {
			return reconcile.TerminalError(err)
		}
		if limit != spread.Unlimited {
			for _, e := range sc.bySubset[ws.Spec.Subsets[i].Name] {
				if active(e.pod) {
					limit--
				}
			}
		}
		missing = append(missing, limit)
	}
	ignorePatch := strings.EqualFold(ws.Annotations[IgnorePatchExistingPodsAnnotation], "true")
	for _, pod := range pods {
		if !active(pod) {
			continue
		}
		ok, err := finder.Targets(ctx, ws, pod)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		idx := -1
		if pod.Spec.NodeName != "" {
			node := &corev1.Node{}
			if err := r.Client.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, node); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("get node %s: %w", pod.Spec.NodeName, err)
			} else if err == nil {
				idx = spread.Favorite(pod, node, ws.Spec.Subsets, missing)
			}
		}
		if idx < 0 {
			sc.bySubset[""] = append(sc.bySubset[""], podEntry{pod: pod, key: pod.Name})
			continue
		}
		s := &ws.Spec.Subsets[idx]
		labels, annotations := spread.ExistingPodPatch(ws.Name, s, ignorePatch)
		patch := client.MergeFrom(pod)
		pod = pod.DeepCopy() // the listed pod is the cache's own
		for k, v := range labels {
			pod.Labels = setString(pod.Labels, k, v)
		}
		for k, v := range annotations {
			pod.Annotations = setString(pod.Annotations, k, v)
		}
		if err := r.Client.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("record subset %s on pod %s: %w", s.Name, pod.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Put a pod that predates the WorkloadSpread into a subset", "Pod", klog.KObj(pod), "subset", s.Name)
		if missing[idx] > 0 {
			missing[idx]--
		}
		sc.bySubset[s.Name] = append(sc.bySubset[s.Name], podEntry{pod: pod, key: pod.Name})
	}
	return nil
}

func setString(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// writeCosts patches controller.kubernetes.io/pod-deletion-cost on the active pods whose value
// differs from the plan. Only targets whose scale-down reads the cost get it.
func (r *Reconciler) writeCosts(ctx context.Context, sc *scope) error {
	switch sc.ws.Spec.TargetReference.Kind {
	case "CloneSet", "Deployment", "ReplicaSet":
	default:
		return nil
	}
	activeBy := map[string][]*corev1.Pod{}
	for name, entries := range sc.bySubset {
		for _, e := range entries {
			if active(e.pod) {
				activeBy[name] = append(activeBy[name], e.pod)
			}
		}
	}
	costs, err := spread.DeletionCosts(sc.ws.Spec.Subsets, activeBy, sc.replicas)
	if err != nil {
		return reconcile.TerminalError(err)
	}
	for _, entries := range activeBy {
		for _, pod := range entries {
			want := costs[pod.Name]
			if pod.Annotations[podsort.DeletionCostAnnotation] == want {
				continue
			}
			patch := client.MergeFrom(pod)
			pod := pod.DeepCopy() // the listed pod is the cache's own
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[podsort.DeletionCostAnnotation] = want
			if err := r.Client.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
				r.Recorder.Eventf(sc.ws, corev1.EventTypeWarning, "PatchPodDeletionCostFailed", "Cannot set the deletion cost of pod %s to %s: %v", pod.Name, want, err)
				return fmt.Errorf("patch deletion cost of pod %s: %w", pod.Name, err)
			}
		}
	}
	return nil
}
