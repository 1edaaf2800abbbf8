package cloneset

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// scaleError and updateError tell the status which condition a failure belongs to.
var (
	scaleError  = rollout.Fails(appsv1alpha1.CloneSetConditionFailedScale)
	updateError = rollout.Fails(appsv1alpha1.CloneSetConditionFailedUpdate)
)

// apply does the API writes a plan asks for. more says that pods are left to create after
// this reconcile's share.
func (r *Reconciler) apply(ctx context.Context, s *scope, p plan) (more bool, err error) {
	more, err = r.applyScale(ctx, s, p)
	if err != nil {
		return false, scaleError(err)
	}
	if err := r.applyUpdate(ctx, s, p); err != nil {
		return false, updateError(err)
	}
	return more, nil
}

func (r *Reconciler) applyScale(ctx context.Context, s *scope, p plan) (more bool, err error) {
	lc := s.cs.Spec.Lifecycle
	w := r.writer(s)
	markNotReady := lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady
	if err := w.Move(ctx, p.restore, appspub.LifecycleStateNormal, markNotReady); err != nil {
		return false, err
	}
	if err := w.Move(ctx, p.prepareDelete, appspub.LifecycleStatePreparingDelete, markNotReady); err != nil {
		return false, err
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

	if p.scaleUpLimit != nil {
		r.Recorder.Eventf(s.cs, corev1.EventTypeWarning, "ScaleUpLimited", "Scale-up limited to %d new pods by scaleStrategy.maxUnavailable", *p.scaleUpLimit)
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
			if err := r.Client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete unused persistent volume claim %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

// applyUpdate does the plan's update writes (podwrite.Writer.ApplyRollout).
func (r *Reconciler) applyUpdate(ctx context.Context, s *scope, p plan) error {
	target := s.Update.Name
	if p.rollback {
		target = s.Current.Name
	}
	updates := p.update
	if len(p.dropClaims) > 0 {
		updates = append([]podwrite.Update{}, p.update...)
		for i, u := range updates {
			if slices.Contains(p.dropClaims, u.Pod) {
				updates[i].Deleted = func(ctx context.Context) error { return r.deleteClaims(ctx, s, u.Pod) }
			}
		}
	}
	return r.writer(s).ApplyRollout(ctx, s.cs.Spec.Lifecycle, podwrite.Rollout{
		PrepareUpdate: p.prepareUpdate, PrepareRecreate: p.prepareRecreate, Stuck: p.stuck, Updates: updates, Revision: target,
	})
}

// recreateMark is the value of the apps.kruise.io/specified-delete label on a pod whose recreate
// update the preDelete hook holds. Any value of the label asks for the pod's deletion; this one
// also tells the later passes that the deletion is a recreate, whose replacement takes the pod's
// instance ID and PVCs when the CloneSet reuses them.
const recreateMark = "recreate"

// writer does the CloneSet's pod writes, with the events 1.8 emits for a CloneSet.
func (r *Reconciler) writer(s *scope) podwrite.Writer {
	w := r.Writer(s.cs, &s.budgetHeld, podwrite.Messages{
		Created: func(pod *corev1.Pod) string { return fmt.Sprintf("succeed to create pod %s", pod.Name) },
		Deleted: func(pod *corev1.Pod) string { return fmt.Sprintf("succeed to delete pod %s", pod.Name) },
		UpdatedInPlace: func(pod *corev1.Pod, rev string) string {
			return fmt.Sprintf("successfully update pod %s in-place (revision %s)", pod.Name, rev)
		},
	})
	w.RecreateMark, w.StuckReason = recreateMark, stuckReason
	return w
}
