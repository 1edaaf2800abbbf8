package statefulset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
)

// createError and updateError tell the status which condition a failure belongs to.
var (
	createError = rollout.Fails(appsv1beta1.FailedCreatePod)
	updateError = rollout.Fails(appsv1beta1.FailedUpdatePod)
)

// apply does the API writes a plan asks for. more says that pods are left to create after this
// reconcile's share.
func (r *Reconciler) apply(ctx context.Context, s *scope, p plan) (more bool, err error) {
	if err := r.ensureClaimOwners(ctx, s); err != nil {
		return false, createError(err)
	}
	for _, o := range p.restoreClaims {
		if err := r.ensureClaims(ctx, s, o); err != nil {
			return false, createError(err)
		}
		r.event(s.set, corev1.EventTypeNormal, "SuccessfulCreate", "create Claims for pending Pod %s in StatefulSet %s", podName(s.set.Name, o), s.set.Name)
	}
	lc := s.set.Spec.Lifecycle
	markNotReady := lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady
	if err := r.writer(s).Move(ctx, p.prepareDelete, appspub.LifecycleStatePreparingDelete, markNotReady); err != nil {
		return false, updateError(err)
	}
	for _, d := range p.delete {
		if err := r.deletePod(ctx, s, d.pod, d.deleteClaims); err != nil {
			return false, updateError(err)
		}
	}
	if len(p.create) > 0 {
		if more, err = r.createPods(ctx, s, p.create, p.createWanted); err != nil {
			return false, createError(err)
		}
	}
	for _, pod := range p.resize {
		if err := r.resizeClaims(ctx, s, pod); err != nil {
			return false, updateError(err)
		}
	}
	if err := r.applyUpdate(ctx, s, p); err != nil {
		return false, updateError(err)
	}
	return more, nil
}

// applyUpdate does the plan's update writes (podwrite.Writer.ApplyRollout). A pod recreated
// for its update is deleted; one of the update revision, with the same name and claims, replaces
// it.
func (r *Reconciler) applyUpdate(ctx context.Context, s *scope, p plan) error {
	return r.writer(s).ApplyRollout(ctx, s.set.Spec.Lifecycle, podwrite.Rollout{
		PrepareUpdate: p.prepareUpdate, PrepareRecreate: p.prepareRecreate, Stuck: p.stuck, Updates: p.update, Revision: s.Update.Name,
	})
}

// recreateMark is the value of the apps.kruise.io/specified-delete label on a pod whose recreate
// the preDelete hook holds: from then on it is a pod the user asked to delete, deleted once the
// hook lets go and made again at the update revision.
const recreateMark = "true"

// writer does the StatefulSet's pod writes, with the events 1.8 emits for a StatefulSet.
func (r *Reconciler) writer(s *scope) podwrite.Writer {
	set := s.set
	w := r.Writer(set, &s.budgetHeld, podwrite.Messages{
		Created: func(pod *corev1.Pod) string {
			return fmt.Sprintf("create Pod %s in StatefulSet %s successful", pod.Name, set.Name)
		},
		Deleted: func(pod *corev1.Pod) string {
			return fmt.Sprintf("delete Pod %s in StatefulSet %s successful", pod.Name, set.Name)
		},
		UpdatedInPlace: func(pod *corev1.Pod, rev string) string {
			return fmt.Sprintf("successfully update pod %s in-place (revision %s)", pod.Name, rev)
		},
	})
	w.RecreateMark, w.StuckReason = recreateMark, stuckReason
	return w
}

// createPods creates the pods the plan asks for, with their claims, in slow-start batches: create
// is this reconcile's share of the wanted ones. Before each batch after the first it stops,
// without an error, when the reconcile's context is done or the cache shows the StatefulSet
// changed, being deleted or gone. more says that some are left for a later reconcile.
func (r *Reconciler) createPods(ctx context.Context, s *scope, create []creation, wanted int) (bool, error) {
	log := ctrl.LoggerFrom(ctx)
	res, err := slowstart.Run(ctx, wanted, slowstart.Reread(r.Client, "StatefulSet", s.set), func(ctx context.Context, from, size int) error {
		return r.createBatch(ctx, s, create[from:from+size])
	})
	if err != nil {
		return false, err
	}
	if res.Stopped != "" {
		log.V(2).Info("Stopped creating pods", "reason", res.Stopped, "created", res.Created, "planned", wanted)
	}
	return res.More, nil
}

// createBatch creates one batch of pods, each after its claims, in parallel
// (podwrite.Writer.CreateBatch). A pod of that name that is not ours (a released one) keeps the
// ordinal.
func (r *Reconciler) createBatch(ctx context.Context, s *scope, batch []creation) error {
	creations := make([]podwrite.Creation, len(batch))
	for i, c := range batch {
		rev := s.Update
		if c.current {
			rev = s.Current
		}
		pod, err := r.newPod(s, rev, c.ordinal)
		if err != nil {
			r.event(s.set, corev1.EventTypeWarning, "FailedCreate", "failed to build pod %s: %v", podName(s.set.Name, c.ordinal), err)
			return err
		}
		creations[i] = podwrite.Creation{Pod: pod, What: "pod " + pod.Name, Before: func(ctx context.Context) error { return r.ensureClaims(ctx, s, c.ordinal) }}
	}
	return r.writer(s).CreateBatch(ctx, creations, true)
}

// deletePod deletes a pod and, when asked, its claims.
func (r *Reconciler) deletePod(ctx context.Context, s *scope, pod *corev1.Pod, claims bool) error {
	if deleted, err := r.writer(s).Delete(ctx, pod); err != nil || !deleted || !claims {
		return err
	}
	o, _ := ordinalOf(s.set.Name, pod.Name)
	for _, vct := range s.set.Spec.VolumeClaimTemplates {
		c, ok := s.claims[claimName(vct.Name, s.set.Name, o)]
		if !ok || c.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete persistent volume claim %s: %w", c.Name, err)
		}
	}
	return nil
}

// CreateBatchLimit is the largest batch of pods created at once, and so the most pods that can
// still appear after a scale-down or a deletion is seen.
const CreateBatchLimit = slowstart.BatchLimit
