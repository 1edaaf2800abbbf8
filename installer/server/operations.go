package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kruise-addon/kruise-addon/installer"
)

// Operation states.
const (
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	// StateInterrupted is an operation whose server stopped while it ran (killed, or its
	// machine lost), as a later server reads it from the operation's record in the cluster.
	StateInterrupted = "interrupted"
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
	mu sync.Mutex
	op Operation
	// events are by increasing ID; one read from a record may lack some (maxStoredEvents).
	events []Event
	// lastID is the ID of the latest event, the count of events so far.
	lastID  int
	changed chan struct{} // closed and replaced on every event
	// dirty tells the record's writer that the operation changed; it never blocks.
	dirty chan struct{}
	// remote is an operation read from its record while another server runs it: its events
	// come from reading the record again.
	remote bool
	// writeErr is the last error writing its record, logged once.
	writeErr string
}

func newOperation(op Operation) *operation {
	return &operation{op: op, changed: make(chan struct{}), dirty: make(chan struct{}, 1)}
}

// operationOf is an operation as its record tells it.
func operationOf(r record) *operation {
	o := newOperation(r.Op)
	o.events, o.lastID = r.Events, r.Op.Events
	if n := len(r.Events); n > 0 {
		o.lastID = max(o.lastID, r.Events[n-1].ID)
	}
	o.remote = r.Op.State == StateRunning
	return o
}

func (o *operation) isRemote() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.remote
}

// snapshot is the operation as it is now.
func (o *operation) snapshot() Operation {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.op
	s.Events = o.lastID
	return s
}

// record is what the cluster is to keep of the operation now.
func (o *operation) record(now time.Time) record {
	o.mu.Lock()
	defer o.mu.Unlock()
	op := o.op
	op.Events = o.lastID
	return record{Op: op, Events: append([]Event(nil), o.events...), Renewed: now.UTC()}
}

// replace takes a newer reading of a remote operation's record.
func (o *operation) replace(r record) {
	fresh := operationOf(r)
	o.mu.Lock()
	defer o.mu.Unlock()
	if fresh.lastID == o.lastID && fresh.op.State == o.op.State {
		return
	}
	o.op, o.events, o.lastID, o.remote = fresh.op, fresh.events, fresh.lastID, fresh.remote
	close(o.changed)
	o.changed = make(chan struct{})
}

// eventsAfter returns the events after id, whether the operation has ended, and a channel
// closed when another event comes.
func (o *operation) eventsAfter(id int) ([]Event, bool, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Event
	if k := sort.Search(len(o.events), func(k int) bool { return o.events[k].ID > id }); k < len(o.events) {
		out = append(out, o.events[k:]...)
	}
	// Ended once the done event is in, not when the state changes: that comes first.
	ended := len(o.events) > 0 && o.events[len(o.events)-1].Type == EventDone
	return out, ended, o.changed
}

func (o *operation) add(now time.Time, e Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lastID++
	e.ID, e.Time = o.lastID, now
	o.events = append(o.events, e)
	close(o.changed)
	o.changed = make(chan struct{})
	select {
	case o.dirty <- struct{}{}:
	default:
	}
}

// operations runs operations and remembers them.
type operations struct {
	mu       sync.Mutex
	byID     map[string]*operation
	running  map[releaseKey]string
	finished []string // IDs, oldest first
	now      func() time.Time
	wg       sync.WaitGroup
	// store keeps every operation's record in the cluster it acts on; nil keeps them in
	// memory only.
	store *recordStore
	log   logr.Logger
}

func newOperations(now func() time.Time, store *recordStore, log logr.Logger) *operations {
	return &operations{byID: map[string]*operation{}, running: map[releaseKey]string{}, now: now, store: store, log: log}
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
	o := newOperation(op)
	s.byID[op.ID] = o
	s.running[key] = op.ID
	s.wg.Add(1)
	s.mu.Unlock()
	o.add(s.now().UTC(), Event{Type: EventMessage, Message: fmt.Sprintf("%s of release %s/%s on cluster %s started", op.Action, op.Namespace, op.Release, op.Cluster)})
	accepted(o.snapshot())
	stop, written := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(written)
		s.keepRecord(o, stop)
	}()
	go func() {
		defer s.wg.Done()
		res, err := run(ctx, &recorder{op: o, now: s.now})
		s.finish(key, o, res, err)
		done(o.snapshot())
		close(stop)
		<-written
		s.writeRecord(o)
		s.prune(o)
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

// keepRecord writes o's record while it runs: at once, then after each burst of events (at
// most once per recordWriteEvery) and at least once per recordRenewEvery, until stop.
func (s *operations) keepRecord(o *operation, stop <-chan struct{}) {
	if s.store == nil {
		return
	}
	renew := time.NewTicker(recordRenewEvery)
	defer renew.Stop()
	for {
		s.writeRecord(o)
		select {
		case <-stop:
			return
		case <-renew.C:
		case <-o.dirty:
			select {
			case <-stop:
				return
			case <-time.After(recordWriteEvery):
			}
		}
	}
}

// writeRecord writes o's record as it is now. A failure is logged, once until the next
// success, and retried by the next write: the operation goes on without it (an install's
// namespace may not exist yet).
func (s *operations) writeRecord(o *operation) {
	if s.store == nil {
		return
	}
	// Not the server's context: the last write of an operation undone at shutdown must land.
	ctx, cancel := context.WithTimeout(context.Background(), recordReadTimeout)
	defer cancel()
	r := o.record(s.now())
	err := s.store.save(ctx, r.Op.Cluster, r)
	o.mu.Lock()
	defer o.mu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != "" && msg != o.writeErr {
		s.log.Info("Operation record not written; the operation goes on and the next write retries", "operation", r.Op.ID, "err", msg)
	}
	o.writeErr = msg
}

// prune deletes the release's oldest finished records beyond maxStoredOperations.
func (s *operations) prune(o *operation) {
	if s.store == nil {
		return
	}
	op := o.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), recordReadTimeout)
	defer cancel()
	if err := s.store.prune(ctx, op.Cluster, op.Namespace, op.Release); err != nil {
		s.log.V(1).Info("Old operation records not pruned", "operation", op.ID, "err", err.Error())
	}
}

// lookup finds an operation this server does not hold in the clusters' records: one a
// predecessor ran, or another server runs. A record still running whose server stopped
// writing it is marked interrupted, in the cluster too. A finished operation is then kept in
// memory like this server's own.
func (s *operations) lookup(ctx context.Context, id string) (*operation, bool, error) {
	if s.store == nil {
		return nil, false, nil
	}
	r, cluster, ok, err := s.store.find(ctx, id)
	if !ok {
		return nil, false, err
	}
	if r, err = s.settle(ctx, cluster, r); err != nil {
		return nil, false, err
	}
	o := operationOf(r)
	if o.remote {
		return o, true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if held, ok := s.byID[id]; ok {
		return held, true, nil
	}
	s.byID[id] = o
	s.finished = append(s.finished, id)
	return o, true, nil
}

// settle marks a record whose server is gone interrupted.
func (s *operations) settle(ctx context.Context, cluster string, r record) (record, error) {
	if !r.lostItsServer(s.now()) {
		return r, nil
	}
	r, err := s.store.replace(ctx, cluster, r.interrupted(s.now()))
	if err != nil {
		return r, err
	}
	r.Op.Cluster = cluster
	return r, nil
}

// refresh reads a remote operation's record again.
func (s *operations) refresh(ctx context.Context, o *operation) error {
	op := o.snapshot()
	r, ok, err := s.store.findIn(ctx, op.Cluster, op.ID)
	if err != nil || !ok {
		return err
	}
	if r, err = s.settle(ctx, op.Cluster, r); err != nil {
		return err
	}
	o.replace(r)
	return nil
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

// list returns the operations, newest first, only those on cluster when it is set: this
// server's, and those the clusters' records tell of (a record whose server is gone shows as
// interrupted). A cluster that cannot be read adds none.
func (s *operations) list(ctx context.Context, clusters []string) []Operation {
	s.mu.Lock()
	ops := make([]*operation, 0, len(s.byID))
	for _, o := range s.byID {
		ops = append(ops, o)
	}
	s.mu.Unlock()
	out := []Operation{}
	seen := map[string]bool{}
	for _, o := range ops {
		if snap := o.snapshot(); slices.Contains(clusters, snap.Cluster) {
			out = append(out, snap)
			seen[snap.ID] = true
		}
	}
	for _, c := range clusters {
		if s.store == nil {
			break
		}
		rs, err := s.store.list(ctx, c, "", nil)
		if err != nil {
			s.log.V(1).Info("Operation records not read", "cluster", c, "err", err.Error())
		}
		for _, r := range rs {
			if seen[r.Op.ID] {
				continue
			}
			if r.lostItsServer(s.now()) {
				r = r.interrupted(s.now())
			}
			out = append(out, r.Op)
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
