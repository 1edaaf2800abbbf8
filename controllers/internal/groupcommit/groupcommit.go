package groupcommit

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
)

// Object is an API object type T through its pointer, as the client reads and writes it.
type Object[T any] interface {
	*T
	client.Object
}

// Change is one caller's change to the newest copy of the object: it changes cur in place and
// reports whether it changed anything that must be written. Its error is its caller's alone.
// A change that errs or changes nothing is rolled back before the next change sees cur.
type Change[P any] func(cur P) (changed bool, err error)

// Writer commits the status changes of its callers in groups, one queue per object; see the
// package doc. Its zero value is not usable: build it with New.
type Writer[T any, P Object[T]] struct {
	client  client.Client
	live    client.Reader
	backoff wait.Backoff
	prepare func(ctx context.Context, cur P) error

	mu     sync.Mutex
	queues map[types.UID]*queue[P]
	// latest holds the copy this process last wrote of each object until a read finds the
	// cache caught up with it. A copy whose object is never read again (deleted meanwhile) is
	// dropped once it is older than keepLatest and more than sweepAbove copies are held: the
	// copy only spares a conflict, the write's resourceVersion keeps it correct without it.
	latest map[types.UID]written[P]
	now    func() time.Time
}

// written is a copy this process wrote, and when.
type written[P any] struct {
	obj P
	at  time.Time
}

const (
	// keepLatest is how long a written copy waits for the cache at most.
	keepLatest = time.Minute
	// sweepAbove is how many written copies are held before old ones are looked for.
	sweepAbove = 64
)

// Option configures a Writer.
type Option[T any, P Object[T]] func(*Writer[T, P])

// WithPrepare has every fresh copy of the object pass through prepare before a group's changes
// see it (say, to resolve what the status is computed against). Its error fails the group.
func WithPrepare[T any, P Object[T]](prepare func(ctx context.Context, cur P) error) Option[T, P] {
	return func(w *Writer[T, P]) { w.prepare = prepare }
}

// New returns a Writer that reads from c's cache, writes the status through c, reads from live
// after a conflict, and gives up a group after backoff's conflicts.
func New[T any, P Object[T]](c client.Client, live client.Reader, backoff wait.Backoff, opts ...Option[T, P]) *Writer[T, P] {
	w := &Writer[T, P]{client: c, live: live, backoff: backoff, queues: map[types.UID]*queue[P]{}, latest: map[types.UID]written[P]{}, now: time.Now}
	for _, o := range opts {
		o(w)
	}
	return w
}

// pending is a change waiting for a write, and where its outcome goes.
type pending[P any] struct {
	change Change[P]
	done   chan error
}

// queue serialises the status writes of one object in this process (write) and holds the
// changes that wait for the next one. It lives while a caller uses it: users counts them, under
// Writer.mu, and the last one out removes it.
type queue[P any] struct {
	write   sync.Mutex
	mu      sync.Mutex
	waiting []*pending[P]
	users   int
}

// Update applies change to the newest copy of obj and writes the status when change says it
// changed, in one write with the changes of the other callers that queued meanwhile. It
// returns change's own error, or the write's when change was written. When the object is
// gone, change is not applied and Update returns nil.
func (w *Writer[T, P]) Update(ctx context.Context, obj P, change Change[P]) error {
	me := &pending[P]{change: change, done: make(chan error, 1)}
	q := w.acquire(obj.GetUID())
	defer w.release(obj.GetUID(), q)
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
	errs := w.write(ctx, obj, batch)
	for i, p := range batch {
		p.done <- errs[i]
	}
	return <-me.done
}

// Waiting is how many changes to the object with uid wait for its next write.
func (w *Writer[T, P]) Waiting(uid types.UID) int {
	w.mu.Lock()
	q := w.queues[uid]
	w.mu.Unlock()
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// held is how many objects the Writer holds a queue or a written copy of.
func (w *Writer[T, P]) held() (queues, copies int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queues), len(w.latest)
}

// acquire returns the queue of the object with uid, made if no caller uses one, for a caller
// that releases it when done.
func (w *Writer[T, P]) acquire(uid types.UID) *queue[P] {
	w.mu.Lock()
	defer w.mu.Unlock()
	q, ok := w.queues[uid]
	if !ok {
		q = &queue[P]{}
		w.queues[uid] = q
	}
	q.users++
	return q
}

// release ends a caller's use of q, removing it when no caller uses it any more.
func (w *Writer[T, P]) release(uid types.UID, q *queue[P]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if q.users--; q.users == 0 {
		delete(w.queues, uid)
	}
}

// Read returns the newest copy of obj this process knows: the one it last wrote or the cache's,
// whichever has the higher resourceVersion. nil when the object is gone.
func (w *Writer[T, P]) Read(ctx context.Context, obj P) (P, error) {
	return w.read(ctx, obj, false)
}

// read is Read, or a read from the apiserver when live is set.
func (w *Writer[T, P]) read(ctx context.Context, obj P, live bool) (P, error) {
	key := client.ObjectKeyFromObject(obj)
	cur := P(new(T))
	reader := client.Reader(w.client)
	if live {
		reader = w.live
	}
	if err := reader.Get(ctx, key, cur); err != nil {
		if apierrors.IsNotFound(err) {
			w.mu.Lock()
			delete(w.latest, obj.GetUID()) // gone: keep no copy of it
			w.mu.Unlock()
			return nil, nil
		}
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if live {
		return cur, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	mine, ok := w.latest[cur.GetUID()]
	if !ok {
		return cur, nil
	}
	if expectations.Newer(mine.obj.GetResourceVersion(), cur.GetResourceVersion()) {
		return deepCopy(mine.obj), nil
	}
	delete(w.latest, cur.GetUID()) // the cache has caught up: its copy is the newest
	return cur, nil
}

// remember keeps a copy of cur, just written, for the reads before the cache shows it, and
// drops the copies that waited longer than keepLatest once more than sweepAbove are held.
func (w *Writer[T, P]) remember(cur P) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.latest[cur.GetUID()] = written[P]{obj: deepCopy(cur), at: now}
	if len(w.latest) <= sweepAbove {
		return
	}
	for uid, c := range w.latest {
		if now.Sub(c.at) > keepLatest {
			delete(w.latest, uid)
		}
	}
}

func deepCopy[P client.Object](obj P) P { return obj.DeepCopyObject().(P) }

// write applies the batch's changes in order to the newest copy of obj and writes its status
// once, retrying on conflict with a fresh read from the apiserver. It returns each change's
// outcome: its own error, or the write's error when it changed something.
func (w *Writer[T, P]) write(ctx context.Context, obj P, batch []*pending[P]) []error {
	errs := make([]error, len(batch))
	live, writeFailed := false, false
	var changed []bool
	err := retry.OnError(w.backoff, apierrors.IsConflict, func() error {
		clear(errs)
		changed, writeFailed = make([]bool, len(batch)), false
		cur, err := w.read(ctx, obj, live)
		if err != nil || cur == nil {
			return err
		}
		if w.prepare != nil {
			if err := w.prepare(ctx, cur); err != nil {
				return err
			}
		}
		anyChanged := false
		for i, p := range batch {
			before := deepCopy(cur)
			changed[i], errs[i] = p.change(cur)
			if errs[i] != nil || !changed[i] {
				*cur = *before // what a refused or unchanged change touched is not written
				changed[i] = false
				continue
			}
			anyChanged = true
		}
		if !anyChanged {
			return nil
		}
		if err := w.client.Status().Update(ctx, cur); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // gone meanwhile: nothing is left to record into
			}
			live, writeFailed = true, true
			return err
		}
		w.remember(cur)
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
