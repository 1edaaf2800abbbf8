package cloneset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
)

// scaleError and updateError tell the status which condition a failure belongs to.
type scaleError struct{ error }
type updateError struct{ error }

func (e scaleError) Unwrap() error  { return e.error }
func (e updateError) Unwrap() error { return e.error }

// apply does the API writes a plan asks for. more says that pods are left to create after
// this reconcile's share.
func (r *Reconciler) apply(ctx context.Context, s *scope, p plan) (more bool, err error) {
	more, err = r.applyScale(ctx, s, p)
	if err != nil {
		return false, scaleError{err}
	}
	if err := r.applyUpdate(ctx, s, p); err != nil {
		return false, updateError{err}
	}
	return more, nil
}

func (r *Reconciler) applyScale(ctx context.Context, s *scope, p plan) (more bool, err error) {
	lc := s.cs.Spec.Lifecycle
	for _, pod := range p.restore {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStateNormal, lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady)
		if err != nil {
			return false, err
		}
		r.updateExp.Expect(moved)
	}
	for _, pod := range p.prepareDelete {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStatePreparingDelete, lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady)
		if err != nil {
			return false, err
		}
		r.updateExp.Expect(moved)
	}
	for _, d := range p.delete {
		if err := r.deletePod(ctx, s, d.pod, d.deleteClaims); err != nil {
			return false, err
		}
	}
	if s.cs.Spec.ScaleStrategy.DisablePVCReuse {
		if err := r.deleteFreeClaims(ctx, s); err != nil {
			return false, err
		}
	}

	if p.createCurrent+p.createUpdated == 0 {
		return false, nil
	}
	return r.createPods(ctx, s, p)
}

// deleteFreeClaims removes PVCs whose pod is gone, when the CloneSet does not reuse them.
func (r *Reconciler) deleteFreeClaims(ctx context.Context, s *scope) error {
	free := map[string]bool{}
	for _, id := range freeInstanceIDs(s) {
		free[id] = true
	}
	for _, c := range s.claims {
		if free[c.Labels[appsv1alpha1.CloneSetInstanceID]] {
			if err := r.client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete unused persistent volume claim %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

func (r *Reconciler) applyUpdate(ctx context.Context, s *scope, p plan) error {
	lc := s.cs.Spec.Lifecycle
	for _, pod := range p.prepareUpdate {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStatePreparingUpdate, lc.InPlaceUpdate.MarkPodNotReady)
		if err != nil {
			return err
		}
		r.updateExp.Expect(moved)
	}
	for _, pod := range p.prepareRecreate {
		if err := r.prepareRecreate(ctx, s, pod); err != nil {
			return err
		}
	}
	for _, pod := range p.stuck {
		r.event(s.cs, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "pod %s cannot be updated in place to revision %s, and the update strategy is InPlaceOnly", pod.Name, s.update.Name)
	}
	// The updates are independent writes; maxUnavailable already bounds how many the plan picked.
	errs := make([]error, len(p.update))
	ownedpods.Parallel(len(p.update), func(i int) { errs[i] = r.updatePod(ctx, s, p.update[i]) })
	return errors.Join(errs...)
}

// recreateMark is the value of the apps.kruise.io/specified-delete label on a pod whose recreate
// update the preDelete hook holds. Any value of the label asks for the pod's deletion; this one
// also tells the later passes that the deletion is a recreate, whose replacement takes the pod's
// instance ID and PVCs when the CloneSet reuses them.
const recreateMark = "recreate"

// prepareRecreate marks a pod whose recreate the preDelete hook holds for deletion, with the
// specified-delete label set to recreateMark, and moves it to PreparingDelete. From then on the
// plan treats it as a recreate: it is deleted once the hook lets go, and replaced.
func (r *Reconciler) prepareRecreate(ctx context.Context, s *scope, pod *corev1.Pod) error {
	if pod.Labels[appsv1alpha1.SpecifiedDeleteKey] == "" {
		raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{appsv1alpha1.SpecifiedDeleteKey: recreateMark}}})
		if err != nil {
			return err
		}
		marked := pod.DeepCopy()
		if err := r.client.Patch(ctx, marked, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
			return fmt.Errorf("mark pod %s for recreation: %w", pod.Name, err)
		}
		pod = marked
	}
	lc := s.cs.Spec.Lifecycle
	moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStatePreparingDelete, lc.PreDelete.MarkPodNotReady)
	if err != nil {
		return err
	}
	r.updateExp.Expect(moved)
	return nil
}

// updatePod carries out one update of the plan: in place with its plan, or by deleting the pod so
// that a new pod of the update revision replaces it.
func (r *Reconciler) updatePod(ctx context.Context, s *scope, u podUpdate) error {
	// An update the pod's PodUnavailableBudget has no room for waits.
	if ok, err := r.budget.UpdateAllowed(ctx, u.pod); !ok || err != nil {
		s.budgetHeld.Store(err == nil)
		return err
	}
	if u.inPlace != nil {
		return r.updateInPlace(ctx, s, u.pod, u.inPlace)
	}
	if err := r.deletePod(ctx, s, u.pod, false); err != nil {
		return err
	}
	r.event(s.cs, corev1.EventTypeNormal, "SuccessfulUpdatePodReCreate", "recreate pod %s for revision %s", u.pod.Name, s.update.Name)
	return nil
}

func (r *Reconciler) updateInPlace(ctx context.Context, s *scope, pod *corev1.Pod, plan *inplaceupdate.Plan) error {
	cs := s.cs
	if cs.Spec.Lifecycle != nil && cs.Spec.Lifecycle.InPlaceUpdate != nil {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStateUpdating, false)
		if err != nil {
			return err
		}
		pod = moved
	}
	updated, err := r.updater.Update(ctx, pod, plan)
	if err != nil {
		r.event(cs, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "failed to update pod %s in place: %v", pod.Name, err)
		return err
	}
	r.updateExp.Expect(updated)
	r.event(cs, corev1.EventTypeNormal, "SuccessfulUpdatePodInPlace", "successfully update pod %s in-place (revision %s)", pod.Name, plan.Revision)
	return nil
}
