package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Named timeouts for the suites' waits. Each bounds a wait for something that takes
// milliseconds when all is well; they are long because the machines running the suites are
// shared and loaded, so reaching one is a failure, never a measurement.
const (
	// Short bounds a wait that no controller takes part in: a read after a write, an
	// apiserver answering, a watch delivering one event.
	Short = 10 * time.Second
	// Medium bounds a wait for one reaction of a controller, a webhook or the node simulator
	// to one change: a pod going Ready, a status written, an object created or deleted.
	Medium = 30 * time.Second
	// Long bounds a wait for a component to start or to take over: a manager serving its
	// webhooks, a leader election, a CA bundle patched in after a restart.
	Long = 60 * time.Second
	// Poll is how often Eventually and Consistently look again.
	Poll = 100 * time.Millisecond
	// lookTimeout bounds one look of Eventually, so that a hung call leaves time for more looks
	// and the last look's error is its own, not the wait's deadline.
	lookTimeout = 10 * time.Second
)

// Eventually calls cond every Poll until it returns nil, and fails t with what and cond's
// last error when timeout passes first. Each call gets its own context, bounded by the
// shorter of timeout and ten seconds.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	if err := PollUntil(context.Background(), timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// PollUntil calls cond every Poll until it returns nil, and returns an error naming timeout
// and wrapping cond's last error when timeout passes or ctx ends first. It is Eventually for
// code that has no testing.TB, such as a TestMain.
func PollUntil(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	look := min(timeout, lookTimeout)
	for {
		lctx, lcancel := context.WithTimeout(context.WithoutCancel(ctx), look)
		err := cond(lctx)
		lcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %v: %w", timeout, err)
		case <-tick.C:
		}
	}
}

// Consistently calls cond every Poll for the whole of d, and fails t with what and the error
// at cond's first error.
func Consistently(t testing.TB, d time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		err := cond(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
			return
		}
		if !time.Now().Before(deadline) {
			return
		}
		<-tick.C
	}
}

// NewNamespace creates a namespace named prefix followed by a generated suffix, with labels,
// and deletes it when the test ends. Without a namespace controller the deleted namespace
// stays Terminating; its name is never reused.
func NewNamespace(t testing.TB, c client.Client, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Labels: labels}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace %q...: %v", prefix, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

// Create creates obj and fails t if the apiserver refuses it. The object stays when the test
// ends.
func Create(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// CreateForTest creates obj like Create and deletes it when the test ends, for objects no
// namespace deletion would remove (no namespace controller runs in the test bed).
func CreateForTest(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	Create(t, c, obj)
	t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
}

// Want is a condition for Eventually written as a bool: nil when ok, otherwise an error
// saying why not.
func Want(ok bool, why string) error {
	if ok {
		return nil
	}
	return errors.New(why)
}

// Sampler calls a look function over and over from a goroutine of its own, to catch the worst
// a rollout ever shows, until Stop.
type Sampler struct {
	stop, done chan struct{}
}

// Sample calls look at once and then every interval until Stop is called. What look writes may
// be read without a lock once Stop has returned.
func Sample(interval time.Duration, look func()) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			look()
			select {
			case <-s.stop:
				return
			case <-time.After(interval):
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns once the last look has returned.
func (s *Sampler) Stop() {
	close(s.stop)
	<-s.done
}

// WantRefused fails t unless err is a refusal whose message contains each of wants: the field
// paths and the webhook a test expects to be named.
func WantRefused(t testing.TB, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want a refusal naming %q", wants)
		return
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("refusal %q does not name %q", err, w)
			return
		}
	}
}

// CreateRefused creates obj and fails t unless the apiserver refuses it naming each of wants.
func CreateRefused(t testing.TB, c client.Client, obj client.Object, wants ...string) {
	t.Helper()
	WantRefused(t, c.Create(context.Background(), obj), wants...)
}
