package cloneset

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/features"
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
	var errs []error
	for _, pod := range p.update {
		if err := r.updatePod(ctx, s, pod); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// updatePod moves one pod to the update revision: in place when the strategy and the change
// allow it, otherwise by deleting it so that a new pod of the update revision replaces it.
func (r *Reconciler) updatePod(ctx context.Context, s *scope, pod *corev1.Pod) error {
	cs := s.cs
	strategy := cs.Spec.UpdateStrategy.Type
	if strategy != appsv1alpha1.RecreateCloneSetUpdateStrategyType {
		from := s.revisionNamed(s.revisionOf(pod))
		if from != nil {
			opts := inplaceupdate.Options{EnvFromMetadata: r.gates.Enabled(features.InPlaceUpdateEnvFromMetadata)}
			if ips := cs.Spec.UpdateStrategy.InPlaceUpdateStrategy; ips != nil {
				opts.GraceSeconds = ips.GracePeriodSeconds
			}
			plan, ok, err := inplaceupdate.PlanUpdate(from, s.update, inplaceupdate.SpecTemplate, opts)
			if err != nil {
				return err
			}
			if ok {
				return r.updateInPlace(ctx, s, pod, plan)
			}
		}
		if strategy == appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType {
			err := fmt.Errorf("pod %s cannot be updated in place to revision %s, and the update strategy is InPlaceOnly", pod.Name, s.update.Name)
			r.event(cs, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "%v", err)
			return err
		}
	}
	if err := r.deletePod(ctx, s, pod, false); err != nil {
		return err
	}
	r.event(cs, corev1.EventTypeNormal, "SuccessfulUpdatePodReCreate", "recreate pod %s for revision %s", pod.Name, s.update.Name)
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
