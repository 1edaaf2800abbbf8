package cloneset

import (
	"context"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// preDownload creates the pull jobs of the update revision while the revisions differ, and
// deletes the CloneSet's jobs once they agree (predownload.Syncer.SyncRollout). The in-place
// decision is the one the plan makes for pods of the current revision.
func (r *Reconciler) preDownload(ctx context.Context, s *scope) error {
	cs := s.cs
	return predownload.Syncer{Client: r.Client, Recorder: r.Recorder}.SyncRollout(ctx, predownload.Rollout{
		Owner: cs, Current: s.Current, Update: s.Update,
		StatusUpdateRevision: cs.Status.UpdateRevision, StatusUpdatedReady: cs.Status.UpdatedReadyReplicas,
		Decide: r.routes(s).Decide,
	}, func() predownload.Workload {
		replicas := int(ptr.Deref(cs.Spec.Replicas, 1))
		us := cs.Spec.UpdateStrategy
		return predownload.Workload{
			Owner: cs, GVK: controllerKind, Selector: cs.Spec.Selector, Template: &cs.Spec.Template,
			Replicas:       replicas,
			Partition:      partitionCount(us.Partition, replicas),
			MaxUnavailable: rollout.Scaled(us.MaxUnavailable, intstr.FromString(appsv1alpha1.DefaultCloneSetMaxUnavailable), replicas, false),
			Recreate:       us.Type == appsv1alpha1.RecreateCloneSetUpdateStrategyType,
		}
	})
}
