package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ordinals"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/features"
)

// scope is what one reconcile reads before it decides anything. Its pods and claims are the
// informer cache's own objects, listed without a copy: nothing may change them, and a write
// goes through a copy (inplaceupdate, lifecycle and podcondition make one).
type scope struct {
	set *appsv1beta1.StatefulSet
	// pods are the StatefulSet's pods named <set>-<ordinal>, terminating ones included.
	pods []*corev1.Pod
	// claims are the PVCs of the namespace by name; only those the templates name matter.
	claims map[string]*corev1.PersistentVolumeClaim
	// ordinals are the ordinals the replicas take, as arithmetic: never one entry per replica.
	ordinals ordinals.Set
	// Tracked is every revision, sorted, with the current and update ones that matter now.
	revision.Tracked
	// budgetHeld is set when a PodUnavailableBudget had no room for a pod's update this pass.
	budgetHeld atomic.Bool
}

// readScope reads the StatefulSet's pods (adopting orphans that match its selector and
// releasing its pods that no longer do), its claims and its revisions, and creates the update
// revision if the template is new.
func (r *Reconciler) readScope(ctx context.Context, set *appsv1beta1.StatefulSet) (*scope, error) {
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("read spec.selector: %w", err)
	}
	if sel.Empty() {
		return nil, fmt.Errorf("read spec.selector: an empty selector would select every pod")
	}
	s := &scope{set: set}
	reserve, errs := ordinals.ParseReserved(set.Spec.ReserveOrdinals, field.NewPath("spec", "reserveOrdinals"))
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	start := 0
	if set.Spec.Ordinals != nil && r.Gates.Enabled(features.StatefulSetStartOrdinal) {
		start = int(set.Spec.Ordinals.Start)
	}
	s.ordinals = ordinals.New(start, int(ptr.Deref(set.Spec.Replicas, 1)), reserve)

	if s.pods, err = r.claimPods(ctx, set, sel); err != nil {
		return nil, err
	}
	if len(set.Spec.VolumeClaimTemplates) > 0 {
		var claims corev1.PersistentVolumeClaimList
		if err := r.Client.List(ctx, &claims, client.InNamespace(set.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list persistent volume claims: %w", err)
		}
		s.claims = make(map[string]*corev1.PersistentVolumeClaim, len(claims.Items))
		for i := range claims.Items {
			s.claims[claims.Items[i].Name] = &claims.Items[i]
		}
	}
	// The update revision is found or created, and the current one found.
	if s.Tracked, err = r.History.Track(ctx, revision.Workload{Parent: set, GVK: controllerKind, Selector: set.Spec.Selector.MatchLabels,
		Template: set.Spec.Template, Labels: set.Spec.Template.Labels, CurrentRevision: set.Status.CurrentRevision}, set.Status.CollisionCount); err != nil {
		return nil, err
	}
	return s, nil
}

// claimPods returns the StatefulSet's pods. A pod that matches the selector, has no controller
// and is named as one of the set's pods is adopted; a pod the set controls that no longer
// matches the selector is released.
func (r *Reconciler) claimPods(ctx context.Context, set *appsv1beta1.StatefulSet, sel labels.Selector) ([]*corev1.Pod, error) {
	log := ctrl.LoggerFrom(ctx)
	var matching corev1.PodList
	if err := r.Client.List(ctx, &matching, client.InNamespace(set.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	owned, err := ownedpods.Controlled(ctx, r.Client, set.Namespace, set.UID)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, p := range owned {
		if sel.Matches(labels.Set(p.Labels)) {
			continue // listed among the matching ones
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := r.release(ctx, set, p); err != nil {
			return nil, err
		}
		log.V(2).Info("Released a pod that no longer matches the selector", "Pod", klog.KObj(p))
	}
	for i := range matching.Items {
		p := &matching.Items[i]
		if _, ok := ordinalOf(set.Name, p.Name); !ok {
			continue
		}
		ref := metav1.GetControllerOf(p)
		switch {
		case ref != nil && ref.UID == set.UID:
			out = append(out, p)
		case ref == nil && p.DeletionTimestamp == nil:
			adopted, err := r.adopt(ctx, set, p)
			if err != nil {
				return nil, err
			}
			if adopted != nil {
				log.V(2).Info("Adopted an orphan pod", "Pod", klog.KObj(p))
				out = append(out, adopted)
			}
		}
	}
	return out, nil
}

// adopt makes set the controller of an orphan pod. It returns nil when the pod changed or went
// meanwhile; the next reconcile sees it again.
func (r *Reconciler) adopt(ctx context.Context, set *appsv1beta1.StatefulSet, pod *corev1.Pod) (*corev1.Pod, error) {
	// A set being deleted or changed since it was read must not adopt: read it live first.
	fresh := &appsv1beta1.StatefulSet{}
	if err := r.Live.Get(ctx, client.ObjectKeyFromObject(set), fresh); err != nil || fresh.UID != set.UID || fresh.DeletionTimestamp != nil {
		return nil, nil
	}
	adopted := pod.DeepCopy()
	adopted.OwnerReferences = append(adopted.OwnerReferences, *metav1.NewControllerRef(set, controllerKind))
	if err := r.Client.Patch(ctx, adopted, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("adopt pod %s: %w", pod.Name, err)
	}
	return adopted, nil
}

// release removes set's controller reference from pod.
func (r *Reconciler) release(ctx context.Context, set *appsv1beta1.StatefulSet, pod *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []map[string]any{{"$patch": "delete", "uid": set.UID}},
		"uid":             pod.UID,
	}})
	if err != nil {
		return err
	}
	// The patch goes through a copy: pod is the informer's own object, and Patch writes the
	// answer into what it is given.
	if err := r.Client.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
		return fmt.Errorf("release pod %s: %w", pod.Name, err)
	}
	return nil
}

// revisionOf returns the name of the revision a pod is at.
func revisionOf(pod *corev1.Pod) string { return pod.Labels[appsv1.ControllerRevisionHashLabelKey] }

// isUpdated reports whether pod is at the update revision.
func (s *scope) isUpdated(pod *corev1.Pod) bool { return revisionOf(pod) == s.Update.Name }
