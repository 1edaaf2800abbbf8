package advancedcronjob

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// wakeups asks for a reconcile of an AdvancedCronJob at a time of the injected clock. The
// workqueue's RequeueAfter waits on the real clock; a timer of the injected clock fires when
// a test steps a fake one, so the schedule follows whichever clock the manager was given.
type wakeups struct {
	clock  clock.Clock
	events chan event.GenericEvent

	mu     sync.Mutex
	timers map[types.NamespacedName]clock.Timer
	done   chan struct{}
}

func newWakeups(clk clock.Clock) *wakeups {
	return &wakeups{
		clock:  clk,
		events: make(chan event.GenericEvent, 64),
		timers: map[types.NamespacedName]clock.Timer{},
		done:   make(chan struct{}),
	}
}

// Start implements manager.Runnable: it stops every timer when the manager stops.
func (w *wakeups) Start(ctx context.Context) error {
	<-ctx.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, t := range w.timers {
		t.Stop()
		delete(w.timers, k)
	}
	close(w.done)
	return nil
}

// at replaces the pending wake-up of key with one after d.
func (w *wakeups) at(key types.NamespacedName, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.timers[key]; ok {
		t.Stop()
	}
	t := w.clock.NewTimer(d)
	w.timers[key] = t
	go func() {
		select {
		case <-t.C():
		case <-w.done:
			return
		}
		w.mu.Lock()
		if w.timers[key] == t {
			delete(w.timers, key)
		}
		w.mu.Unlock()
		obj := &appsv1alpha1.AdvancedCronJob{}
		obj.Namespace, obj.Name = key.Namespace, key.Name
		select {
		case w.events <- event.GenericEvent{Object: obj}:
		case <-w.done:
		}
	}()
}

// forget drops the wake-up of a deleted AdvancedCronJob.
func (w *wakeups) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.timers[key]; ok {
		t.Stop()
		delete(w.timers, key)
	}
}
