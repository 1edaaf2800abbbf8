package cloneset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
)

// defaultRevisionHistoryLimit is how many unused revisions are kept when the spec does not say.
const defaultRevisionHistoryLimit = 10

// outcome is what a plan reports to the status.
type outcome struct {
	// failedUpdate, when set, says why the update cannot go on (an InPlaceOnly change that cannot
	// go in place).
	failedUpdate string
}

// planOutcome is what the status learns from a plan.
func planOutcome(s *scope, p plan) outcome {
	if len(p.stuck) == 0 {
		return outcome{}
	}
	names := make([]string, len(p.stuck))
	for i, pod := range p.stuck {
		names[i] = pod.Name
	}
	return outcome{failedUpdate: fmt.Sprintf("pods %s cannot be updated in place to revision %s, and the update strategy is InPlaceOnly", strings.Join(names, ", "), s.update.Name)}
}

// computeStatus is the CloneSet status the scope shows, with the conditions the plan's outcome
// and a sync error set. It is pure.
func computeStatus(s *scope, now time.Time, out outcome, syncErr error) appsv1alpha1.CloneSetStatus {
	cs := s.cs
	replicas := int(ptr.Deref(cs.Spec.Replicas, 1))
	st := appsv1alpha1.CloneSetStatus{
		ObservedGeneration:      cs.Generation,
		UpdateRevision:          s.update.Name,
		CurrentRevision:         s.current.Name,
		CollisionCount:          ptr.To(s.collisionCount),
		ExpectedUpdatedReplicas: int32(replicas - partitionCount(cs.Spec.UpdateStrategy.Partition, replicas)),
		Replicas:                int32(len(s.pods)),
	}
	if sel, err := metav1.LabelSelectorAsSelector(cs.Spec.Selector); err == nil {
		st.LabelSelector = sel.String()
	}
	for _, pod := range s.pods {
		ready := podsort.IsReady(pod) && inplaceupdate.NotUnready(pod)
		available := ready && podsort.IsAvailable(pod, cs.Spec.MinReadySeconds, now)
		updated := s.isUpdated(pod)
		count := func(field *int32, ok bool) {
			if ok {
				*field++
			}
		}
		count(&st.ReadyReplicas, ready)
		count(&st.AvailableReplicas, available)
		count(&st.UpdatedReplicas, updated)
		count(&st.UpdatedReadyReplicas, updated && ready)
		count(&st.UpdatedAvailableReplicas, updated && available)
	}
	if st.UpdatedReplicas == st.Replicas && int(st.Replicas) >= replicas {
		st.CurrentRevision = s.update.Name
	}
	st.Conditions = conditions(cs.Status.Conditions, now, out, syncErr)
	return st
}

// conditions keeps the CloneSet's conditions, setting FailedScale or FailedUpdate while a sync
// fails for that reason or the plan says the update cannot go on, and dropping them once that is
// over.
func conditions(old []appsv1alpha1.CloneSetCondition, now time.Time, o outcome, syncErr error) []appsv1alpha1.CloneSetCondition {
	failed := map[appsv1alpha1.CloneSetConditionType]string{}
	if o.failedUpdate != "" {
		failed[appsv1alpha1.CloneSetConditionFailedUpdate] = o.failedUpdate
	}
	var se scaleError
	var ue updateError
	switch {
	case errors.As(syncErr, &se):
		failed[appsv1alpha1.CloneSetConditionFailedScale] = se.Error()
	case errors.As(syncErr, &ue):
		failed[appsv1alpha1.CloneSetConditionFailedUpdate] = ue.Error()
	}
	var out []appsv1alpha1.CloneSetCondition
	for _, c := range old {
		if c.Type != appsv1alpha1.CloneSetConditionFailedScale && c.Type != appsv1alpha1.CloneSetConditionFailedUpdate {
			out = append(out, c)
			continue
		}
		if msg, ok := failed[c.Type]; ok {
			c.Message = msg
			out = append(out, c)
			delete(failed, c.Type)
		}
	}
	for _, t := range []appsv1alpha1.CloneSetConditionType{appsv1alpha1.CloneSetConditionFailedScale, appsv1alpha1.CloneSetConditionFailedUpdate} {
		if msg, ok := failed[t]; ok {
			out = append(out, appsv1alpha1.CloneSetCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now), Reason: string(t), Message: msg})
		}
	}
	return out
}

// writeStatus writes the computed status if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope, out outcome, syncErr error) (ctrl.Result, error) {
	st := computeStatus(s, r.clock.Now(), out, syncErr)
	return kit.WriteStatus(ctx, r.client, s.cs.DeepCopy(), func(cs *appsv1alpha1.CloneSet) { cs.Status = st })
}

// truncateHistory deletes the oldest revisions that no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) truncateHistory(ctx context.Context, s *scope) error {
	limit := int(ptr.Deref(s.cs.Spec.RevisionHistoryLimit, defaultRevisionHistoryLimit))
	inUse := map[string]bool{s.current.Name: true, s.update.Name: true}
	for _, p := range append(append([]*corev1.Pod{}, s.pods...), s.terminating...) {
		inUse[s.revisionOf(p)] = true
	}
	return r.history.Truncate(ctx, s.history, inUse, limit)
}
