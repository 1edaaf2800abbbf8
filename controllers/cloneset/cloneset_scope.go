package cloneset

import (
	"context"
	"fmt"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
)

// scope is what one reconcile reads before it decides anything.
type scope struct {
	cs *appsv1alpha1.CloneSet
	// pods are the CloneSet's pods that are neither finished nor terminating; terminating are
	// the ones on their way out. They share their maps and slices with the informer cache (they
	// are listed without a deep copy, which at a thousand pods was most of a reconcile's CPU and
	// allocations): read them only, and write a DeepCopy.
	pods, terminating []*corev1.Pod
	claims            []*corev1.PersistentVolumeClaim
	// Tracked is every revision, sorted, with the current and update ones that matter now.
	revision.Tracked
	// budgetHeld is set when a PodUnavailableBudget had no room for a pod's update this pass.
	budgetHeld atomic.Bool
}

// readScope reads the CloneSet's pods, claims and revisions, and creates the update revision if
// the template is new.
func (r *Reconciler) readScope(ctx context.Context, cs *appsv1alpha1.CloneSet) (*scope, error) {
	pods, sel, err := ownedpods.List(ctx, r.Client, cs, cs.Spec.Selector)
	if err != nil {
		return nil, err
	}
	s := &scope{cs: cs}
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
			s.terminating = append(s.terminating, p)
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			// A finished pod will not run again; it is replaced like a deleted one.
			s.terminating = append(s.terminating, p)
		default:
			s.pods = append(s.pods, p)
		}
	}

	if len(cs.Spec.VolumeClaimTemplates) > 0 {
		var claims corev1.PersistentVolumeClaimList
		if err := r.Client.List(ctx, &claims, client.InNamespace(cs.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("list persistent volume claims: %w", err)
		}
		for i := range claims.Items {
			if ref := metav1.GetControllerOf(&claims.Items[i]); ref != nil && ref.UID == cs.UID && claims.Items[i].DeletionTimestamp == nil {
				s.claims = append(s.claims, &claims.Items[i])
			}
		}
	}

	// The update revision is found or created, and the current one found. Revisions carry the
	// hash of the claim templates, so that a change of them can recreate pods.
	hash, err := claimsHash(cs.Spec.VolumeClaimTemplates)
	if err != nil {
		return nil, err
	}
	if s.Tracked, err = r.History.Track(ctx, revision.Workload{Parent: cs, GVK: controllerKind, Selector: cs.Spec.Selector.MatchLabels,
		Template: cs.Spec.Template, Labels: cs.Spec.Template.Labels, Annotations: map[string]string{claimsHashAnnotation: hash},
		CurrentRevision: cs.Status.CurrentRevision}, cs.Status.CollisionCount); err != nil {
		return nil, err
	}
	return s, nil
}

// revisionOf returns the name of the revision a pod is at, if it is in history.
func (s *scope) revisionOf(pod *corev1.Pod) string {
	v := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	for _, h := range s.History {
		if v == h.Name || v == revision.ShortHash(h.Name) {
			return h.Name
		}
	}
	return v
}

// isUpdated reports whether pod is at the update revision.
func (s *scope) isUpdated(pod *corev1.Pod) bool {
	return s.revisionOf(pod) == s.Update.Name
}
