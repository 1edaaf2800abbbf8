package statefulset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
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
	return outcome{failedUpdate: fmt.Sprintf("pods %s cannot be updated in place to revision %s, and the podUpdatePolicy is InPlaceOnly", strings.Join(names, ", "), s.update.Name)}
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
		UpdateRevision:     s.update.Name,
		CurrentRevision:    s.current.Name,
		CollisionCount:     ptr.To(s.collisionCount),
	}
	if sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err == nil {
		st.LabelSelector = sel.String()
	}
	minReady := minReadySeconds(set)
	for _, pod := range s.pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		ready := pod.Status.Phase == corev1.PodRunning && podsort.IsReady(pod) && inplaceupdate.NotUnready(pod)
		available := ready && podsort.IsAvailable(pod, minReady, now)
		updated := s.isUpdated(pod)
		count := func(field *int32, ok bool) {
			if ok {
				*field++
			}
		}
		count(&st.Replicas, true)
		count(&st.ReadyReplicas, ready)
		count(&st.AvailableReplicas, available)
		count(&st.CurrentReplicas, revisionOf(pod) == s.current.Name)
		count(&st.UpdatedReplicas, updated)
		count(&st.UpdatedReadyReplicas, updated && ready)
		count(&st.UpdatedAvailableReplicas, updated && available)
	}
	if st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas && int(st.Replicas) == s.ordinals.Len() {
		st.CurrentRevision = s.update.Name
		st.CurrentReplicas = st.UpdatedReplicas
	}
	st.Conditions = conditions(set.Status.Conditions, now, out, syncErr)
	return st
}

// conditions keeps the StatefulSet's conditions, setting FailedCreatePod or FailedUpdatePod while
// a sync fails for that reason or the plan says the update cannot go on, and dropping them once
// that is over.
func conditions(old []appsv1.StatefulSetCondition, now time.Time, o outcome, syncErr error) []appsv1.StatefulSetCondition {
	failed := map[appsv1.StatefulSetConditionType]string{}
	if o.failedUpdate != "" {
		failed[appsv1beta1.FailedUpdatePod] = o.failedUpdate
	}
	var ce createError
	var ue updateError
	switch {
	case errors.As(syncErr, &ce):
		failed[appsv1beta1.FailedCreatePod] = ce.Error()
	case errors.As(syncErr, &ue):
		failed[appsv1beta1.FailedUpdatePod] = ue.Error()
	}
	var out []appsv1.StatefulSetCondition
	for _, c := range old {
		if c.Type != appsv1beta1.FailedCreatePod && c.Type != appsv1beta1.FailedUpdatePod {
			out = append(out, c)
			continue
		}
		if msg, ok := failed[c.Type]; ok {
			c.Message = msg
			out = append(out, c)
			delete(failed, c.Type)
		}
	}
	for _, t := range []appsv1.StatefulSetConditionType{appsv1beta1.FailedCreatePod, appsv1beta1.FailedUpdatePod} {
		if msg, ok := failed[t]; ok {
			out = append(out, appsv1.StatefulSetCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now), Reason: string(t), Message: msg})
		}
	}
	return out
}

// writeStatus writes the computed status if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope, out outcome, syncErr error) (ctrl.Result, error) {
	st := computeStatus(s, r.clock.Now(), out, syncErr)
	return kit.WriteStatus(ctx, r.client, s.set.DeepCopy(), func(set *appsv1beta1.StatefulSet) { set.Status = st })
}

// truncateHistory deletes the oldest revisions that no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) truncateHistory(ctx context.Context, s *scope) error {
	limit := int(ptr.Deref(s.set.Spec.RevisionHistoryLimit, defaultRevisionHistoryLimit))
	inUse := map[string]bool{s.current.Name: true, s.update.Name: true}
	for _, p := range s.pods {
		inUse[revisionOf(p)] = true
	}
	return r.history.Truncate(ctx, s.history, inUse, limit)
}
