package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kruise-addon/kruise-addon/installer"
)

// Operation states.
const (
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
)

// Event types.
const (
	// EventProgress is one component's readiness: component, ready, total.
	EventProgress = "progress"
	// EventMessage is a line of what the installer is doing (a rollback starting).
	EventMessage = "message"
	// EventDone is the last event: the operation's state, and its error when it failed.
	EventDone = "done"
)

// maxFinished bounds how many finished operations the server remembers.
const maxFinished = 500

// Operation is an asynchronous install, upgrade, uninstall, unlock or rollback.
type Operation struct {
	ID        string     `json:"id"`
	Action    string     `json:"action"`
	Cluster   string     `json:"cluster"`
	Namespace string     `json:"namespace"`
	Release   string     `json:"release"`
	State     string     `json:"state"`
	Caller    string     `json:"caller"`
	Started   time.Time  `json:"started"`
	Finished  *time.Time `json:"finished,omitempty"`
	// Result is the library's result (installer.Result, installer.UninstallResult) on success.
	Result any        `json:"result,omitempty"`
	Error  *ErrorBody `json:"error,omitempty"`
	// Events counts the events so far; they are at /v1/operations/{id}/events.
	Events int `json:"events"`
}

// Event is one step of an operation's progress. IDs count from 1 within the operation.
type Event struct {
	ID   int       `json:"id"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	// Component is manager or daemon for progress events.
	Component string `json:"component,omitempty"`
	Ready     *int32 `json:"ready,omitempty"`
	Total     *int32 `json:"total,omitempty"`
	Message   string `json:"message,omitempty"`
	// State and Error are set on the done event.
	State string     `json:"state,omitempty"`
	Error *ErrorBody `json:"error,omitempty"`
}

// releaseKey identifies a cluster's release: one operation at a time on it.
type releaseKey struct{ cluster, namespace, release string }

// operation is an Operation with its events and the channel that announces new ones.
type operation struct {
	mu      sync.Mutex
	op      Operation
	events  []Event
	changed chan struct{} // closed and replaced on every event
}

// snapshot is the operation as it is now.
func (o *operation) snapshot() Operation {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.op
	s.Events = len(o.events)
	return s
}

// eventsAfter returns the events after id, whether the operation has ended, and a channel
// closed when another event comes.
func (o *operation) eventsAfter(id int) ([]Event, bool, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Event
	if id < len(o.events) {
		out = append(out, o.events[max(id, 0):]...)
	}
	// Ended once the done event is in, not when the state changes: that comes first.
	ended := len(o.events) > 0 && o.events[len(o.events)-1].Type == EventDone
	return out, ended, o.changed
}

func (o *operation) add(now time.Time, e Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e.ID, e.Time = len(o.events)+1, now
	o.events = append(o.events, e)
	close(o.changed)
	o.changed = make(chan struct{})
}

// operations runs operations and remembers them.
type operations struct {
	mu       sync.Mutex
	byID     map[string]*operation
	running  map[releaseKey]string
	finished []string // IDs, oldest first
	now      func() time.Time
	wg       sync.WaitGroup
}

func newOperations(now func() time.Time) *operations {
	return &operations{byID: map[string]*operation{}, running: map[releaseKey]string{}, now: now}
}

// runFunc does an operation's work; progress and message events go to rec.
type runFunc func(ctx context.Context, rec *recorder) (any, error)

// start begins op on its release unless another operation runs there, whose ID it then returns
// with ok false. accepted is called with the new operation before it runs, done with the
// finished one, so that nothing about an operation is told before its acceptance.
func (s *operations) start(ctx context.Context, op Operation, run runFunc, accepted, done func(Operation)) (Operation, string, bool) {
	key := releaseKey{op.Cluster, op.Namespace, op.Release}
	s.mu.Lock()
	if id, busy := s.running[key]; busy {
		s.mu.Unlock()
		return Operation{}, id, false
	}
	op.ID, op.State, op.Started = newID(), StateRunning, s.now().UTC()
	o := &operation{op: op, changed: make(chan struct{})}
	s.byID[op.ID] = o
	s.running[key] = op.ID
	s.wg.Add(1)
	s.mu.Unlock()
	o.add(s.now().UTC(), Event{Type: EventMessage, Message: fmt.Sprintf("%s of release %s/%s on cluster %s started", op.Action, op.Namespace, op.Release, op.Cluster)})
	accepted(o.snapshot())
	go func() {
		defer s.wg.Done()
		res, err := run(ctx, &recorder{op: o, now: s.now})
		s.finish(key, o, res, err)
		done(o.snapshot())
	}()
	return o.snapshot(), "", true
}

func (s *operations) finish(key releaseKey, o *operation, res any, err error) {
	now := s.now().UTC()
	done := Event{Type: EventDone, State: StateSucceeded, Message: o.op.Action + " succeeded"}
	o.mu.Lock()
	o.op.Finished = &now
	if err != nil {
		b := errorBodyOf(err)
		o.op.State, o.op.Error = StateFailed, &b
		done.State, done.Error, done.Message = StateFailed, &b, b.Error
	} else {
		o.op.State, o.op.Result = StateSucceeded, res
	}
	o.mu.Unlock()
	o.add(now, done)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, key)
	s.finished = append(s.finished, o.op.ID)
	for len(s.finished) > maxFinished {
		delete(s.byID, s.finished[0])
		s.finished = s.finished[1:]
	}
}

func (s *operations) get(id string) (*operation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.byID[id]
	return o, ok
}

// runningOn is the ID of the operation running on a release, "" when none.
func (s *operations) runningOn(key releaseKey) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[key]
}

// list returns the operations, newest first, only those on cluster when it is set.
func (s *operations) list(cluster string) []Operation {
	s.mu.Lock()
	ops := make([]*operation, 0, len(s.byID))
	for _, o := range s.byID {
		ops = append(ops, o)
	}
	s.mu.Unlock()
	out := []Operation{}
	for _, o := range ops {
		if snap := o.snapshot(); cluster == "" || snap.Cluster == cluster {
			out = append(out, snap)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Started.Equal(out[b].Started) {
			return out[a].Started.After(out[b].Started)
		}
		return out[a].ID > out[b].ID
	})
	return out
}

// wait blocks until every operation has ended.
func (s *operations) wait() { s.wg.Wait() }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "op-" + hex.EncodeToString(b[:])
}

// recorder turns the installer's progress into events.
type recorder struct {
	op      *operation
	now     func() time.Time
	mu      sync.Mutex
	partial strings.Builder
}

// readiness records one progress event per component.
func (r *recorder) readiness(rd installer.Readiness) {
	now := r.now().UTC()
	msg := rd.String()
	r.op.add(now, Event{Type: EventProgress, Component: "manager", Ready: ptr(rd.ManagerReady), Total: ptr(rd.ManagerDesired), Message: msg})
	if rd.DaemonPresent {
		r.op.add(now, Event{Type: EventProgress, Component: "daemon", Ready: ptr(rd.DaemonReady), Total: ptr(rd.DaemonDesired), Message: msg})
	}
}

// Write takes the installer's progress lines, one message event per line.
func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial.Write(p)
	for {
		s := r.partial.String()
		line, rest, found := strings.Cut(s, "\n")
		if !found {
			break
		}
		if line = strings.TrimSpace(line); line != "" {
			r.op.add(r.now().UTC(), Event{Type: EventMessage, Message: line})
		}
		r.partial.Reset()
		r.partial.WriteString(rest)
	}
	return len(p), nil
}

func ptr[T any](v T) *T { return &v }
