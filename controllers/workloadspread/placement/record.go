package placement

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/groupcommit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
)

// conflictBackoff bounds the retries of one status write. Writers in this process are
// serialised per WorkloadSpread, so conflicts come only from the controller and other webhook
// replicas; the bound is generous so a burst of creations across replicas still lands.
var conflictBackoff = wait.Backoff{Steps: 12, Duration: 2 * time.Millisecond, Factor: 2, Jitter: 0.2, Cap: time.Second}

// Recorder writes pods in flight into WorkloadSpread subset statuses.
type Recorder struct {
	// Client reads from the cache and writes the status.
	Client client.Client
	// Live reads from the apiserver: a WorkloadSpread after a conflict showed the cache
	// behind, a target the cache does not have yet.
	Live  client.Reader
	Clock clock.PassiveClock
	// Config holds the custom workloads a WorkloadSpread may target.
	Config workloadref.Config

	writer *groupcommit.Writer[appsv1alpha1.WorkloadSpread, *appsv1alpha1.WorkloadSpread]
}

// NewRecorder returns a Recorder.
func NewRecorder(c client.Client, live client.Reader, clk clock.PassiveClock) *Recorder {
	r := &Recorder{Client: c, Live: live, Clock: clk}
	r.writer = groupcommit.New(c, live, conflictBackoff, groupcommit.WithPrepare(r.resolve))
	return r
}

// read returns the newest copy of ws this process knows; nil when the WorkloadSpread is gone.
func (r *Recorder) read(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (*appsv1alpha1.WorkloadSpread, error) {
	return r.writer.Read(ctx, ws)
}

// resolve puts into cur's status its subset statuses in spec order, percentages resolved
// against the target as it is now, whatever replicas the recorded status was computed
// against; a target the cache has not seen yet is read live.
func (r *Recorder) resolve(ctx context.Context, cur *appsv1alpha1.WorkloadSpread) error {
	var replicas int32
	if spread.HasPercent(cur) {
		var err error
		if replicas, _, err = (Finder{Client: r.Client, Live: r.Live, Config: r.Config}).TargetReplicas(ctx, cur); err != nil {
			return err
		}
	}
	statuses, err := spread.Statuses(cur, replicas)
	if err != nil {
		return err
	}
	cur.Status.SubsetStatuses = statuses
	return nil
}

// update applies change to the newest subset statuses of ws and writes them when change says
// they changed, retrying on conflict with a fresh read. change gets the statuses in spec order;
// when the WorkloadSpread is gone nothing is applied nor written.
//
// Admissions of one WorkloadSpread commit as a group (controllers/internal/groupcommit): while
// one status write is in flight, the changes that arrive queue up, and the next writer applies
// all of them, each to the statuses the ones before it left, in one write. A burst of pod
// creations then costs a few writes, not one per pod waiting behind the one before. Each change
// still sees, and records into, the statuses as they are after every earlier change, so the
// subsets filled are the same.
func (r *Recorder) update(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, change changeFunc) error {
	return r.writer.Update(ctx, ws, func(cur *appsv1alpha1.WorkloadSpread) (bool, error) {
		return change(cur, cur.Status.SubsetStatuses)
	})
}

// changeFunc is one admission's change to the subset statuses; see update.
type changeFunc func(cur *appsv1alpha1.WorkloadSpread, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error)

// now is the time written into creatingPods and deletingPods.
func (r *Recorder) now() metav1.Time { return metav1.NewTime(r.Clock.Now()) }
