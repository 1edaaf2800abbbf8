package statefulset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
)

// preDownload creates the pull jobs of the update revision while the revisions differ, and
// deletes the StatefulSet's jobs once they agree. OnDelete and ReCreate never update in place,
// so they never pre-download.
func (r *Reconciler) preDownload(ctx context.Context, s *scope) error {
	sync := predownload.Syncer{Client: r.client, Recorder: r.recorder}
	if s.current.Name == s.update.Name {
		return sync.Cleanup(ctx, s.set)
	}
	if predownload.IsDecided(s.update) {
		return nil
	}
	set := s.set
	replicas := int(ptr.Deref(set.Spec.Replicas, 1))
	ru := rollingUpdate(set)
	route, err := r.decideRoute(s, ru, s.current.Name)
	if err != nil {
		return err
	}
	oldT, err := inplaceupdate.SpecTemplate(s.current)
	if err != nil {
		return err
	}
	newT, err := inplaceupdate.SpecTemplate(s.update)
	if err != nil {
		return err
	}
	updatedReady := int(set.Status.UpdatedReadyReplicas)
	if set.Status.UpdateRevision != s.update.Name {
		updatedReady = 0
	}
	w := predownload.Workload{
		Owner:          set,
		GVK:            controllerKind,
		Selector:       set.Spec.Selector,
		Template:       &set.Spec.Template,
		Replicas:       replicas,
		Partition:      max(0, int(ptr.Deref(ru.Partition, 0))),
		MaxUnavailable: scaled(ru.MaxUnavailable, replicas, false),
		Recreate: set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType ||
			ru.PodUpdatePolicy == appsv1beta1.RecreatePodUpdateStrategyType,
		CanInPlace:           route.Route == inplaceupdate.RouteInPlace,
		UpdatedReadyReplicas: updatedReady,
	}
	return sync.Sync(ctx, w, s.update, oldT, newT)
}
