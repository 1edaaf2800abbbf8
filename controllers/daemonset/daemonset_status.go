package daemonset

import (
	"context"
	"slices"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// computeStatus is the DaemonSet status the scope shows, counted by node as the workload API
// defines it: a node that should run the pod counts in desiredNumberScheduled, and, by its
// oldest live pod, in currentNumberScheduled, numberReady, numberAvailable and
// updatedNumberScheduled; a node that runs the pod but should not counts in numberMisscheduled.
// It is pure.
func computeStatus(s *scope, now time.Time) appsv1alpha1.DaemonSetStatus {
	ds := s.ds
	st := appsv1alpha1.DaemonSetStatus{
		ObservedGeneration: ds.Generation,
		CollisionCount:     ptr.To(s.CollisionCount),
		DaemonSetHash:      s.hash(),
		Conditions:         ds.Status.Conditions,
	}
	seen := map[string]bool{}
	for _, node := range s.nodes {
		seen[node.Name] = true
		pods := s.pods[node.Name]
		if !nodePlacement(node, &ds.Spec.Template).shouldRun {
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		pod := slices.MinFunc(pods, olderFirst)
		if ready, available := rollout.Readiness(pod, true, ds.Spec.MinReadySeconds, now); ready {
			st.NumberReady++
			if available {
				st.NumberAvailable++
			}
		}
		if s.isUpdated(pod) {
			st.UpdatedNumberScheduled++
		}
	}
	for name, pods := range s.pods {
		if !seen[name] && len(pods) > 0 {
			st.NumberMisscheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	return st
}

// writeStatus writes the computed status if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) (ctrl.Result, error) {
	st := computeStatus(s, r.Clock.Now())
	return kit.WriteStatus(ctx, r.Client, s.ds.DeepCopy(), func(ds *appsv1alpha1.DaemonSet) { ds.Status = st })
}

// truncateHistory deletes the oldest revisions that no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) truncateHistory(ctx context.Context, s *scope) error {
	inUse := []string{s.Update.Name}
	for _, p := range s.allPods() {
		if rev := s.revisionOf(p); rev != nil {
			inUse = append(inUse, rev.Name)
		}
	}
	return r.History.TruncateUnused(ctx, s.History, s.ds.Spec.RevisionHistoryLimit, inUse...)
}
