package podowner

import (
	"context"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
	"github.com/kruise-addon/kruise-addon/controllers/internal/pubcheck"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// Base is what a pod-owning workload's Reconciler reads and writes with.
type Base struct {
	Client client.Client
	// Live reads past the cache, where a write must see the stored object.
	Live     client.Reader
	Recorder record.EventRecorder
	Clock    clock.Clock
	Gates    featuregate.FeatureGate

	// ScaleExp awaits the cache's sight of the pods the controller created and deleted, and
	// UpdateExp that of the pods it updated.
	ScaleExp  *expectations.Scale
	UpdateExp *expectations.ResourceVersion
	History   revision.History
	Updater   *inplaceupdate.Updater
	Lifecycle lifecycle.Mover
	// Budget checks pod updates against PodUnavailableBudgets; nil while the kind does not
	// (CheckBudgets).
	Budget *pubcheck.Checker
}

// New is the Base of a controller that reads through c, past the cache through live, and
// records events with rec. Its in-place updater writes the controller-revision-hash label,
// through revisionValue when that is set (a revision's name otherwise).
func New(c client.Client, live client.Reader, rec record.EventRecorder, d setup.Deps, revisionValue func(string) string) Base {
	return Base{
		Client:    c,
		Live:      live,
		Recorder:  rec,
		Clock:     d.Clock,
		Gates:     d.Gates,
		ScaleExp:  expectations.NewScale(d.Clock),
		UpdateExp: expectations.NewResourceVersion(d.Clock),
		History:   revision.History{Client: c, Live: live},
		Lifecycle: lifecycle.Mover{Client: c, Reader: live, Clock: d.Clock},
		Updater:   &inplaceupdate.Updater{Client: c, Reader: live, Clock: d.Clock, RevisionLabel: appsv1.ControllerRevisionHashLabelKey, RevisionValue: revisionValue},
	}
}

// CheckBudgets makes the Base check pod updates against PodUnavailableBudgets while the
// PodUnavailableBudgetUpdateGate is on.
func (b *Base) CheckBudgets(d setup.Deps) {
	if d.Gates.Enabled(features.PodUnavailableBudgetUpdateGate) {
		b.Budget = pubcheck.NewChecker(b.Client, b.Live, d.Clock)
	}
}

// Writer is the podwrite.Writer of owner's pods over the Base, with the kind's event messages;
// held is set when a budget holds a pod's update.
func (b *Base) Writer(owner client.Object, held *atomic.Bool, m podwrite.Messages) podwrite.Writer {
	w := podwrite.Writer{
		Client: b.Client, Recorder: b.Recorder, Owner: owner,
		Scale: b.ScaleExp, Updates: b.UpdateExp, Mover: b.Lifecycle, Updater: b.Updater,
		BudgetHeld: held, Messages: m,
	}
	if b.Budget != nil {
		w.Budget = b.Budget
	}
	return w
}

// Run runs pass for obj over the Base's expectations. preDownload, when set, runs as the pass's
// image pre-download while the KruiseDaemon and PreDownloadImageForInPlaceUpdate gates are on.
func Run[S, O any](ctx context.Context, b *Base, obj client.Object, pass kit.PodOwnerPass[S, O], preDownload func(context.Context, S) error) (ctrl.Result, error) {
	pass.Scale, pass.Updates = b.ScaleExp, b.UpdateExp
	if preDownload != nil && predownload.Enabled(b.Gates) {
		pass.PreDownload = preDownload
	}
	return pass.Run(ctx, kit.Key(obj))
}
