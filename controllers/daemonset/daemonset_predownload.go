package daemonset

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// preDownload pulls the update revision's images ahead of the update while the last status
// shows a rollout under way (not every desired node updated, or another revision), and deletes
// the DaemonSet's jobs once it shows none. As in 1.8 it pre-downloads for any update, in place
// or not, unless every node updates in one batch (predownload.Workload.AnyUpdate), over the
// desired nodes of the last status; the images are those some older revision lacks.
func (r *Reconciler) preDownload(ctx context.Context, s *scope) error {
	ds := s.ds
	syncer := predownload.Syncer{Client: r.Client, Recorder: r.Recorder}
	st := ds.Status
	if st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.DaemonSetHash == s.hash() {
		return syncer.Cleanup(ctx, ds)
	}
	if predownload.IsDecided(s.Update) {
		return nil
	}
	newT, err := inplaceupdate.SpecTemplate(s.Update)
	if err != nil {
		return err
	}
	var olds []*corev1.PodTemplateSpec
	for _, rev := range s.History {
		if rev.Name == s.Update.Name {
			continue
		}
		t, err := inplaceupdate.SpecTemplate(rev)
		if err != nil {
			return err
		}
		olds = append(olds, t)
	}
	desired := int(st.DesiredNumberScheduled)
	w := predownload.Workload{
		Owner: ds, GVK: controllerKind, Selector: ds.Spec.Selector, Template: &ds.Spec.Template,
		Replicas: desired, MaxUnavailable: 1, AnyUpdate: true,
	}
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		w.Partition = int(ptr.Deref(ru.Partition, 0))
		w.MaxUnavailable = rollout.Scaled(ru.MaxUnavailable, intstr.FromInt32(1), desired, false)
	}
	return syncer.Sync(ctx, w, s.Update, predownload.ChangedSince(newT, olds...))
}
