package rollout

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
)

// Counts are a workload's pod counts as its status shows them.
type Counts struct {
	Replicas, Ready, Available, Updated, UpdatedReady, UpdatedAvailable int32
}

// Add counts one pod: ready, available for minReadySeconds, and at the update revision.
func (c *Counts) Add(ready, available, updated bool) {
	for _, n := range []struct {
		field *int32
		ok    bool
	}{
		{&c.Replicas, true},
		{&c.Ready, ready},
		{&c.Available, available},
		{&c.Updated, updated},
		{&c.UpdatedReady, updated && ready},
		{&c.UpdatedAvailable, updated && available},
	} {
		if n.ok {
			*n.field++
		}
	}
}

// Readiness is how a workload's status sees pod: ready when live holds (what the kind asks of a
// ready pod beyond its Ready condition), its Ready condition is true and no in-place update holds
// it unready; available when it is ready and has been for minReadySeconds at now.
func Readiness(pod *corev1.Pod, live bool, minReadySeconds int32, now time.Time) (ready, available bool) {
	ready = live && podsort.IsReady(pod) && inplaceupdate.NotUnready(pod)
	return ready, ready && podsort.IsAvailable(pod, minReadySeconds, now)
}

// AddPod counts pod as Readiness sees it, at the update revision when updated.
func (c *Counts) AddPod(pod *corev1.Pod, live bool, minReadySeconds int32, now time.Time, updated bool) {
	ready, available := Readiness(pod, live, minReadySeconds, now)
	c.Add(ready, available, updated)
}

// SelectorString is a status's labelSelector: the spec's selector as a string, or "" when it does
// not parse.
func SelectorString(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return ""
	}
	return s.String()
}

// Failures sets a workload's failure conditions, those of types, from failed: a type failed
// names is set with its message (keeping its transition time when it is set already), one it
// does not name is dropped. The other conditions are kept as they are; new failures come last,
// in the order of types, True since now with their type as reason.
//
// C is a workload's condition type, which has the fields every workload API's conditions have:
// Type (of the string type T), Status, LastTransitionTime, Reason and Message. They are read and
// set by name, so that each kind does not write the same accessors again; a type without them
// panics, which its status tests show at once.
func Failures[C any, T ~string](old []C, types []T, failed map[T]string, now time.Time) []C {
	pending := make(map[T]string, len(failed))
	for t, msg := range failed {
		pending[t] = msg
	}
	var out []C
	for _, c := range old {
		v := reflect.ValueOf(&c).Elem()
		t := T(v.FieldByName("Type").String())
		if !contains(types, t) {
			out = append(out, c)
			continue
		}
		if m, ok := pending[t]; ok {
			v.FieldByName("Message").SetString(m)
			out = append(out, c)
			delete(pending, t)
		}
	}
	for _, t := range types {
		m, ok := pending[t]
		if !ok {
			continue
		}
		var c C
		v := reflect.ValueOf(&c).Elem()
		v.FieldByName("Type").SetString(string(t))
		v.FieldByName("Status").SetString(string(corev1.ConditionTrue))
		v.FieldByName("LastTransitionTime").Set(reflect.ValueOf(metav1.NewTime(now)))
		v.FieldByName("Reason").SetString(string(t))
		v.FieldByName("Message").SetString(m)
		out = append(out, c)
	}
	return out
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Outcome is what a replica workload's plan reports to its status: Stuck, when set, says why
// the update cannot go on (pods that cannot be updated in place while the kind allows no other
// way), the message of the kind's update failure condition.
type Outcome struct {
	Stuck string
}

// StuckOutcome is the Outcome of a plan whose stuck pods cannot be updated in place to revision,
// and why (the kind's InPlaceOnly setting).
func StuckOutcome(stuck []*corev1.Pod, revision, why string) Outcome {
	return Outcome{Stuck: Stuck(stuck, revision, why)}
}

// Stuck is the message of an update that cannot go on because pods cannot be updated in place
// to revision, and why (the kind's InPlaceOnly setting); empty when no pod is stuck.
func Stuck(pods []*corev1.Pod, revision, why string) string {
	if len(pods) == 0 {
		return ""
	}
	names := make([]string, len(pods))
	for i, pod := range pods {
		names[i] = pod.Name
	}
	return fmt.Sprintf("pods %s cannot be updated in place to revision %s, and %s", strings.Join(names, ", "), revision, why)
}

// Failure is a sync error that sets the failure condition Type while it lasts.
type Failure[T ~string] struct {
	Type T
	Err  error
}

// Fails returns what wraps a sync error as a Failure of type t.
func Fails[T ~string](t T) func(error) error {
	return func(err error) error { return Failure[T]{Type: t, Err: err} }
}

func (f Failure[T]) Error() string { return f.Err.Error() }
func (f Failure[T]) Unwrap() error { return f.Err }

// Conditions sets a workload's failure conditions, those of types (Failures): stuck, when set, is
// the message of stuckType (an update that cannot go on), and a Failure in syncErr sets its own
// type with its message, over stuck's.
func Conditions[C any, T ~string](old []C, types []T, stuckType T, stuck string, syncErr error, now time.Time) []C {
	failed := map[T]string{}
	if stuck != "" {
		failed[stuckType] = stuck
	}
	var f Failure[T]
	if errors.As(syncErr, &f) {
		failed[f.Type] = f.Error()
	}
	return Failures(old, types, failed, now)
}
