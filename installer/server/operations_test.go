package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer"
)

// opTimeout bounds waits for an operation the test itself releases.
const opTimeout = 30 * time.Second

// startBlocked starts an operation on f's server that reports readiness and a line, then waits
// for release to close before it succeeds.
func startBlocked(t *testing.T, f *fixture, release <-chan struct{}) Operation {
	t.Helper()
	op := Operation{Action: "install", Cluster: "prod", Namespace: "kruise-system", Release: "kruise-addon", Caller: "console"}
	started, _, ok := f.srv.ops.start(context.Background(), op, func(ctx context.Context, rec *recorder) (any, error) {
		rec.readiness(installer.Readiness{ManagerReady: 0, ManagerDesired: 1, DaemonPresent: true, DaemonDesired: 2})
		_, _ = io.WriteString(rec, "a line\nand its rest")
		_, _ = io.WriteString(rec, " together\n")
		select {
		case <-release:
		case <-time.After(opTimeout):
		}
		rec.readiness(installer.Readiness{ManagerReady: 1, ManagerDesired: 1, DaemonPresent: true, DaemonReady: 2, DaemonDesired: 2})
		return &installer.Result{Release: "kruise-addon", Namespace: "kruise-system", Revision: 1, Status: "deployed", Step: "install"}, nil
	}, func(Operation) {}, func(Operation) {})
	if !ok {
		t.Fatal("the first operation did not start")
	}
	return started
}

func TestASecondOperationOnTheReleaseGets409WithTheRunningOne(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	defer close(release)
	running := startBlocked(t, f, release)
	for _, path := range []string{"install", "upgrade", "uninstall", "unlock"} {
		status, body := f.call(t, nil, "POST", "/v1/clusters/prod/addon/"+path, operatorToken, map[string]any{})
		var e ErrorBody
		_ = json.Unmarshal(body, &e)
		if status != http.StatusConflict || e.Reason != ReasonOperationInProgress || e.Operation != running.ID {
			t.Errorf("%s: status %d body %s, want 409 OperationInProgress naming %s", path, status, body, running.ID)
		}
	}
	// Another release on the same cluster is free.
	status, body := f.call(t, nil, "POST", "/v1/clusters/prod/addon/unlock", operatorToken, map[string]any{"namespace": "other"})
	if status != http.StatusAccepted {
		t.Errorf("another release: status %d, want 202: %s", status, body)
	}
}

// sse reads an event stream until it ends, or until stopAfter events when stopAfter > 0.
func sse(t *testing.T, f *fixture, id, lastEventID string, stopAfter int) []Event {
	t.Helper()
	req, _ := http.NewRequest("GET", f.ts.URL+"/v1/operations/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := f.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var events []Event
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
		if stopAfter > 0 && len(events) == stopAfter {
			// Read the blank line that ends the event, then leave as a dropped client does.
			sc.Scan()
			return events
		}
	}
	return events
}

type eventKey struct {
	ID              int
	Type, Component string
	Ready, Total    int32
	Message, State  string
}

func keys(events []Event) []eventKey {
	var out []eventKey
	for _, e := range events {
		k := eventKey{ID: e.ID, Type: e.Type, Component: e.Component, State: e.State}
		if e.Type == EventProgress {
			k.Ready, k.Total = *e.Ready, *e.Total
		} else {
			k.Message = e.Message
		}
		out = append(out, k)
	}
	return out
}

func TestEventsStreamResumesAfterADisconnectAndCanBePolled(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	op := startBlocked(t, f, release)
	first := sse(t, f, op.ID, "", 3)
	close(release)
	rest := sse(t, f, op.ID, "3", 0)
	want := []eventKey{
		{ID: 1, Type: EventMessage, Message: "install of release kruise-system/kruise-addon on cluster prod started"},
		{ID: 2, Type: EventProgress, Component: "manager", Ready: 0, Total: 1},
		{ID: 3, Type: EventProgress, Component: "daemon", Ready: 0, Total: 2},
		{ID: 4, Type: EventMessage, Message: "a line"},
		{ID: 5, Type: EventMessage, Message: "and its rest together"},
		{ID: 6, Type: EventProgress, Component: "manager", Ready: 1, Total: 1},
		{ID: 7, Type: EventProgress, Component: "daemon", Ready: 2, Total: 2},
		{ID: 8, Type: EventDone, State: StateSucceeded, Message: "install succeeded"},
	}
	if diff := cmp.Diff(want, keys(append(first, rest...))); diff != "" {
		t.Errorf("events before and after the reconnect (-want +got):\n%s", diff)
	}
	// A client that polls gets the same events as JSON.
	_, body := f.callWith(t, nil, "GET", "/v1/operations/"+op.ID+"/events?after=6", readerToken, nil, map[string]string{"Accept": "application/json"})
	var polled EventsResponse
	if err := json.Unmarshal(body, &polled); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[6:], keys(polled.Events)); diff != "" {
		t.Errorf("polled events after 6 (-want +got):\n%s", diff)
	}
	if polled.Operation.State != StateSucceeded || polled.Operation.Events != 8 {
		t.Errorf("operation %+v, want succeeded with 8 events", polled.Operation)
	}
	_, body = f.call(t, nil, "GET", "/v1/operations?cluster=prod", readerToken, nil)
	if !strings.Contains(string(body), op.ID) {
		t.Errorf("operations of prod lack %s: %s", op.ID, body)
	}
}

func TestABadLastEventIDIsBadInput(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	op := startBlocked(t, f, release)
	close(release)
	status, body := f.callWith(t, nil, "GET", "/v1/operations/"+op.ID+"/events", readerToken, nil, map[string]string{"Last-Event-ID": "three"})
	if status != 400 || !strings.Contains(string(body), `\"three\" is not an event ID`) {
		t.Errorf("status %d: %s", status, body)
	}
}

// The state is set before the done event is added: a stream that stopped on the state would end
// without its done event.
func TestAnOperationEndsWithItsDoneEventNotItsState(t *testing.T) {
	o := &operation{op: Operation{State: StateRunning}, changed: make(chan struct{})}
	o.add(time.Now(), Event{Type: EventMessage, Message: "started"})
	o.mu.Lock()
	o.op.State = StateSucceeded
	o.mu.Unlock()
	if _, ended, _ := o.eventsAfter(1); ended {
		t.Fatal("ended before the done event was added")
	}
	o.add(time.Now(), Event{Type: EventDone, State: StateSucceeded})
	events, ended, _ := o.eventsAfter(1)
	if !ended || len(events) != 1 || events[0].Type != EventDone {
		t.Fatalf("ended %t with events %+v, want ended with the done event", ended, events)
	}
}
