package placement

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
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

	mu     sync.Mutex
	queues map[types.UID]*changeQueue
	latest map[types.UID]*appsv1alpha1.WorkloadSpread
}

// NewRecorder returns a Recorder.
func NewRecorder(c client.Client, live client.Reader, clk clock.PassiveClock) *Recorder {
	return &Recorder{Client: c, Live: live, Clock: clk,
		queues: map[types.UID]*changeQueue{}, latest: map[types.UID]*appsv1alpha1.WorkloadSpread{}}
}

// read returns the newest copy of ws this process knows: the one it last wrote or the cache's,
// whichever has the higher resourceVersion; from the apiserver when live is set. nil when the
// WorkloadSpread is gone.
func (r *Recorder) read(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, live bool) (*appsv1alpha1.WorkloadSpread, error) {
	key := client.ObjectKeyFromObject(ws)
	cur := &appsv1alpha1.WorkloadSpread{}
	reader := client.Reader(r.Client)
	if live {
		reader = r.Live
	}
	if err := reader.Get(ctx, key, cur); err != nil {
		if apierrors.IsNotFound(err) {
			r.mu.Lock()
			delete(r.latest, ws.UID) // gone: keep no copy of it
			r.mu.Unlock()
			return nil, nil
		}
		return nil, fmt.Errorf("get workloadspread %s: %w", key, err)
	}
	if live {
		return cur, nil
	}
	r.mu.Lock()
	mine := r.latest[ws.UID]
	r.mu.Unlock()
	if mine != nil && newer(mine.ResourceVersion, cur.ResourceVersion) {
		return mine.DeepCopy(), nil
	}
	return cur, nil
}

// newer compares resourceVersions as the integers the apiserver makes them; an opaque one is
// never newer.
func newer(a, b string) bool {
	ai, errA := strconv.ParseUint(a, 10, 64)
	bi, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && ai > bi
}

// update applies change to the newest subset statuses of ws and writes them when change says
// they changed, retrying on conflict with a fresh read. change gets the statuses in spec order;
// ws is nil when the WorkloadSpread is gone, and then nothing is written.
//
// Admissions of one WorkloadSpread commit as a group: while one status write is in flight, the
// changes that arrive queue up, and the next writer applies all of them, each to the statuses
// the ones before it left, in one write. A burst of pod creations then costs a few writes, not
// one per pod waiting behind the one before. Each change still sees, and records into, the
// statuses as they are after every earlier change, so the subsets filled are the same.
func (r *Recorder) update(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, change changeFunc) error {
	me := &pendingChange{change: change, done: make(chan error, 1)}
	q := r.queue(ws.UID)
	q.mu.Lock()
	q.waiting = append(q.waiting, me)
	q.mu.Unlock()

	q.write.Lock()
	defer q.write.Unlock()
	select {
	case err := <-me.done: // a writer before this one took the change into its write
		return err
	default:
	}
	q.mu.Lock()
	batch := q.waiting
	q.waiting = nil
	q.mu.Unlock()
	errs := r.write(ctx, ws, batch)
	for i, p := range batch {
		p.done <- errs[i]
	}
	return <-me.done
}

// changeFunc is one admission's change to the subset statuses; see update.
type changeFunc func(cur *appsv1alpha1.WorkloadSpread, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error)

// pendingChange is a change waiting for a write, and where its outcome goes.
type pendingChange struct {
	change changeFunc
	done   chan error
}

// changeQueue serialises the status writes of one WorkloadSpread in this process (write) and
// holds the changes that wait for the next one.
type changeQueue struct {
	write   sync.Mutex
	mu      sync.Mutex
	waiting []*pendingChange
}

func (r *Recorder) queue(uid types.UID) *changeQueue {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.queues[uid]
	if !ok {
		q = &changeQueue{}
		r.queues[uid] = q
	}
	return q
}

// write applies the batch's changes in order to the newest statuses of ws and writes them once,
// retrying on conflict with a fresh read. It returns each change's outcome: its own error, or
// the write's error when it changed something.
func (r *Recorder) write(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, batch []*pendingChange) []error {
	errs := make([]error, len(batch))
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	// Percentages resolve against the target as it is now, whatever replicas the recorded
	// status was computed against; a target the cache has not seen yet is read live.
	var replicas int32
	if spread.HasPercent(ws) {
		var err error
		if replicas, _, err = (Finder{Client: r.Client, Live: r.Live, Config: r.Config}).TargetReplicas(ctx, ws); err != nil {
			return fail(err)
		}
	}
	live, writeFailed := false, false
	var changed []bool
	err := retry.OnError(conflictBackoff, apierrors.IsConflict, func() error {
		clear(errs)
		changed, writeFailed = make([]bool, len(batch)), false
		cur, err := r.read(ctx, ws, live)
		if err != nil || cur == nil {
			return err
		}
		statuses, err := spread.Statuses(cur, replicas)
		if err != nil {
			return err
		}
		anyChanged := false
		for i, p := range batch {
			before := deepCopyStatuses(statuses)
			changed[i], errs[i] = p.change(cur, statuses)
			if errs[i] != nil || !changed[i] {
				copy(statuses, before) // what a refused or unchanged admission touched is not written
				changed[i] = false
				continue
			}
			anyChanged = true
		}
		if !anyChanged {
			return nil
		}
		cur.Status.SubsetStatuses = statuses
		if err := r.Client.Status().Update(ctx, cur); err != nil {
			live, writeFailed = true, true
			return err
		}
		r.mu.Lock()
		r.latest[cur.UID] = cur.DeepCopy()
		r.mu.Unlock()
		return nil
	})
	if err != nil {
		// A failed read fails every change; a failed write only those it carried.
		for i := range batch {
			if errs[i] == nil && (!writeFailed || changed[i]) {
				errs[i] = err
			}
		}
	}
	return errs
}

func deepCopyStatuses(in []appsv1alpha1.WorkloadSpreadSubsetStatus) []appsv1alpha1.WorkloadSpreadSubsetStatus {
	out := make([]appsv1alpha1.WorkloadSpreadSubsetStatus, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// now is the time written into creatingPods and deletingPods.
func (r *Recorder) now() metav1.Time { return metav1.NewTime(r.Clock.Now()) }
