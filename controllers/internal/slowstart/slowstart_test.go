package slowstart

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestBatches(t *testing.T) {
	type tcase struct {
		n, limit int
		want     []int
	}
	tests := map[string]tcase{
		"nothing to create makes no batch":                        {n: 0, limit: 256, want: nil},
		"one pod is one batch of one":                             {n: 1, limit: 256, want: []int{1}},
		"batches double from one and the last takes the rest":     {n: 10, limit: 256, want: []int{1, 2, 4, 3}},
		"batches stop doubling at the limit":                      {n: 20, limit: 4, want: []int{1, 2, 4, 4, 4, 4, 1}},
		"a reconcile's share of 1000 pods reaches batches of 256": {n: 1000, limit: 256, want: []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 256, 233}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "batches", tt.want, Batches(tt.n, tt.limit))
	})
}

func TestStop(t *testing.T) {
	planned := &metav1.ObjectMeta{Name: "web", UID: "u1", Generation: 3}
	with := func(f func(*metav1.ObjectMeta)) *metav1.ObjectMeta {
		m := planned.DeepCopy()
		f(m)
		return m
	}
	type tcase struct {
		now  metav1.Object
		want string
	}
	tests := map[string]tcase{
		"creation goes on while the workload is as planned":          {now: planned.DeepCopy(), want: ""},
		"a spec change (a new generation) stops creation":            {now: with(func(m *metav1.ObjectMeta) { m.Generation = 4 }), want: "the StatefulSet's spec changed"},
		"a deletion timestamp stops creation":                        {now: with(func(m *metav1.ObjectMeta) { m.DeletionTimestamp = &metav1.Time{} }), want: "the StatefulSet is being deleted"},
		"a workload the cache no longer has stops creation":          {now: nil, want: "the StatefulSet is gone"},
		"a workload of the same name but another UID stops creation": {now: with(func(m *metav1.ObjectMeta) { m.UID = "u2" }), want: "the StatefulSet is gone"},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "reason", tt.want, Stop("StatefulSet", planned, tt.now))
	})
}

func TestRun(t *testing.T) {
	stopAfter := func(n int) func(*int) func(context.Context) (string, error) {
		return func(made *int) func(context.Context) (string, error) {
			return func(context.Context) (string, error) {
				if n > 0 && *made >= n {
					return "spec changed", nil
				}
				return "", nil
			}
		}
	}
	type tcase struct {
		want      int
		stop      func(*int) func(context.Context) (string, error)
		failAt    int // the batch starting at this item fails; -1 for none
		wantRes   Result
		wantMade  int
		wantError bool
	}
	tests := map[string]tcase{
		"a small want is created in full": {
			want: 10, stop: stopAfter(0), failAt: -1, wantRes: Result{Created: 10}, wantMade: 10,
		},
		"a huge want creates one reconcile's share and says more is left": {
			want: 100_000, stop: stopAfter(0), failAt: -1, wantRes: Result{Created: MaxPerReconcile, More: true}, wantMade: MaxPerReconcile,
		},
		"a stop seen after the third batch ends creation there": {
			want: 100_000, stop: stopAfter(7), failAt: -1, wantRes: Result{Created: 7, Stopped: "spec changed"}, wantMade: 7,
		},
		"a failed batch ends creation with its error": {
			want: 100_000, stop: stopAfter(0), failAt: 3, wantRes: Result{Created: 3}, wantMade: 3, wantError: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		made := 0
		res, err := Run(context.Background(), tt.want, tt.stop(&made), func(_ context.Context, from, size int) error {
			if from == tt.failAt {
				return errors.New("quota exceeded")
			}
			made += size
			return nil
		})
		testkit.Diff(t, "result, items made, error", []any{tt.wantRes, tt.wantMade, tt.wantError}, []any{res, made, err != nil})
	})
}

func TestRunStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	made := 0
	res, err := Run(ctx, 100, func(context.Context) (string, error) { return "", nil }, func(_ context.Context, _, size int) error {
		made += size
		cancel()
		return nil
	})
	if err != nil || made != 1 || res.Stopped == "" {
		t.Errorf("made %d, result %+v, error %v; want one item made and a stop reason", made, res, err)
	}
}

func TestRereadAsksStopOfTheWorkloadAsTheCacheHasIt(t *testing.T) {
	planned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1", Generation: 3}}
	with := func(f func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := planned.DeepCopy()
		f(cm)
		return cm
	}
	type tcase struct {
		cached *corev1.ConfigMap
		want   string
	}
	tests := map[string]tcase{
		"creation goes on while the cache shows the workload as planned": {cached: planned.DeepCopy(), want: ""},
		"a newer generation in the cache stops creation":                 {cached: with(func(cm *corev1.ConfigMap) { cm.Generation = 4 }), want: "the Widget's spec changed"},
		"a workload the cache no longer has stops creation":              {cached: nil, want: "the Widget is gone"},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		b := fake.NewClientBuilder()
		if tt.cached != nil {
			b = b.WithObjects(tt.cached)
		}
		got, err := Reread(b.Build(), "Widget", planned)(context.Background())
		testkit.Diff(t, "reason, error", []any{tt.want, nil}, []any{got, err})
	})
}
