package statefulset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// outcome is what a plan reports to the status.
type outcome = rollout.Outcome

// stuckReason is why a pod that cannot be updated in place is not updated.
const stuckReason = "the podUpdatePolicy is InPlaceOnly"

// planOutcome is what the status learns from a plan.
func planOutcome(s *scope, p plan) outcome {
	return rollout.StuckOutcome(p.stuck, s.Update.Name, stuckReason)
}

// computeStatus is the StatefulSet status the scope shows, with the conditions the plan's
// outcome and a sync error set. It is pure.
//
// The counts are of the pods that are not terminating. currentRevision moves to the update
// revision once every replica is there and ready, which is when currentReplicas becomes
// updatedReplicas; until then currentReplicas counts pods at the current revision.
func computeStatus(s *scope, now time.Time, out outcome, syncErr error) appsv1beta1.StatefulSetStatus {
	set := s.set
	st := appsv1beta1.StatefulSetStatus{
		ObservedGeneration: set.Generation,
		UpdateRevision:     s.Update.Name,
		CurrentRevision:    s.Current.Name,
		CollisionCount:     ptr.To(s.CollisionCount),
		LabelSelector:      rollout.SelectorString(set.Spec.Selector),
	}
	minReady := minReadySeconds(set)
	var n rollout.Counts
	for _, pod := range s.pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		n.AddPod(pod, pod.Status.Phase == corev1.PodRunning, minReady, now, s.isUpdated(pod))
		if revisionOf(pod) == s.Current.Name {
			st.CurrentReplicas++
		}
	}
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas = n.Replicas, n.Ready, n.Available
	st.UpdatedReplicas, st.UpdatedReadyReplicas, st.UpdatedAvailableReplicas = n.Updated, n.UpdatedReady, n.UpdatedAvailable
	if st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas && int(st.Replicas) == s.ordinals.Len() {
		st.CurrentRevision = s.Update.Name
		st.CurrentReplicas = st.UpdatedReplicas
	}
	st.VolumeClaims = volumeClaimStatus(s)
	st.Conditions = conditions(set.Status.Conditions, now, out, syncErr)
	return st
}

// conditions keeps the StatefulSet's conditions, setting FailedCreatePod or FailedUpdatePod while
// a sync fails for that reason or the plan says the update cannot go on, and dropping them once
// that is over.
func conditions(old []appsv1.StatefulSetCondition, now time.Time, o outcome, syncErr error) []appsv1.StatefulSetCondition {
	types := []appsv1.StatefulSetConditionType{appsv1beta1.FailedCreatePod, appsv1beta1.FailedUpdatePod}
	return rollout.Conditions(old, types, appsv1beta1.FailedUpdatePod, o.Stuck, syncErr, now)
}

// writeStatus writes the computed status if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope, out outcome, syncErr error) (ctrl.Result, error) {
	st := computeStatus(s, r.Clock.Now(), out, syncErr)
	return kit.WriteStatus(ctx, r.Client, s.set.DeepCopy(), func(set *appsv1beta1.StatefulSet) { set.Status = st })
}

// truncateHistory deletes the oldest revisions that no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) truncateHistory(ctx context.Context, s *scope) error {
	return r.TruncateHistory(ctx, s.History, s.set.Spec.RevisionHistoryLimit, []string{s.Current.Name, s.Update.Name}, s.pods, revisionOf)
}
