package statefulset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
)

// createError and updateError tell the status which condition a failure belongs to.
type createError struct{ error }
type updateError struct{ error }

func (e createError) Unwrap() error { return e.error }
func (e updateError) Unwrap() error { return e.error }

// apply does the API writes a plan asks for. more says that pods are left to create after this
// reconcile's share.
func (r *Reconciler) apply(ctx context.Context, s *scope, p plan) (more bool, err error) {
	if err := r.ensureClaimOwners(ctx, s); err != nil {
		return false, createError{err}
	}
	for _, o := range p.restoreClaims {
		if err := r.ensureClaims(ctx, s, o); err != nil {
			return false, createError{err}
		}
		r.event(s.set, corev1.EventTypeNormal, "SuccessfulCreate", "create Claims for pending Pod %s in StatefulSet %s", podName(s.set.Name, o), s.set.Name)
	}
	lc := s.set.Spec.Lifecycle
	markNotReady := lc != nil && lc.PreDelete != nil && lc.PreDelete.MarkPodNotReady
	for _, pod := range p.prepareDelete {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStatePreparingDelete, markNotReady)
		if err != nil {
			return false, updateError{err}
		}
		r.updateExp.Expect(moved)
	}
	for _, d := range p.delete {
		if err := r.deletePod(ctx, s, d.pod, d.deleteClaims); err != nil {
			return false, updateError{err}
		}
	}
	if len(p.create) > 0 {
		if more, err = r.createPods(ctx, s, p.create, p.createWanted); err != nil {
			return false, createError{err}
		}
	}
	if err := r.applyUpdate(ctx, s, p); err != nil {
		return false, updateError{err}
	}
	return more, nil
}

func (r *Reconciler) applyUpdate(ctx context.Context, s *scope, p plan) error {
	lc := s.set.Spec.Lifecycle
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
		r.event(s.set, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "pod %s cannot be updated in place to revision %s, and the podUpdatePolicy is InPlaceOnly", pod.Name, s.update.Name)
	}
	// The updates are independent writes; maxUnavailable already bounds how many the plan picked.
	errs := make([]error, len(p.update))
	ownedpods.Parallel(len(p.update), func(i int) { errs[i] = r.updatePod(ctx, s, p.update[i]) })
	return errors.Join(errs...)
}

// prepareRecreate marks a pod whose recreate the preDelete hook holds with the specified-delete
// label and moves it to PreparingDelete. From then on it is a pod the user asked to delete: it is
// deleted once the hook lets go, and made again at the update revision.
func (r *Reconciler) prepareRecreate(ctx context.Context, s *scope, pod *corev1.Pod) error {
	if pod.Labels[appsv1alpha1.SpecifiedDeleteKey] == "" {
		raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{appsv1alpha1.SpecifiedDeleteKey: "true"}}})
		if err != nil {
			return err
		}
		marked := pod.DeepCopy()
		if err := r.client.Patch(ctx, marked, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
			return fmt.Errorf("mark pod %s for recreation: %w", pod.Name, err)
		}
		pod = marked
	}
	moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStatePreparingDelete, s.set.Spec.Lifecycle.PreDelete.MarkPodNotReady)
	if err != nil {
		return err
	}
	r.updateExp.Expect(moved)
	return nil
}

// updatePod carries out one update of the plan: in place with its plan, or by deleting the pod so
// that a pod of the update revision, with the same name and claims, replaces it.
func (r *Reconciler) updatePod(ctx context.Context, s *scope, u podUpdate) error {
	set := s.set
	// An update the pod's PodUnavailableBudget has no room for waits.
	if ok, err := r.budget.UpdateAllowed(ctx, u.pod); !ok || err != nil {
		s.budgetHeld.Store(err == nil)
		return err
	}
	if u.inPlace == nil {
		if err := r.deletePod(ctx, s, u.pod, false); err != nil {
			return err
		}
		r.event(set, corev1.EventTypeNormal, "SuccessfulUpdatePodReCreate", "recreate pod %s for revision %s", u.pod.Name, s.update.Name)
		return nil
	}
	pod := u.pod
	if set.Spec.Lifecycle != nil && set.Spec.Lifecycle.InPlaceUpdate != nil {
		moved, err := r.lifecycle.Move(ctx, pod, appspub.LifecycleStateUpdating, false)
		if err != nil {
			return err
		}
		pod = moved
	}
	updated, err := r.updater.Update(ctx, pod, u.inPlace)
	if err != nil {
		r.event(set, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "failed to update pod %s in place: %v", pod.Name, err)
		return err
	}
	r.updateExp.Expect(updated)
	r.event(set, corev1.EventTypeNormal, "SuccessfulUpdatePodInPlace", "successfully update pod %s in-place (revision %s)", pod.Name, u.inPlace.Revision)
	return nil
}

// createPods creates the pods the plan asks for, with their claims, in slow-start batches: create
// is this reconcile's share of the wanted ones. Before each batch after the first it stops,
// without an error, when the reconcile's context is done or the cache shows the StatefulSet
// changed, being deleted or gone. more says that some are left for a later reconcile.
func (r *Reconciler) createPods(ctx context.Context, s *scope, create []creation, wanted int) (bool, error) {
	log := ctrl.LoggerFrom(ctx)
	res, err := slowstart.Run(ctx, wanted, slowstart.Reread(r.client, "StatefulSet", s.set), func(ctx context.Context, from, size int) error {
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

// createBatch creates one batch of pods, each after its claims, in parallel. A pod whose create
// failed is forgotten by the expectations at once, since the cache will never see it.
func (r *Reconciler) createBatch(ctx context.Context, s *scope, batch []creation) error {
	key := client.ObjectKeyFromObject(s.set).String()
	pods := make([]*corev1.Pod, len(batch))
	for i, c := range batch {
		rev := s.update
		if c.current {
			rev = s.current
		}
		pod, err := r.newPod(s, rev, c.ordinal)
		if err != nil {
			r.event(s.set, corev1.EventTypeWarning, "FailedCreate", "failed to build pod %s: %v", podName(s.set.Name, c.ordinal), err)
			return err
		}
		pods[i] = pod
	}
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, pod := range pods {
		r.scaleExp.Expect(key, expectations.Create, pod.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.ensureClaims(ctx, s, batch[i].ordinal); err != nil {
				errs[i] = err
				return
			}
			errs[i] = r.client.Create(ctx, pod)
		}()
	}
	wg.Wait()
	var firstErr error
	for i, err := range errs {
		pod := pods[i]
		if err != nil {
			r.scaleExp.Observe(key, expectations.Create, pod.Name)
			if apierrors.IsAlreadyExists(err) {
				// A pod of that name that is not ours (a released one) keeps the ordinal.
				continue
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("create pod %s: %w", pod.Name, err)
			}
			continue
		}
		r.event(s.set, corev1.EventTypeNormal, "SuccessfulCreate", "create Pod %s in StatefulSet %s successful", pod.Name, s.set.Name)
	}
	if firstErr != nil {
		r.event(s.set, corev1.EventTypeWarning, "FailedCreate", "failed to create pods: %v", firstErr)
	}
	return firstErr
}

// deletePod deletes a pod and, when asked, its claims.
func (r *Reconciler) deletePod(ctx context.Context, s *scope, pod *corev1.Pod, claims bool) error {
	key := client.ObjectKeyFromObject(s.set).String()
	r.scaleExp.Expect(key, expectations.Delete, pod.Name)
	if err := r.client.Delete(ctx, pod); err != nil {
		r.scaleExp.Observe(key, expectations.Delete, pod.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		r.event(s.set, corev1.EventTypeWarning, "FailedDelete", "failed to delete pod %s: %v", pod.Name, err)
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	r.event(s.set, corev1.EventTypeNormal, "SuccessfulDelete", "delete Pod %s in StatefulSet %s successful", pod.Name, s.set.Name)
	if !claims {
		return nil
	}
	o, _ := ordinalOf(s.set.Name, pod.Name)
	for _, vct := range s.set.Spec.VolumeClaimTemplates {
		c, ok := s.claims[claimName(vct.Name, s.set.Name, o)]
		if !ok || c.DeletionTimestamp != nil {
			continue
		}
		if err := r.client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete persistent volume claim %s: %w", c.Name, err)
		}
	}
	return nil
}

// CreateBatchLimit is the largest batch of pods created at once, and so the most pods that can
// still appear after a scale-down or a deletion is seen.
const CreateBatchLimit = slowstart.BatchLimit
