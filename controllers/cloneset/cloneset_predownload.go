package cloneset

import (
	"context"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
)

// preDownload creates the pull jobs of the update revision while the revisions differ, and
// deletes the CloneSet's jobs once they agree. The in-place decision is the one the plan makes
// for pods of the current revision.
func (r *Reconciler) preDownload(ctx context.Context, s *scope) error {
	sync := predownload.Syncer{Client: r.client, Recorder: r.recorder}
	if s.current.Name == s.update.Name {
		return sync.Cleanup(ctx, s.cs)
	}
	if predownload.IsDecided(s.update) {
		return nil
	}
	cs := s.cs
	replicas := int(ptr.Deref(cs.Spec.Replicas, 1))
	us := cs.Spec.UpdateStrategy
	route, err := r.decideRoute(s, s.current.Name)
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
	updatedReady := int(cs.Status.UpdatedReadyReplicas)
	if cs.Status.UpdateRevision != s.update.Name {
		updatedReady = 0
	}
	w := predownload.Workload{
		Owner:                cs,
		GVK:                  controllerKind,
		Selector:             cs.Spec.Selector,
		Template:             &cs.Spec.Template,
		Replicas:             replicas,
		Partition:            partitionCount(us.Partition, replicas),
		MaxUnavailable:       scaled(us.MaxUnavailable, intstr.FromString(appsv1alpha1.DefaultCloneSetMaxUnavailable), replicas, false),
		Recreate:             us.Type == appsv1alpha1.RecreateCloneSetUpdateStrategyType,
		CanInPlace:           route.Route == inplaceupdate.RouteInPlace,
		UpdatedReadyReplicas: updatedReady,
	}
	return sync.Sync(ctx, w, s.update, oldT, newT)
}
