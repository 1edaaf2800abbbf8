package kit

import (
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
