package advancedcronjob

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestWakeups(t *testing.T) {
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	type tcase struct {
		set  func(w *wakeups)
		step time.Duration
		want []string
		// wantWaiting: a timer is still pending on the clock after the step.
		wantWaiting bool
	}
	tests := map[string]tcase{
		"a wake-up fires once its time passes on the clock": {
			set:  func(w *wakeups) { w.at(a, time.Minute) },
			step: time.Minute,
			want: []string{"a"},
		},
		"a wake-up not yet due does not fire": {
			set:         func(w *wakeups) { w.at(a, time.Minute) },
			step:        59 * time.Second,
			wantWaiting: true,
		},
		"a new wake-up of the same key replaces the old one": {
			set:         func(w *wakeups) { w.at(a, time.Second); w.at(a, time.Hour) },
			step:        time.Minute,
			wantWaiting: true,
		},
		"a forgotten wake-up never fires; others still do": {
			set:  func(w *wakeups) { w.at(a, time.Second); w.at(b, time.Second); w.forget(a) },
			step: time.Minute,
			want: []string{"b"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		w := newWakeups(clk)
		tt.set(w)
		clk.Step(tt.step)
		var got []string
		// Fired timers deliver from their goroutines; the remaining pending timers are
		// what did not fire, so wait until every fired one has delivered.
		want := len(tt.want)
		deadline := time.After(10 * time.Second)
		for len(got) < want {
			select {
			case e := <-w.events:
				got = append(got, e.Object.GetName())
			case <-deadline:
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		}
		select {
		case e := <-w.events:
			got = append(got, e.Object.GetName())
		default:
		}
		testkit.Diff(t, "woken", tt.want, got)
		// The fake clock fires due timers inside Step, so what still waits did not fire.
		if got := clk.HasWaiters(); got != tt.wantWaiting {
			t.Errorf("a timer still waits: %t, want %t", got, tt.wantWaiting)
		}
	})
}
