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

	mu      sync.Mutex
	pending map[types.NamespacedName]*wakeup
	done    chan struct{}
}

// wakeup is one pending timer; closing cancel ends its goroutine.
type wakeup struct {
	timer  clock.Timer
	cancel chan struct{}
}

func newWakeups(clk clock.Clock) *wakeups {
	return &wakeups{
		clock:   clk,
		events:  make(chan event.GenericEvent, 64),
		pending: map[types.NamespacedName]*wakeup{},
		done:    make(chan struct{}),
	}
}

// Start implements manager.Runnable: it cancels every timer when the manager stops.
func (w *wakeups) Start(ctx context.Context) error {
	<-ctx.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.pending {
		w.cancelLocked(k)
	}
	close(w.done)
	return nil
}

// at replaces the pending wake-up of key with one after d.
func (w *wakeups) at(key types.NamespacedName, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancelLocked(key)
	wu := &wakeup{timer: w.clock.NewTimer(d), cancel: make(chan struct{})}
	w.pending[key] = wu
	go func() {
		select {
		case <-wu.timer.C():
		case <-wu.cancel:
			return
		}
		w.mu.Lock()
		if w.pending[key] == wu {
			delete(w.pending, key)
		}
		w.mu.Unlock()
		obj := &appsv1alpha1.AdvancedCronJob{}
		obj.Namespace, obj.Name = key.Namespace, key.Name
		select {
		case w.events <- event.GenericEvent{Object: obj}:
		case <-wu.cancel:
		case <-w.done:
		}
	}()
}

// forget drops the wake-up of key (deleted or paused).
func (w *wakeups) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancelLocked(key)
}

func (w *wakeups) cancelLocked(key types.NamespacedName) {
	if wu, ok := w.pending[key]; ok {
		wu.timer.Stop()
		close(wu.cancel)
		delete(w.pending, key)
	}
}
