package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer"
)

// An operation's record is a ConfigMap beside the release it acts on (the release's namespace),
// named after the operation, so that a restarted server answers for the operations its
// predecessor ran. This file is the record's shape and the pure decisions about it; the
// cluster's reads and writes are in recordstore.go.
const (
	// recordPrefix starts a record's name: kruise-addon-<operation ID>.
	recordPrefix = "kruise-addon-"
	// Keys of a record's data.
	recordOperationKey = "operation.json"
	recordEventsKey    = "events.json"
	// recordRenewedAnnotation is when the server running the operation last wrote its record
	// (RFC 3339): a running operation whose record is older than recordStaleAfter lost its
	// server.
	recordRenewedAnnotation = "kruise-addon.io/renewed"
	// maxStoredEvents caps the events a record keeps: the first (the operation's start) and
	// the latest ones, by their IDs. A client resuming from an event no longer kept gets those
	// kept after it.
	maxStoredEvents = 200
	// maxRecordBytes caps a record's data, far below a ConfigMap's 1 MiB: the oldest events
	// after the first are dropped until it fits.
	maxRecordBytes = 256 << 10
	// maxStoredOperations caps the finished records kept per release; older ones are deleted
	// when an operation on the release ends.
	maxStoredOperations = 20
)

// The record's labels, so that records are listed without reading them.
const (
	// LabelOperation is the operation's ID.
	LabelOperation = installer.OperationRecordLabel
	// LabelRelease is the release the operation acts on.
	LabelRelease = "kruise-addon.io/release"
	// LabelState is the operation's state when the record was written.
	LabelState = "kruise-addon.io/operation-state"
)

const (
	// recordWriteEvery spaces the writes of a running operation's record while events come.
	recordWriteEvery = time.Second
	// recordRenewEvery is how often a running operation's record is written when nothing
	// happens, so that a reader can tell a live operation from one whose server died.
	recordRenewEvery = installer.LockDuration / 3
	// recordStaleAfter: a running operation whose record was not written for this long lost
	// its server, as the cluster's lock of a killed command goes stale.
	recordStaleAfter = installer.LockDuration
)

// record is what the cluster keeps of an operation.
type record struct {
	Op Operation
	// Events are the kept events, by increasing ID (see maxStoredEvents).
	Events  []Event
	Renewed time.Time
	// resourceVersion is the ConfigMap's, when read from the cluster.
	resourceVersion string
}

func recordName(id string) string { return recordPrefix + id }

// boundEvents keeps the first event and the latest ones, at most maxStoredEvents in all.
func boundEvents(events []Event) []Event {
	if len(events) <= maxStoredEvents {
		return events
	}
	out := append([]Event{events[0]}, events[len(events)-maxStoredEvents+1:]...)
	return out
}

// configMap is the record as the cluster stores it, its events bounded in number and size.
func (r record) configMap() (*corev1.ConfigMap, error) {
	op, err := json.Marshal(r.Op)
	if err != nil {
		return nil, fmt.Errorf("operation %s: %w", r.Op.ID, err)
	}
	events := boundEvents(r.Events)
	var data []byte
	for {
		if data, err = json.Marshal(events); err != nil {
			return nil, fmt.Errorf("operation %s: events: %w", r.Op.ID, err)
		}
		if len(op)+len(data) <= maxRecordBytes || len(events) <= 2 {
			break
		}
		events = append(events[:1:1], events[2:]...)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: recordName(r.Op.ID), Namespace: r.Op.Namespace, ResourceVersion: r.resourceVersion,
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "kruise-addon",
				LabelOperation:                 r.Op.ID,
				LabelRelease:                   r.Op.Release,
				LabelState:                     r.Op.State,
			},
			Annotations: map[string]string{recordRenewedAnnotation: r.Renewed.UTC().Format(time.RFC3339Nano)},
		},
		Data: map[string]string{recordOperationKey: string(op), recordEventsKey: string(data)},
	}, nil
}

// recordOf reads a record from its ConfigMap.
func recordOf(cm *corev1.ConfigMap) (record, error) {
	r := record{resourceVersion: cm.ResourceVersion}
	if err := json.Unmarshal([]byte(cm.Data[recordOperationKey]), &r.Op); err != nil {
		return r, fmt.Errorf("record %s/%s: %s: %w", cm.Namespace, cm.Name, recordOperationKey, err)
	}
	if err := json.Unmarshal([]byte(cm.Data[recordEventsKey]), &r.Events); err != nil {
		return r, fmt.Errorf("record %s/%s: %s: %w", cm.Namespace, cm.Name, recordEventsKey, err)
	}
	sort.Slice(r.Events, func(a, b int) bool { return r.Events[a].ID < r.Events[b].ID })
	renewed, err := time.Parse(time.RFC3339Nano, cm.Annotations[recordRenewedAnnotation])
	if err != nil {
		return r, fmt.Errorf("record %s/%s: annotation %s: %w", cm.Namespace, cm.Name, recordRenewedAnnotation, err)
	}
	r.Renewed = renewed
	return r, nil
}

// lostItsServer reports whether a record says running although its server stopped writing it.
func (r record) lostItsServer(now time.Time) bool {
	return r.Op.State == StateRunning && now.Sub(r.Renewed) > recordStaleAfter
}

// interrupted is the record of an operation whose server died while it ran: state interrupted,
// its error saying what became of the release and what to do, and a done event that ends its
// stream.
func (r record) interrupted(now time.Time) record {
	now = now.UTC()
	b := ErrorBody{
		Error: fmt.Sprintf("the server running %s of release %s/%s on cluster %s stopped before it ended (its last word: %s): the release may be left pending; "+
			"GET /v1/clusters/%s/addon reports it ReleaseStuck if so, and POST unlock then frees it for an upgrade or uninstall",
			r.Op.Action, r.Op.Namespace, r.Op.Release, r.Op.Cluster, r.Renewed.UTC().Format(time.RFC3339), r.Op.Cluster),
		Reason: ReasonInterrupted, ExitCode: installer.ExitError,
	}
	r.Op.State, r.Op.Error, r.Op.Finished = StateInterrupted, &b, &now
	last := 0
	if n := len(r.Events); n > 0 {
		last = r.Events[n-1].ID
	}
	r.Events = append(append([]Event(nil), r.Events...), Event{ID: last + 1, Time: now, Type: EventDone, State: StateInterrupted, Error: &b, Message: b.Error})
	r.Op.Events = last + 1
	return r
}

// prunable names the records of one release to delete so that at most keep finished ones
// remain, oldest first; running records are never pruned.
func prunable(records []record, keep int) []record {
	var finished []record
	for _, r := range records {
		if r.Op.State != StateRunning {
			finished = append(finished, r)
		}
	}
	sort.Slice(finished, func(a, b int) bool {
		if !finished[a].Op.Started.Equal(finished[b].Op.Started) {
			return finished[a].Op.Started.Before(finished[b].Op.Started)
		}
		return finished[a].Op.ID < finished[b].Op.ID
	})
	if len(finished) <= keep {
		return nil
	}
	return finished[:len(finished)-keep]
}
