package podowner

import (
	"context"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
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

// Setup registers a pod-owning kind's controller as kit.Setup does, after the pod index its
// reconciles list their pods from (ownedpods.Index).
func Setup(mgr ctrl.Manager, d setup.Deps, name string, r reconcile.Reconciler, watches func(*kit.Builder) *kit.Builder) error {
	if err := ownedpods.Index(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return kit.Setup(mgr, d, name, r, watches)
}

// Object is the prologue of a kind's reconcile over the Base: a gone object's expectations are
// forgotten, and pass runs for one found and not being deleted.
func Object[T client.Object](b *Base, kind string, pass func(context.Context, T) (ctrl.Result, error)) kit.Object[T] {
	return kit.Object[T]{Reader: b.Client, Kind: kind, Gone: kit.Forget(b.ScaleExp.Forget), Pass: pass}
}

// PodHandler is the kind's pod event handler h over the Base's expectations, with updates
// batched (ownedpods.UpdateBatch).
func (b *Base) PodHandler(h ownedpods.Handler) handler.TypedEventHandler[client.Object, reconcile.Request] {
	h.Scale, h.Update, h.UpdateBatch = b.ScaleExp, b.UpdateExp, ownedpods.UpdateBatch
	return h.EventHandler()
}

// TruncateHistory deletes the oldest revisions of history beyond limit (revisionHistoryLimit)
// that are neither kept nor the revision of one of pods, which revisionOf names.
func (b *Base) TruncateHistory(ctx context.Context, history []*appsv1.ControllerRevision, limit *int32, kept []string, pods []*corev1.Pod, revisionOf func(*corev1.Pod) string) error {
	inUse := append([]string{}, kept...)
	for _, p := range pods {
		inUse = append(inUse, revisionOf(p))
	}
	return b.History.TruncateUnused(ctx, history, limit, inUse...)
}

// Routes decides, once for each revision pods are at, how they reach revs' update revision
// under policy (inplaceupdate.DecideRoute), with the grace the strategy gives and the
// InPlaceUpdateEnvFromMetadata and InPlaceWorkloadVerticalScaling gates. A revision no longer in
// history is decided as nil.
func (b *Base) Routes(policy inplaceupdate.Policy, revs revision.Tracked, grace *appspub.InPlaceUpdateStrategy) inplaceupdate.Routes {
	opts := inplaceupdate.Options{
		EnvFromMetadata: b.Gates.Enabled(features.InPlaceUpdateEnvFromMetadata),
		VerticalScaling: b.Gates.Enabled(features.InPlaceWorkloadVerticalScaling),
	}.WithGrace(grace)
	return inplaceupdate.Routes{Decide: func(from string) (inplaceupdate.Decision, error) {
		return inplaceupdate.DecideRoute(policy, revision.Named(revs.History, from), revs.Update, opts)
	}}
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
