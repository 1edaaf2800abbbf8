package cloneset

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// outcome is what a plan reports to the status.
type outcome = rollout.Outcome

// stuckReason is why a pod that cannot be updated in place is not updated.
const stuckReason = "the update strategy is InPlaceOnly"

// planOutcome is what the status learns from a plan.
func planOutcome(s *scope, p plan) outcome {
	return rollout.StuckOutcome(p.stuck, s.Update.Name, stuckReason)
}

// computeStatus is the CloneSet status the scope shows, with the conditions the plan's outcome
// and a sync error set. It is pure.
func computeStatus(s *scope, now time.Time, out outcome, syncErr error) appsv1alpha1.CloneSetStatus {
	cs := s.cs
	replicas := int(ptr.Deref(cs.Spec.Replicas, 1))
	st := appsv1alpha1.CloneSetStatus{
		ObservedGeneration:      cs.Generation,
		UpdateRevision:          s.Update.Name,
		CurrentRevision:         s.Current.Name,
		CollisionCount:          ptr.To(s.CollisionCount),
		ExpectedUpdatedReplicas: int32(replicas - partitionCount(cs.Spec.UpdateStrategy.Partition, replicas)),
		LabelSelector:           rollout.SelectorString(cs.Spec.Selector),
	}
	var n rollout.Counts
	for _, pod := range s.pods {
		n.AddPod(pod, true, cs.Spec.MinReadySeconds, now, s.isUpdated(pod))
	}
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas = n.Replicas, n.Ready, n.Available
	st.UpdatedReplicas, st.UpdatedReadyReplicas, st.UpdatedAvailableReplicas = n.Updated, n.UpdatedReady, n.UpdatedAvailable
	if st.UpdatedReplicas == st.Replicas && int(st.Replicas) >= replicas {
		st.CurrentRevision = s.Update.Name
	}
	st.Conditions = conditions(cs.Status.Conditions, now, out, syncErr)
	return st
}

// conditions keeps the CloneSet's conditions, setting FailedScale or FailedUpdate while a sync
// fails for that reason or the plan says the update cannot go on, and dropping them once that is
// over.
func conditions(old []appsv1alpha1.CloneSetCondition, now time.Time, o outcome, syncErr error) []appsv1alpha1.CloneSetCondition {
	types := []appsv1alpha1.CloneSetConditionType{appsv1alpha1.CloneSetConditionFailedScale, appsv1alpha1.CloneSetConditionFailedUpdate}
	return rollout.Conditions(old, types, appsv1alpha1.CloneSetConditionFailedUpdate, o.Stuck, syncErr, now)
}

// writeStatus writes the computed status if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope, out outcome, syncErr error) (ctrl.Result, error) {
	st := computeStatus(s, r.Clock.Now(), out, syncErr)
	return kit.WriteStatus(ctx, r.Client, s.cs.DeepCopy(), func(cs *appsv1alpha1.CloneSet) { cs.Status = st })
}

// truncateHistory deletes the oldest revisions that no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) truncateHistory(ctx context.Context, s *scope) error {
	pods := append(append([]*corev1.Pod{}, s.pods...), s.terminating...)
	return r.TruncateHistory(ctx, s.History, s.cs.Spec.RevisionHistoryLimit, []string{s.Current.Name, s.Update.Name}, pods, s.revisionOf)
}
