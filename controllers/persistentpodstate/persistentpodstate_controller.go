package persistentpodstate

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --persistentpodstate-workers.
const Name = "persistentpodstate"

// generatorName names the controller that keeps the generated PersistentPodStates.
const generatorName = "persistentpodstate-generator"

// SetupWithManager registers the PersistentPodState controller and the generator of
// PersistentPodStates from workload annotations with mgr.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Client: mgr.GetClient(), Targets: restore.TargetsFor(mgr, d)}
	prologue := kit.Object[*appsv1alpha1.PersistentPodState]{Reader: r.Client, Kind: "PersistentPodState", Pass: r.reconcile}
	late, err := kit.SetupLate(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.PersistentPodState{}).
			Watches(&corev1.Pod{}, kit.Map(r.podToState)).
			Watches(&appsv1.StatefulSet{}, kit.Map(r.workloadToState("apps/v1", "StatefulSet"))).
			Watches(&appsv1beta1.StatefulSet{}, kit.Map(r.workloadToState(appsv1beta1.GroupVersion.String(), "StatefulSet")))
	}, func(schema.GroupKind) handler.EventHandler { return kit.Map(r.customToState) })
	if err != nil {
		return err
	}
	r.late = late
	// The generator shares the --persistentpodstate-workers count.
	shared := d
	shared.Workers = func(string) int { return d.Workers(Name) }
	g := &Generator{Client: mgr.GetClient(), Targets: r.Targets}
	g.late, err = kit.SetupLate(mgr, shared, generatorName, g, func(b *kit.Builder) *kit.Builder {
		return b.Watches(&appsv1.StatefulSet{}, kit.Map(generatorKey("apps")), builder.WithPredicates(generatingEvents)).
			Watches(&appsv1beta1.StatefulSet{}, kit.Map(generatorKey(appsv1beta1.GroupVersion.Group)), builder.WithPredicates(generatingEvents)).
			// A new pod of a custom workload brings the workload to the generator, which then
			// watches its kind (when whitelisted) for the annotations' changes.
			Watches(&corev1.Pod{}, kit.Map(customOwnerKey), builder.WithPredicates(created))
	}, func(schema.GroupKind) handler.EventHandler { return kit.Map(customKey) }, generatingEvents)
	return err
}

// created passes creations only.
var created = predicate.Funcs{
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// customOwnerKey maps a pod whose controller may be a custom StatefulSet-like workload to the
// generator's request for that workload.
func customOwnerKey(_ context.Context, obj client.Object) []client.ObjectKey {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil || !restore.Candidate(owner.APIVersion, owner.Kind) || restore.Supported(owner.APIVersion, owner.Kind, nil) {
		return nil
	}
	return []client.ObjectKey{{Namespace: obj.GetNamespace(), Name: owner.APIVersion + "#" + owner.Kind + "#" + owner.Name}}
}

// customKey maps a custom workload, of a kind watched late, to the generator's request for it:
// its namespace, and "<apiVersion>#<kind>#<name>" as name.
func customKey(_ context.Context, obj client.Object) []client.ObjectKey {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return []client.ObjectKey{{Namespace: obj.GetNamespace(), Name: gvk.GroupVersion().String() + "#" + gvk.Kind + "#" + obj.GetName()}}
}

// podToState maps a StatefulSet's pod, or a custom workload's, to its workload's
// PersistentPodState; the pass then asks the whitelist whether the custom kind is followed.
func (r *Reconciler) podToState(ctx context.Context, obj client.Object) []client.ObjectKey {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil || !restore.Candidate(owner.APIVersion, owner.Kind) {
		return nil
	}
	return r.stateOf(ctx, obj.GetNamespace(), appsv1alpha1.TargetReference{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name})
}

// workloadToState maps a workload of apiVersion and kind to its PersistentPodState; the
// version does not matter.
func (r *Reconciler) workloadToState(apiVersion, kind string) kit.KeysOf {
	return func(ctx context.Context, obj client.Object) []client.ObjectKey {
		return r.stateOf(ctx, obj.GetNamespace(), appsv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName()})
	}
}

// customToState maps a custom workload, of a kind watched late, to its PersistentPodState.
func (r *Reconciler) customToState(ctx context.Context, obj client.Object) []client.ObjectKey {
	gvk := obj.GetObjectKind().GroupVersionKind()
	return r.stateOf(ctx, obj.GetNamespace(), appsv1alpha1.TargetReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName()})
}

func (r *Reconciler) stateOf(ctx context.Context, namespace string, ref appsv1alpha1.TargetReference) []client.ObjectKey {
	pps, err := restore.ForWorkload(ctx, r.Client, namespace, ref)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Finding the PersistentPodState of a workload", "workload", klog.KRef(namespace, ref.Name))
		return nil
	}
	if pps == nil {
		return nil
	}
	return []client.ObjectKey{{Namespace: pps.Namespace, Name: pps.Name}}
}

// Reconciler keeps the status of PersistentPodStates.
type Reconciler struct {
	Client client.Client
	// Targets tells the custom StatefulSet-like kinds followed besides StatefulSets.
	Targets restore.Targets
	// late watches the custom kinds of the targets found, from the first pass that finds one,
	// so that a change of their replicas needs no pod event to count.
	late *kit.LateWatches
}

// scope is what one pass reads.
type scope struct {
	workload *workload
	pods     map[string]*corev1.Pod
	nodes    map[string]*corev1.Node
}

// reconcile records the state of the target's Ready pods and drops the states the
// retention policy lets go, writing the status when it changed.
func (r *Reconciler) reconcile(ctx context.Context, pps *appsv1alpha1.PersistentPodState) (ctrl.Result, error) {
	sc, err := r.read(ctx, pps)
	if err != nil {
		return ctrl.Result{}, err
	}
	status := computeStatus(pps, sc.workload, sc.pods, sc.nodes)
	return kit.WriteStatus(ctx, r.Client, pps, func(pps *appsv1alpha1.PersistentPodState) { pps.Status = status })
}

func (r *Reconciler) read(ctx context.Context, pps *appsv1alpha1.PersistentPodState) (*scope, error) {
	w, err := r.readWorkload(ctx, pps.Namespace, pps.Spec.TargetReference)
	if err != nil || w == nil {
		return &scope{workload: w}, err
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(pps.Namespace)); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	sc := &scope{workload: w, pods: map[string]*corev1.Pod{}, nodes: map[string]*corev1.Node{}}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if owner := metav1.GetControllerOfNoCopy(pod); owner == nil || owner.UID != w.uid {
			continue
		}
		sc.pods[pod.Name] = pod
		if pod.Spec.NodeName == "" || sc.nodes[pod.Spec.NodeName] != nil {
			continue
		}
		node := &corev1.Node{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("get node %s: %w", pod.Spec.NodeName, err)
		}
		sc.nodes[node.Name] = node
	}
	return sc, nil
}

// readWorkload reads the StatefulSet, or whitelisted StatefulSet-like workload, ref names, or
// returns nil when it does not exist or is of a kind the add-on does not follow (now).
func (r *Reconciler) readWorkload(ctx context.Context, namespace string, ref appsv1alpha1.TargetReference) (*workload, error) {
	custom, err := r.Targets.Custom(ctx, ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, err
	}
	if custom != nil {
		w, err := readCustom(ctx, r.Client, namespace, ref, custom)
		if err != nil || w == nil {
			return nil, err
		}
		return w, r.late.Watch(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	}
	return readStatefulSet(ctx, r.Client, namespace, ref)
}

// readCustom reads a StatefulSet-like custom workload: as in 1.8 its pods are numbered from 0
// up to spec.replicas, none reserved.
func readCustom(ctx context.Context, c client.Reader, namespace string, ref appsv1alpha1.TargetReference, custom *workloadref.Whitelist) (*workload, error) {
	if !restore.Supported(ref.APIVersion, ref.Kind, custom) {
		return nil, nil
	}
	finder := workloadref.Finder{Readers: []client.Reader{c}, Custom: func(context.Context) (*workloadref.Whitelist, error) { return custom, nil }}
	wl, err := finder.Get(ctx, namespace, workloadref.Ref(ref))
	if err != nil || wl == nil {
		return nil, err
	}
	return &workload{ref: ref, uid: wl.UID, replicas: int(wl.Replicas), deleting: wl.Deleting()}, nil
}

// readStatefulSet reads the StatefulSet, apps/v1 or Advanced, ref names.
func readStatefulSet(ctx context.Context, c client.Reader, namespace string, ref appsv1alpha1.TargetReference) (*workload, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || !restore.Supported(ref.APIVersion, ref.Kind, nil) {
		return nil, nil
	}
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	if gv.Group == "apps" {
		sts := &appsv1.StatefulSet{}
		if err := c.Get(ctx, key, sts); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		w := &workload{ref: ref, uid: sts.UID, replicas: 1, deleting: sts.DeletionTimestamp != nil}
		if sts.Spec.Replicas != nil {
			w.replicas = int(*sts.Spec.Replicas)
		}
		if sts.Spec.Ordinals != nil {
			w.start = int(sts.Spec.Ordinals.Start)
		}
		return w, nil
	}
	sts := &appsv1beta1.StatefulSet{}
	if err := c.Get(ctx, key, sts); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	w := &workload{ref: ref, uid: sts.UID, replicas: 1, reserved: sts.Spec.ReserveOrdinals, deleting: sts.DeletionTimestamp != nil}
	if sts.Spec.Replicas != nil {
		w.replicas = int(*sts.Spec.Replicas)
	}
	if sts.Spec.Ordinals != nil {
		w.start = int(sts.Spec.Ordinals.Start)
	}
	return w, nil
}

// generatorKey maps a StatefulSet of group to the generator's request for it: its namespace,
// and "<group>#<name>" as name.
func generatorKey(group string) kit.KeysOf {
	return func(_ context.Context, obj client.Object) []client.ObjectKey {
		return []client.ObjectKey{{Namespace: obj.GetNamespace(), Name: group + "#" + obj.GetName()}}
	}
}

// Generator creates, updates and deletes the PersistentPodStates that workload annotations
// ask for.
type Generator struct {
	Client client.Client
	// Targets tells the custom StatefulSet-like kinds followed besides StatefulSets.
	Targets restore.Targets
	// late watches the whitelisted custom kinds the generator has met.
	late *kit.LateWatches
}

// Reconcile makes the PersistentPodState named after the workload match what its annotations
// ask for. Only a PersistentPodState the workload controls is updated or deleted; one a user
// wrote under that name is left alone.
func (g *Generator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	parts := strings.Split(req.Name, "#")
	if len(parts) == 3 {
		return g.reconcileCustom(ctx, req.Namespace, appsv1alpha1.TargetReference{APIVersion: parts[0], Kind: parts[1], Name: parts[2]})
	}
	if len(parts) != 2 {
		return ctrl.Result{}, nil
	}
	group, name := parts[0], parts[1]
	version := "v1"
	if group == appsv1beta1.GroupVersion.Group {
		version = appsv1beta1.GroupVersion.Version
	}
	ref := appsv1alpha1.TargetReference{APIVersion: schema.GroupVersion{Group: group, Version: version}.String(), Kind: "StatefulSet", Name: name}
	log := ctrl.LoggerFrom(ctx).WithValues("StatefulSet", klog.KRef(req.Namespace, name), "apiVersion", ref.APIVersion)
	var (
		uid         types.UID
		annotations map[string]string
	)
	if group == "apps" {
		sts := &appsv1.StatefulSet{}
		if err := g.Client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: name}, sts); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		uid, annotations = sts.UID, sts.Annotations
	} else {
		sts := &appsv1beta1.StatefulSet{}
		if err := g.Client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: name}, sts); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		uid, annotations = sts.UID, sts.Annotations
	}
	return g.apply(ctx, log, client.ObjectKey{Namespace: req.Namespace, Name: name}, generated(ref, req.Namespace, uid, annotations), uid)
}

// reconcileCustom is Reconcile for a custom workload: only for a kind the whitelist names, whose
// kind it then watches.
func (g *Generator) reconcileCustom(ctx context.Context, namespace string, ref appsv1alpha1.TargetReference) (ctrl.Result, error) {
	custom, err := g.Targets.Custom(ctx, ref.APIVersion, ref.Kind)
	if err != nil || !restore.Supported(ref.APIVersion, ref.Kind, custom) {
		return ctrl.Result{}, err
	}
	finder := workloadref.Finder{Readers: []client.Reader{g.Client}, Custom: func(context.Context) (*workloadref.Whitelist, error) { return custom, nil }}
	wl, err := finder.Get(ctx, namespace, workloadref.Ref(ref))
	if err != nil || wl == nil {
		return ctrl.Result{}, err
	}
	if err := g.late.Watch(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)); err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues(ref.Kind, klog.KRef(namespace, ref.Name), "apiVersion", ref.APIVersion)
	return g.apply(ctx, log, client.ObjectKey{Namespace: namespace, Name: ref.Name}, generated(ref, namespace, wl.UID, wl.Object.GetAnnotations()), wl.UID)
}

// apply makes the PersistentPodState key, named after the workload of uid, what want says: created,
// updated or (want nil) deleted, the last two only when the workload controls it.
func (g *Generator) apply(ctx context.Context, log logr.Logger, key client.ObjectKey, want *appsv1alpha1.PersistentPodState, uid types.UID) (ctrl.Result, error) {
	cur := &appsv1alpha1.PersistentPodState{}
	err := g.Client.Get(ctx, key, cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("get persistentpodstate: %w", err)
	}
	exists := err == nil
	owned := exists && metav1.IsControlledBy(cur, &metav1.ObjectMeta{UID: uid})
	switch {
	case want != nil && !exists:
		if err := g.Client.Create(ctx, want); err != nil {
			return ctrl.Result{}, client.IgnoreAlreadyExists(err)
		}
		log.V(2).Info("Created the PersistentPodState the annotations ask for")
	case want != nil && owned && !apiequality.Semantic.DeepEqual(want.Spec, cur.Spec):
		next := cur.DeepCopy()
		next.Spec = want.Spec
		if err := g.Client.Update(ctx, next); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, fmt.Errorf("update persistentpodstate: %w", err)
		}
		log.V(2).Info("Updated the generated PersistentPodState")
	case want == nil && owned:
		if err := g.Client.Delete(ctx, cur); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete persistentpodstate: %w", err)
		}
		log.V(2).Info("Deleted the generated PersistentPodState: the annotations no longer ask for it")
	}
	return ctrl.Result{}, nil
}
