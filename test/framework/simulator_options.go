package framework

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// SimOption configures StartNodeSimulator.
type SimOption func(*simOptions)

// timing holds the simulated kubelet's delays.
type timing struct {
	// start is from the moment the kubelet sees a pod until its containers run.
	start time.Duration
	// ready is from a container's start until it reports ready, like a readiness probe's
	// initial delay.
	ready time.Duration
	// imageChange is from noticing a new image in the spec until the new container runs.
	imageChange time.Duration
	// termination, when not negative, is how long containers take to exit once the pod is
	// deleted; the pod goes at the end of its grace period or after this, whichever is first.
	termination time.Duration
}

type simOptions struct {
	clock      clock.WithDelayedExecution
	timing     timing
	nodes      []*corev1.Node
	schedule   bool
	namespaces []string
	workers    int
}

func defaultSimOptions() simOptions {
	return simOptions{
		clock: clock.RealClock{},
		// Short enough to keep suites fast, long enough that every state is observable.
		timing: timing{
			start:       100 * time.Millisecond,
			ready:       100 * time.Millisecond,
			imageChange: 500 * time.Millisecond,
			termination: -1,
		},
		schedule: true,
		workers:  4,
	}
}

// WithClock drives every delay and every timestamp the simulator writes from c, for example a
// k8s.io/utils/clock/testing.FakeClock that the test steps.
func WithClock(c clock.WithDelayedExecution) SimOption {
	return func(o *simOptions) { o.clock = c }
}

// WithStartDelay sets how long a pod stays Pending on a simulated node before its containers run.
func WithStartDelay(d time.Duration) SimOption {
	return func(o *simOptions) { o.timing.start = d }
}

// WithReadyDelay sets how long a running container takes to report ready.
func WithReadyDelay(d time.Duration) SimOption {
	return func(o *simOptions) { o.timing.ready = d }
}

// WithImageChangeDelay sets how long an in-place image change takes, from the kubelet noticing
// it to the new container running.
func WithImageChangeDelay(d time.Duration) SimOption {
	return func(o *simOptions) { o.timing.imageChange = d }
}

// WithTerminationDelay makes containers exit d after their pod is deleted, when that is shorter
// than the pod's grace period. Without it a deleted pod stays for its whole grace period.
func WithTerminationDelay(d time.Duration) SimOption {
	return func(o *simOptions) { o.timing.termination = d }
}

// WithNodes creates these nodes when the simulator starts; see AddNodes.
func WithNodes(nodes ...*corev1.Node) SimOption {
	return func(o *simOptions) { o.nodes = append(o.nodes, nodes...) }
}

// WithoutScheduler leaves unscheduled pods alone, for tests that bind pods themselves or run
// a real kube-scheduler.
func WithoutScheduler() SimOption {
	return func(o *simOptions) { o.schedule = false }
}

// WithSchedulerNamespaces limits the scheduler to pods in these namespaces, so that simulators
// of tests running side by side do not take each other's pods. The kubelet side is not
// limited: every pod bound to a simulated node is run.
func WithSchedulerNamespaces(namespaces ...string) SimOption {
	return func(o *simOptions) { o.namespaces = append(o.namespaces, namespaces...) }
}

// WithWorkers sets how many pods the simulated kubelet syncs at the same time, and how many
// bindings the scheduler writes at the same time.
func WithWorkers(n int) SimOption {
	return func(o *simOptions) {
		if n > 0 {
			o.workers = n
		}
	}
}
