package expectations

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Action is the kind of write that is awaited.
type Action string

const (
	// Create is awaited until the cache holds the object.
	Create Action = "create"
	// Delete is awaited until the cache no longer holds the object (or holds it terminating).
	Delete Action = "delete"
)

// Scale tracks, per owner key, the names of objects the owner created or deleted and the cache has
// not caught up with yet. It is safe for concurrent use.
type Scale struct {
	clock clock.PassiveClock

	mu      sync.Mutex
	pending map[string]*ownerExpectations
}

type ownerExpectations struct {
	names map[Action]map[string]struct{}
	since time.Time // when the oldest unsatisfied expectation was recorded
}

// NewScale returns empty scale expectations that read time from c.
func NewScale(c clock.PassiveClock) *Scale {
	return &Scale{clock: c, pending: map[string]*ownerExpectations{}}
}

// Expect records that owner issued action on the object called name.
func (s *Scale) Expect(owner string, action Action, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.pending[owner]
	if e == nil {
		e = &ownerExpectations{names: map[Action]map[string]struct{}{}, since: s.clock.Now()}
		s.pending[owner] = e
	}
	if len(e.names[Create])+len(e.names[Delete]) == 0 {
		e.since = s.clock.Now()
	}
	if e.names[action] == nil {
		e.names[action] = map[string]struct{}{}
	}
	e.names[action][name] = struct{}{}
}

// Observe records that the cache has seen action done on name. Observing something that was
// never expected is a no-op, so informer handlers may call it for every event.
func (s *Scale) Observe(owner string, action Action, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.pending[owner]
	if e == nil {
		return
	}
	delete(e.names[action], name)
	if len(e.names[Create])+len(e.names[Delete]) == 0 {
		delete(s.pending, owner)
	}
}

// Satisfied reports whether every write of owner has been observed. When it has not, it returns
// how long the oldest is outstanding, so the caller can requeue or give up waiting.
func (s *Scale) Satisfied(owner string) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.pending[owner]
	if e == nil {
		return true, 0
	}
	return false, s.clock.Since(e.since)
}

// Pending returns the outstanding names per action, for logs.
func (s *Scale) Pending(owner string) map[Action][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[Action][]string{}
	if e := s.pending[owner]; e != nil {
		for a, names := range e.names {
			for n := range names {
				out[a] = append(out[a], n)
			}
		}
	}
	return out
}

// Forget drops everything awaited for owner, e.g. when the owner is deleted or waited too long.
func (s *Scale) Forget(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, owner)
}

// ResourceVersion tracks, per object UID, the resourceVersion our last update returned, so that a
// reconcile can tell whether the cached copy already includes it. It is safe for concurrent use.
type ResourceVersion struct {
	clock clock.PassiveClock

	mu      sync.Mutex
	pending map[types.UID]rvExpectation
}

type rvExpectation struct {
	version uint64
	since   time.Time
}

// NewResourceVersion returns empty resourceVersion expectations that read time from c.
func NewResourceVersion(c clock.PassiveClock) *ResourceVersion {
	return &ResourceVersion{clock: c, pending: map[types.UID]rvExpectation{}}
}

// Object is what resourceVersion expectations need of an object.
type Object interface {
	GetUID() types.UID
	GetResourceVersion() string
}

// Expect records the resourceVersion an update of obj returned.
func (r *ResourceVersion) Expect(obj Object) {
	r.withVersion(obj, func(uid types.UID, v uint64) {
		if old, found := r.pending[uid]; !found || old.version < v {
			r.pending[uid] = rvExpectation{version: v, since: r.clock.Now()}
		}
	})
}

// Observe is called with the cached copy; once that copy is at least as new as the expected
// version, the expectation is satisfied and dropped.
func (r *ResourceVersion) Observe(obj Object) {
	r.withVersion(obj, func(uid types.UID, v uint64) {
		if e, found := r.pending[uid]; found && v >= e.version {
			delete(r.pending, uid)
		}
	})
}

// withVersion runs f under the lock with obj's UID and its resourceVersion as a number; an
// object whose resourceVersion does not parse is passed over.
func (r *ResourceVersion) withVersion(obj Object, f func(uid types.UID, v uint64)) {
	v, ok := parse(obj.GetResourceVersion())
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f(obj.GetUID(), v)
}

// Satisfied reports whether the cached copy obj includes our last write to it, and if not, how
// long we have been waiting.
func (r *ResourceVersion) Satisfied(obj Object) (bool, time.Duration) {
	r.Observe(obj)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, found := r.pending[obj.GetUID()]
	if !found {
		return true, 0
	}
	return false, r.clock.Since(e.since)
}

// Forget drops the expectation for uid, e.g. when the object is deleted.
func (r *ResourceVersion) Forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, uid)
}

// Newer tells whether resourceVersion a is newer than b, comparing them as the numbers the
// apiserver makes them; a version that does not parse is never newer.
func Newer(a, b string) bool {
	av, okA := parse(a)
	bv, okB := parse(b)
	return okA && okB && av > bv
}

// parse reads a resourceVersion as a number. The apiserver's versions are etcd revisions; they are
// opaque by contract, but comparing them is the only way to know a cache is current, and a value
// that does not parse simply disables the wait.
func parse(rv string) (uint64, bool) {
	var v uint64
	if rv == "" {
		return 0, false
	}
	for _, c := range rv {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
