package uniteddeployment

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
)

// outcome is what applying a plan reports to the status.
type outcome struct {
	// provisioned says subset workloads were created or deleted; provisionErr and updateErr
	// say why creating, deleting or updating them failed.
	provisioned             bool
	provisionErr, updateErr error
}

// computeStatus is the UnitedDeployment status the scope and plan show, with the conditions the
// outcome sets. It is pure.
func computeStatus(s *scope, p plan, out outcome, now time.Time) appsv1alpha1.UnitedDeploymentStatus {
	ud := s.ud
	st := *ud.Status.DeepCopy()
	st.ObservedGeneration = ud.Generation
	st.CollisionCount = ptr.To(s.CollisionCount)
	if sel, err := metav1.LabelSelectorAsSelector(ud.Spec.Selector); err == nil {
		st.LabelSelector = sel.String()
	}
	st.SubsetStatuses = p.subsetStatuses

	st.Replicas, st.ReadyReplicas, st.UpdatedReplicas, st.UpdatedReadyReplicas = 0, 0, 0, 0
	seen := map[string]bool{}
	for _, w := range s.workloads {
		if seen[w.subset] {
			continue
		}
		seen[w.subset] = true
		st.Replicas += w.state.replicas
		st.ReadyReplicas += w.state.readyReplicas
		for _, pod := range s.pods[w.subset] {
			if pod.Labels[appsv1alpha1.ControllerRevisionHashLabelKey] != s.Update.Name || !active(pod) {
				continue
			}
			st.UpdatedReplicas++
			if podsort.IsReady(pod) {
				st.UpdatedReadyReplicas++
			}
		}
	}

	if p.allocErr == nil {
		st.SubsetReplicas = p.replicas
		st.UpdateStatus = &appsv1alpha1.UpdateStatus{UpdatedRevision: s.Update.Name, CurrentPartitions: p.partitions}
	}
	if st.CurrentRevision == "" {
		st.CurrentRevision = s.Current.Name
	}
	if st.CurrentRevision != s.Update.Name && st.UpdatedReadyReplicas >= st.Replicas && p.allocErr == nil {
		st.CurrentRevision = s.Update.Name
	}

	switch {
	case out.provisionErr != nil:
		setCondition(&st, appsv1alpha1.SubsetProvisioned, corev1.ConditionFalse, "Error", out.provisionErr.Error(), now)
	case out.provisioned:
		setCondition(&st, appsv1alpha1.SubsetProvisioned, corev1.ConditionTrue, "", "", now)
	}
	switch {
	case p.allocErr != nil:
		setCondition(&st, appsv1alpha1.SubsetUpdated, corev1.ConditionFalse, "Error", p.allocErr.Error(), now)
	case out.updateErr != nil:
		setCondition(&st, appsv1alpha1.SubsetUpdated, corev1.ConditionFalse, "Error", out.updateErr.Error(), now)
	default:
		setCondition(&st, appsv1alpha1.SubsetUpdated, corev1.ConditionTrue, "", "", now)
	}
	// No subset kind reports a failure of its own, so SubsetFailure is never set, as in 1.8.
	st.Conditions = kit.RemoveCondition(st.Conditions, conditionType, appsv1alpha1.SubsetFailure)
	return st
}

// active says a pod counts: neither finished nor terminating.
func active(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// setCondition sets a condition, keeping its transition time when the status is unchanged and
// leaving it alone when status and reason are.
func setCondition(st *appsv1alpha1.UnitedDeploymentStatus, t appsv1alpha1.UnitedDeploymentConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) {
	c := appsv1alpha1.UnitedDeploymentCondition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(now)}
	i := kit.FindCondition(st.Conditions, conditionType, t)
	if i < 0 {
		st.Conditions = append(st.Conditions, c)
		return
	}
	old := &st.Conditions[i]
	if old.Status == status && old.Reason == reason {
		return
	}
	if old.Status == status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
}

func conditionType(c *appsv1alpha1.UnitedDeploymentCondition) appsv1alpha1.UnitedDeploymentConditionType {
	return c.Type
}
