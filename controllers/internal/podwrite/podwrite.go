package podwrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podrefresh"
)

// Budget says whether a pod's PodUnavailableBudget has room for its update.
type Budget interface {
	UpdateAllowed(ctx context.Context, pod *corev1.Pod) (bool, error)
}

// Messages are the Normal events' messages, as 1.8 words them for a kind.
type Messages struct {
	// Created and Deleted word the event of a pod created or deleted.
	Created, Deleted func(pod *corev1.Pod) string
	// UpdatedInPlace words the event of a pod updated in place to revision.
	UpdatedInPlace func(pod *corev1.Pod, revision string) string
}

// Writer does one workload's pod writes for one reconcile.
type Writer struct {
	Client client.Client
	// Recorder gets the events, on Owner; nil records none.
	Recorder record.EventRecorder
	// Owner is the workload: its key names its scale expectations, and its events go on it.
	Owner client.Object
	// Scale and Updates are the workload's expectations: of pods created or deleted, and of pods
	// written.
	Scale   *expectations.Scale
	Updates *expectations.ResourceVersion
	Mover   lifecycle.Mover
	Updater *inplaceupdate.Updater
	// Budget holds updates a PodUnavailableBudget has no room for; BudgetHeld is set when it held
	// one.
	Budget     Budget
	BudgetHeld *atomic.Bool
	Messages   Messages
	// RecreateMark is the kind's value of the specified-delete label on a pod whose recreation
	// the preDelete hook holds (PrepareRecreate).
	RecreateMark string
	// StuckReason ends the warning of a pod that cannot be updated in place: why it is not
	// recreated instead (the kind's InPlaceOnly setting).
	StuckReason string
}

func (w Writer) event(typ, reason, format string, args ...any) {
	if w.Recorder != nil {
		w.Recorder.Eventf(w.Owner, typ, reason, format, args...)
	}
}

func (w Writer) key() string { return client.ObjectKeyFromObject(w.Owner).String() }

// Refresher refreshes the workload's pods (podrefresh) with the writer's updater and lifecycle
// mover, expecting the pods it moves.
func (w Writer) Refresher() podrefresh.Refresher {
	return podrefresh.Refresher{Updater: w.Updater, Mover: w.Mover, Expect: func(p *corev1.Pod) { w.Updates.Expect(p) }}
}

// Move moves each pod to state, in turn, and expects the moved pods.
func (w Writer) Move(ctx context.Context, pods []*corev1.Pod, state appspub.LifecycleStateType, markNotReady bool) error {
	for _, pod := range pods {
		moved, err := w.Mover.Move(ctx, pod, state, markNotReady)
		if err != nil {
			return err
		}
		w.Updates.Expect(moved)
	}
	return nil
}

// PrepareRecreate marks a pod whose recreation the preDelete hook holds with the
// apps.kruise.io/specified-delete label (value mark, unless the label is set already) and moves
// it to PreparingDelete. From then on the plan treats it as a pod to delete.
func (w Writer) PrepareRecreate(ctx context.Context, pod *corev1.Pod, mark string, markNotReady bool) error {
	if pod.Labels[appsv1alpha1.SpecifiedDeleteKey] == "" {
		raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{appsv1alpha1.SpecifiedDeleteKey: mark}}})
		if err != nil {
			return err
		}
		marked := pod.DeepCopy()
		if err := w.Client.Patch(ctx, marked, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
			return fmt.Errorf("mark pod %s for recreation: %w", pod.Name, err)
		}
		pod = marked
	}
	return w.Move(ctx, []*corev1.Pod{pod}, appspub.LifecycleStatePreparingDelete, markNotReady)
}

// Delete deletes a pod under the scale expectations; deleted says this call deleted it. A pod
// already gone is no error.
func (w Writer) Delete(ctx context.Context, pod *corev1.Pod) (deleted bool, err error) {
	key := w.key()
	w.Scale.Expect(key, expectations.Delete, pod.Name)
	if err := w.Client.Delete(ctx, pod); err != nil {
		w.Scale.Observe(key, expectations.Delete, pod.Name)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		w.event(corev1.EventTypeWarning, "FailedDelete", "failed to delete pod %s: %v", pod.Name, err)
		return false, fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	w.event(corev1.EventTypeNormal, "SuccessfulDelete", "%s", w.Messages.Deleted(pod))
	return true, nil
}

// UpdateInPlace updates a pod in place with plan, first moving it to the Updating lifecycle
// state when hooked (the workload has an inPlaceUpdate hook).
func (w Writer) UpdateInPlace(ctx context.Context, pod *corev1.Pod, plan *inplaceupdate.Plan, hooked bool) error {
	if hooked {
		moved, err := w.Mover.Move(ctx, pod, appspub.LifecycleStateUpdating, false)
		if err != nil {
			return err
		}
		pod = moved
	}
	updated, err := w.Updater.Update(ctx, pod, plan)
	if err != nil {
		w.event(corev1.EventTypeWarning, "FailedUpdatePodInPlace", "failed to update pod %s in place: %v", pod.Name, err)
		return err
	}
	w.Updates.Expect(updated)
	w.event(corev1.EventTypeNormal, "SuccessfulUpdatePodInPlace", "%s", w.Messages.UpdatedInPlace(pod, plan.Revision))
	return nil
}

// Update is one pod's update in a plan: in place with InPlace, or, when it is nil, by deleting
// the pod so that one of the update revision replaces it.
type Update struct {
	Pod     *corev1.Pod
	InPlace *inplaceupdate.Plan
	// Deleted, when set, runs once a recreate deleted the pod (a CloneSet deletes the pod's
	// claims in it when the claim templates changed).
	Deleted func(ctx context.Context) error
}

// Rollout is the update part of a replica workload's plan.
type Rollout struct {
	// PrepareUpdate are pods the inPlaceUpdate hook holds before their update: they move to
	// PreparingUpdate.
	PrepareUpdate []*corev1.Pod
	// PrepareRecreate are pods the preDelete hook holds before their recreation
	// (PrepareRecreate, with the writer's RecreateMark).
	PrepareRecreate []*corev1.Pod
	// Stuck are pods that cannot reach the update revision; each gets a warning.
	Stuck []*corev1.Pod
	// Updates are the updates to carry out now.
	Updates []Update
	// Revision is the update revision, for the events.
	Revision string
}

// ApplyRollout does a rollout's writes under the workload's lifecycle lc. The updates are
// independent writes, made in parallel: the workload's maxUnavailable already bounds how many the
// plan picked.
func (w Writer) ApplyRollout(ctx context.Context, lc *appspub.Lifecycle, r Rollout) error {
	if len(r.PrepareUpdate) > 0 {
		if err := w.Move(ctx, r.PrepareUpdate, appspub.LifecycleStatePreparingUpdate, lc.InPlaceUpdate.MarkPodNotReady); err != nil {
			return err
		}
	}
	for _, pod := range r.PrepareRecreate {
		if err := w.PrepareRecreate(ctx, pod, w.RecreateMark, lc.PreDelete.MarkPodNotReady); err != nil {
			return err
		}
	}
	for _, pod := range r.Stuck {
		w.event(corev1.EventTypeWarning, "FailedUpdatePodInPlace", "pod %s cannot be updated in place to revision %s, and %s", pod.Name, r.Revision, w.StuckReason)
	}
	hooked := lc != nil && lc.InPlaceUpdate != nil
	errs := make([]error, len(r.Updates))
	ownedpods.Parallel(len(r.Updates), func(i int) { errs[i] = w.update(ctx, r.Updates[i], hooked, r.Revision) })
	return errors.Join(errs...)
}

// update carries out one update, unless the pod's budget has no room for it.
func (w Writer) update(ctx context.Context, u Update, hooked bool, revision string) error {
	if w.Budget != nil {
		if ok, err := w.Budget.UpdateAllowed(ctx, u.Pod); !ok || err != nil {
			if err == nil && w.BudgetHeld != nil {
				w.BudgetHeld.Store(true)
			}
			return err
		}
	}
	if u.InPlace != nil {
		return w.UpdateInPlace(ctx, u.Pod, u.InPlace, hooked)
	}
	deleted, err := w.Delete(ctx, u.Pod)
	if err != nil {
		return err
	}
	w.event(corev1.EventTypeNormal, "SuccessfulUpdatePodReCreate", "recreate pod %s for revision %s", u.Pod.Name, revision)
	if deleted && u.Deleted != nil {
		return u.Deleted(ctx)
	}
	return nil
}

// Creation is one pod to create.
type Creation struct {
	Pod *corev1.Pod
	// ExpectName is the name the scale expectations know the creation by; the pod's name when
	// empty (a pod with a generated name needs another).
	ExpectName string
	// Before, when set, runs first (it creates the pod's claims); its error fails the creation.
	Before func(ctx context.Context) error
	// What names the creation in its error ("pod web-0", "pod on node n1").
	What string
}

// CreateBatch creates one batch of pods, each after its Before, in parallel. A pod whose create
// failed is forgotten by the expectations at once, since the cache will never see it. With
// existingTaken, a pod whose name is taken already is no error (the name's owner keeps it).
func (w Writer) CreateBatch(ctx context.Context, batch []Creation, existingTaken bool) error {
	key := w.key()
	var wg sync.WaitGroup
	errs := make([]error, len(batch))
	for i, c := range batch {
		w.Scale.Expect(key, expectations.Create, c.expectName())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.Before != nil {
				if err := c.Before(ctx); err != nil {
					errs[i] = err
					return
				}
			}
			errs[i] = w.Client.Create(ctx, c.Pod)
		}()
	}
	wg.Wait()
	var firstErr error
	for i, err := range errs {
		c := batch[i]
		if err != nil {
			w.Scale.Observe(key, expectations.Create, c.expectName())
			if existingTaken && apierrors.IsAlreadyExists(err) {
				continue
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("create %s: %w", c.What, err)
			}
			continue
		}
		w.event(corev1.EventTypeNormal, "SuccessfulCreate", "%s", w.Messages.Created(c.Pod))
	}
	if firstErr != nil {
		w.event(corev1.EventTypeWarning, "FailedCreate", "failed to create pods: %v", firstErr)
	}
	return firstErr
}

func (c Creation) expectName() string {
	if c.ExpectName != "" {
		return c.ExpectName
	}
	return c.Pod.Name
}
