package sidecarset

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
)

// syncRevisions records the SidecarSet's current sidecars as a ControllerRevision in the
// manager's namespace (a SidecarSet has none), with the SidecarSet's labels and annotations and
// a label naming it, and trims history to revisionHistoryLimit, keeping the revisions pods run and
// the pinned one. It returns the latest revision's name and the collision count.
func (r *Reconciler) syncRevisions(ctx context.Context, s *appsv1alpha1.SidecarSet, pods []*corev1.Pod) (string, *int32, error) {
	parent := &metav1.ObjectMeta{Name: s.Name, Namespace: r.namespace, UID: s.UID}
	data, err := inject.RevisionData(s)
	if err != nil {
		return "", nil, err
	}
	// As in 1.8, a revision carries the SidecarSet's labels and annotations (its hashes among
	// them), so that a label query finds the revisions of the SidecarSets it selects.
	labels := maps.Clone(s.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[inject.RevisionNameLabel] = s.Name
	history, err := r.revisions(ctx, s)
	if err != nil {
		return "", nil, err
	}
	collision := ptr.To(ptr.Deref(s.Status.CollisionCount, 0))
	want := revision.New(parent, controllerKind, labels, data, revision.Next(history), collision)
	want.Annotations = maps.Clone(s.Annotations)
	latest, sorted, err := r.history.Resolve(ctx, parent, controllerKind, history, want, collision)
	if err != nil {
		return "", nil, fmt.Errorf("record revision: %w", err)
	}
	if v, ok := labels[appsv1alpha1.SidecarSetCustomVersionLabel]; ok && latest.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] != v {
		c := latest.DeepCopy()
		c.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] = v
		if err := r.Client.Update(ctx, c); err != nil {
			return "", nil, fmt.Errorf("label revision %s with custom version: %w", c.Name, err)
		}
	}
	inUse := map[string]bool{latest.Name: true}
	for _, p := range pods {
		specs, err := inject.ReadUpgradeSpecs(p, appsv1alpha1.SidecarSetHashAnnotation)
		if err == nil && specs[s.Name].ControllerRevision != "" {
			inUse[specs[s.Name].ControllerRevision] = true
		}
	}
	if pinned := inject.FindPinned(s, sorted); pinned != nil {
		inUse[pinned.Name] = true
	}
	// revisionHistoryLimit counts every revision kept, those in use included.
	limit := int(ptr.Deref(s.Spec.RevisionHistoryLimit, 10))
	for _, rev := range sorted {
		if inUse[rev.Name] {
			limit--
		}
	}
	if err := r.history.Truncate(ctx, sorted, inUse, max(limit, 0)); err != nil {
		return "", nil, err
	}
	return latest.Name, collision, nil
}

// revisions returns the SidecarSet's ControllerRevisions, oldest first, through RevisionIndex.
func (r *Reconciler) revisions(ctx context.Context, s *appsv1alpha1.SidecarSet) ([]*appsv1.ControllerRevision, error) {
	var list appsv1.ControllerRevisionList
	if err := r.Client.List(ctx, &list, client.InNamespace(r.namespace), client.MatchingFields{RevisionIndex: s.Name}); err != nil {
		return nil, fmt.Errorf("list revisions: %w", err)
	}
	out := make([]*appsv1.ControllerRevision, 0, len(list.Items))
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == s.UID {
			out = append(out, &list.Items[i])
		}
	}
	revision.Sort(out)
	return out, nil
}
