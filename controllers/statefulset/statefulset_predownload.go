package statefulset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// preDownload creates the pull jobs of the update revision while the revisions differ, and
// deletes the StatefulSet's jobs once they agree (predownload.Syncer.SyncRollout). OnDelete and
// ReCreate never update in place, so they never pre-download.
func (r *Reconciler) preDownload(ctx context.Context, s *scope) error {
	set := s.set
	ru := rollingUpdate(set)
	return predownload.Syncer{Client: r.Client, Recorder: r.Recorder}.SyncRollout(ctx, predownload.Rollout{
		Owner: set, Current: s.Current, Update: s.Update,
		StatusUpdateRevision: set.Status.UpdateRevision, StatusUpdatedReady: set.Status.UpdatedReadyReplicas,
		Decide: r.routes(s, ru).Decide,
	}, func() predownload.Workload {
		replicas := int(ptr.Deref(set.Spec.Replicas, 1))
		return predownload.Workload{
			Owner: set, GVK: controllerKind, Selector: set.Spec.Selector, Template: &set.Spec.Template,
			Replicas:       replicas,
			Partition:      max(0, int(ptr.Deref(ru.Partition, 0))),
			MaxUnavailable: rollout.Scaled(ru.MaxUnavailable, intstr.FromInt32(0), replicas, false),
			Recreate: set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType ||
				ru.PodUpdatePolicy == appsv1beta1.RecreatePodUpdateStrategyType,
		}
	})
}
