package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeRecords is a KubeClient whose every cluster is one fake cluster of the test's own.
func fakeRecords(t *testing.T) func(Cluster) (kubernetes.Interface, error) {
	t.Helper()
	k := fake.NewClientset()
	return func(Cluster) (kubernetes.Interface, error) { return k, nil }
}

// restartedFixture is a second server of the same clusters, its operation records in the same
// (fake) cluster as f's, and its clock at now.
func restartedFixture(t *testing.T, f *fixture, now func() time.Time) *fixture {
	t.Helper()
	return fixtureWith(t, func(o *Options) { o.KubeClient, o.Now = f.srv.ops.store.kubeFor, now })
}

// fixtureWith is a server of testOptions as with changes them, served over TLS until the test
// ends.
func fixtureWith(t *testing.T, with func(*Options)) *fixture {
	t.Helper()
	o, audit := testOptions(t, defaultAccess())
	with(&o)
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, audit: audit, ts: startTLS(t, srv)}
}

// recordIn reads op's record from f's cluster, and checks its labels.
func recordIn(f *fixture, op Operation) (record, error) {
	k, err := f.srv.ops.store.kube("prod")
	if err != nil {
		return record{}, err
	}
	cm, err := k.CoreV1().ConfigMaps(op.Namespace).Get(context.Background(), recordName(op.ID), metav1.GetOptions{})
	if err != nil {
		return record{}, fmt.Errorf("the record of %s: %w", op.ID, err)
	}
	r, err := recordOf(cm)
	if err != nil {
		return r, err
	}
	if cm.Labels[LabelOperation] != op.ID || cm.Labels[LabelRelease] != op.Release || cm.Labels[LabelState] != r.Op.State {
		return r, fmt.Errorf("record labels %v, want the operation, its release and its state", cm.Labels)
	}
	return r, nil
}

func TestAnOperationsStateAndEventsAreStoredBesideItsRelease(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	op := startBlocked(t, f, release)
	var running record
	waitFor(t, "the running operation's record", func() error {
		var err error
		if running, err = recordIn(f, op); err != nil {
			return err
		}
		if len(running.Events) < 5 {
			return fmt.Errorf("%d events", len(running.Events))
		}
		return nil
	})
	if running.Op.State != StateRunning {
		t.Errorf("the record of a running operation says %s", running.Op.State)
	}
	close(release)
	sse(t, f, op.ID, "", 0)
	waitFor(t, "the finished operation's record", func() error {
		r, err := recordIn(f, op)
		if err != nil {
			return err
		}
		if r.Op.State != StateSucceeded || len(r.Events) != 8 || r.Events[7].Type != EventDone {
			return fmt.Errorf("state %s with %d events", r.Op.State, len(r.Events))
		}
		return nil
	})
}

func TestARestartedServerAnswersForItsPredecessorsOperationFromTheCluster(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	op := startBlocked(t, f, release)
	close(release)
	want := keys(sse(t, f, op.ID, "", 0))
	f.srv.Wait()

	g := restartedFixture(t, f, time.Now)
	status, body := g.call(t, nil, "GET", "/v1/operations/"+op.ID, readerToken, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"state": "succeeded"`) {
		t.Fatalf("the predecessor's operation: %d %s", status, body)
	}
	if diff := cmp.Diff(want[3:], keys(sse(t, g, op.ID, "3", 0))); diff != "" {
		t.Errorf("events after 3 from the restarted server (-want +got):\n%s", diff)
	}
	_, body = g.call(t, nil, "GET", "/v1/operations?cluster=prod", readerToken, nil)
	if !strings.Contains(string(body), op.ID) {
		t.Errorf("the restarted server's operations lack %s: %s", op.ID, body)
	}
}

func TestAnOperationWhoseServerDiedIsReportedInterruptedNotRunning(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	release := make(chan struct{})
	defer close(release)
	op := startBlocked(t, f, release)
	waitFor(t, "the running operation's record", func() error {
		r, err := recordIn(f, op)
		if err != nil {
			return err
		}
		if len(r.Events) < 5 {
			return fmt.Errorf("%d events", len(r.Events))
		}
		return nil
	})

	// Read while its server still writes the record, it runs; once the record is older than
	// recordStaleAfter its server is gone.
	for _, tc := range []struct {
		name      string
		after     time.Duration
		wantState string
	}{
		{"an operation whose record is fresh runs on another server", 0, StateRunning},
		{"an operation whose record went stale was interrupted", recordStaleAfter + time.Second, StateInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := restartedFixture(t, f, func() time.Time { return time.Now().Add(tc.after) })
			status, body := g.call(t, nil, "GET", "/v1/operations/"+op.ID, readerToken, nil)
			if status != http.StatusOK || !strings.Contains(string(body), `"state": "`+tc.wantState+`"`) {
				t.Fatalf("status %d: %s, want state %s", status, body, tc.wantState)
			}
			if tc.wantState != StateInterrupted {
				return
			}
			for _, w := range []string{`"reason": "Interrupted"`, "ReleaseStuck", "POST unlock"} {
				if !strings.Contains(string(body), w) {
					t.Errorf("the interrupted operation lacks %q: %s", w, body)
				}
			}
			events := sse(t, g, op.ID, "5", 0)
			if n := len(events); n == 0 || events[n-1].Type != EventDone || events[n-1].State != StateInterrupted {
				t.Errorf("events after 5 end %+v, want a done event of state interrupted", events)
			}
		})
	}
}

func TestARecordKeepsItsFirstAndLatestEventsWithinItsBounds(t *testing.T) {
	many := func(n int, msg string) []Event {
		var out []Event
		for k := 1; k <= n; k++ {
			out = append(out, Event{ID: k, Type: EventMessage, Message: msg})
		}
		return out
	}
	ids := func(events []Event) (first, second, last, n int) {
		return events[0].ID, events[1].ID, events[len(events)-1].ID, len(events)
	}
	for _, tc := range []struct {
		name                                        string
		events                                      []Event
		wantFirst, wantSecond, wantLast, wantEvents int
	}{
		{"a few events are all kept", many(10, "x"), 1, 2, 10, 10},
		{"past the cap, the first and the latest are kept", many(500, "x"), 1, 500 - maxStoredEvents + 2, 500, maxStoredEvents},
		// 64 events of 4,000 characters and their fields fit in maxRecordBytes.
		{"past the size, the oldest after the first go", many(150, strings.Repeat("x", 4000)), 1, 88, 150, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm, err := record{Op: Operation{ID: "op-1", Namespace: "ns", Release: "r", State: StateRunning}, Events: tc.events, Renewed: time.Now()}.configMap()
			if err != nil {
				t.Fatal(err)
			}
			got, err := recordOf(cm)
			if err != nil {
				t.Fatal(err)
			}
			first, second, last, n := ids(got.Events)
			if diff := cmp.Diff([]int{tc.wantFirst, tc.wantSecond, tc.wantLast, tc.wantEvents}, []int{first, second, last, n}); diff != "" {
				t.Errorf("first, second, last event and count (-want +got):\n%s", diff)
			}
			if size := len(cm.Data[recordEventsKey]) + len(cm.Data[recordOperationKey]); size > maxRecordBytes {
				t.Errorf("record of %d bytes, over %d", size, maxRecordBytes)
			}
		})
	}
}

func TestOldFinishedRecordsArePrunedAndRunningOnesKept(t *testing.T) {
	var rs []record
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range maxStoredOperations + 3 {
		rs = append(rs, record{Op: Operation{ID: fmt.Sprintf("op-%02d", k), State: StateSucceeded, Started: start.Add(time.Duration(k) * time.Minute)}})
	}
	rs[0].Op.State = StateRunning
	var got []string
	for _, r := range prunable(rs, maxStoredOperations) {
		got = append(got, r.Op.ID)
	}
	if diff := cmp.Diff([]string{"op-01", "op-02"}, got); diff != "" {
		t.Errorf("pruned (-want +got):\n%s", diff)
	}
}

// waitFor polls cond until it holds, at most opTimeout.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, opTimeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

// startTLS serves srv over TLS until the test ends.
func startTLS(t *testing.T, srv *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewTLSServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Wait()
	})
	return ts
}
