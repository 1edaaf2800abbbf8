package sidecarset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
)

// Name is the controller's name and the <name> of its --<name>-workers flag.
const Name = "sidecarset"

// InjectedIndex is the pod cache index by the SidecarSets a pod was injected by (its
// kruise.io/sidecarset-injected-list), so a SidecarSet's pods are read without listing every pod.
const InjectedIndex = "pod.sidecarset.injected"

// RevisionIndex is the ControllerRevision cache index by the SidecarSet a revision belongs to
// (its kruise.io/sidecarset-name label), so that reading one SidecarSet's history does not scan
// every SidecarSet's revisions in the manager's namespace.
const RevisionIndex = "controllerrevision.sidecarset.name"

// revisionKeys is the RevisionIndex function.
func revisionKeys(o client.Object) []string {
	if v, ok := o.GetLabels()[inject.RevisionNameLabel]; ok {
		return []string{v}
	}
	return nil
}

// controllerKind is the GroupVersionKind of SidecarSet, for owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("SidecarSet")

// Reconciler reconciles SidecarSets.
type Reconciler struct {
	kit.Tools
	live      client.Reader
	history   revision.History
	namespace string
	marks     *Marks
}

// SetupWithManager registers the SidecarSet controller and the pod index it reads through.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, InjectedIndex, injectedKeys); err != nil {
		return fmt.Errorf("index pods by sidecarset: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &appsv1.ControllerRevision{}, RevisionIndex, revisionKeys); err != nil {
		return fmt.Errorf("index controller revisions by sidecarset: %w", err)
	}
	if err := inject.IndexSidecarSets(ctx, mgr); err != nil {
		return err
	}
	r := &Reconciler{
		Tools:     kit.ToolsFor(mgr, d, Name),
		live:      mgr.GetAPIReader(),
		history:   revision.History{Client: mgr.GetClient(), Live: mgr.GetAPIReader()},
		namespace: d.ManagerNamespace,
		marks:     NewMarks(mgr.GetClient(), d.Clock),
	}
	prologue := kit.Object[*appsv1alpha1.SidecarSet]{Reader: r.Client, Kind: "SidecarSet", Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.SidecarSet{}).
			Watches(&corev1.Pod{}, kit.Events{Create: podToSidecarSets, Update: podChanged, Delete: r.podDeleted}.Handler())
	})
}

// podChanged wakes the SidecarSets injected into a pod that changed.
func podChanged(ctx context.Context, _, cur client.Object) []client.ObjectKey {
	return podToSidecarSets(ctx, cur)
}

// podDeleted forgets the pod's last SidecarSetUpgradable write and wakes the SidecarSets
// injected into it.
func (r *Reconciler) podDeleted(ctx context.Context, o client.Object) []client.ObjectKey {
	r.marks.Forget(o.GetUID())
	return podToSidecarSets(ctx, o)
}

// injectedKeys is the InjectedIndex function.
func injectedKeys(o client.Object) []string {
	return inject.InjectedList(o)
}

// podToSidecarSets wakes the SidecarSets injected into a pod.
func podToSidecarSets(_ context.Context, o client.Object) []client.ObjectKey {
	var out []client.ObjectKey
	for _, n := range inject.InjectedList(o) {
		out = append(out, client.ObjectKey{Name: n})
	}
	return out
}

// reconcile records the SidecarSet's revision, moves the sidecars of its pods to the latest
// images as the update strategy allows, and writes its status. It works on a copy of stored, whose
// status it writes.
func (r *Reconciler) reconcile(ctx context.Context, stored *appsv1alpha1.SidecarSet) (ctrl.Result, error) {
	log, s := ctrl.LoggerFrom(ctx), stored.DeepCopy()
	if err := ensureHashes(s); err != nil {
		return ctrl.Result{}, err
	}
	pods, err := r.pods(ctx, s.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	latest, collision, err := r.syncRevisions(ctx, s, pods)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.Status.LatestRevision = latest

	p := planUpdate(s, pods, r.Clock.Now())
	for _, pod := range p.notUpgradable {
		if err := r.markUpgradable(ctx, pod, s.Name, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(p.notUpgradable) > 0 {
		r.Recorder.Eventf(s, corev1.EventTypeNormal, "NotUpgradablePods",
			"%d pod(s) run a revision that differs from the latest by more than images; their sidecars are not updated in place, recreate them to get the latest", len(p.notUpgradable))
	}
	for _, pod := range p.reset {
		log.V(2).Info("Resetting old hot-upgrade sidecars to the empty image", "Pod", klog.KObj(pod))
		if err := r.applyReset(ctx, pod, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, pod := range p.update {
		log.V(2).Info("Updating sidecars in place", "Pod", klog.KObj(pod))
		if err := r.applyUpdate(ctx, pod, s); err != nil {
			return ctrl.Result{}, err
		}
	}

	status := computeStatus(s, pods, latest, collision)
	return kit.WriteStatus(ctx, r.Client, stored, func(s *appsv1alpha1.SidecarSet) { s.Status = status })
}

// ensureHashes fills the revision hashes of a SidecarSet that the defaulting webhook did not
// stamp (created while the webhook was off), in memory.
func ensureHashes(s *appsv1alpha1.SidecarSet) error {
	if s.Annotations[appsv1alpha1.SidecarSetHashAnnotation] != "" && s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation] != "" {
		return nil
	}
	h, err := inject.Hash(s)
	if err != nil {
		return err
	}
	hn, err := inject.HashWithoutImage(s)
	if err != nil {
		return err
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[appsv1alpha1.SidecarSetHashAnnotation] = h
	s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation] = hn
	return nil
}

// pods returns the active pods the SidecarSet was injected into, from the cache index. They are
// the cache's own objects, listed without a copy: a pass reads them, and every write starts
// from a copy (Marks, applyUpdate) or from a fresh read (applyReset).
func (r *Reconciler) pods(ctx context.Context, name string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.MatchingFields{InjectedIndex: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list pods of sidecarset %s: %w", name, err)
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}
