package kit

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Tools is what most reconcilers take from the manager, embedded in their Reconciler: the
// cached client, the event recorder and the clock.
type Tools struct {
	// Client reads through the manager's cache and writes to the apiserver.
	Client client.Client
	// Recorder records the controller's events under the source "<name>-controller".
	Recorder record.EventRecorder
	// Clock is the manager's clock (setup.Deps.Clock); tests pass a fake one.
	Clock clock.Clock
}

// ToolsFor is the Tools of the controller called name (its --<name>-workers flag).
func ToolsFor(mgr ctrl.Manager, d setup.Deps, name string) Tools {
	return Tools{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor(name + "-controller"), Clock: d.Clock}
}

// DeleteAfterTTL deletes obj, of kind, finished at finishedAt, once ttlSeconds have passed since,
// and until then asks to run again when they will have; a nil ttlSeconds keeps obj.
func (t Tools) DeleteAfterTTL(ctx context.Context, kind string, obj client.Object, ttlSeconds *int32, finishedAt time.Time, opts ...client.DeleteOption) (ctrl.Result, error) {
	if ttlSeconds == nil {
		return ctrl.Result{}, nil
	}
	if left := time.Duration(*ttlSeconds)*time.Second - t.Clock.Since(finishedAt); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := t.Client.Delete(ctx, obj, opts...); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("delete after ttlSecondsAfterFinished: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info(fmt.Sprintf("Deleted %s after ttlSecondsAfterFinished", kind))
	return ctrl.Result{}, nil
}
