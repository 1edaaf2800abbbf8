package podprobe

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// Defaults of Options.
const (
	// DefaultWriteInterval is the least time between two status writes: results that change
	// within it go out in one write.
	DefaultWriteInterval = time.Second
	// DefaultRefresh is how often an unchanged result is written again, so lastProbeTime shows
	// the probe still runs (1.8 does it every ten minutes).
	DefaultRefresh = 10 * time.Minute
)

// Options tune the controller.
type Options struct {
	// NodeName is the node whose NodePodProbe (of the same name) is served.
	NodeName string
	// WriteInterval is the least time between two status writes; 0 means DefaultWriteInterval.
	WriteInterval time.Duration
	// Refresh is how often an unchanged result is written again; 0 means DefaultRefresh.
	Refresh time.Duration
	// Clock is the controller's clock; nil means the real one.
	Clock clock.WithTicker
}

// Controller runs the probes of its node's NodePodProbe and writes their results.
type Controller struct {
	client  client.Client
	rt      *cri.Runtime
	prober  Prober
	opts    Options
	kick    chan struct{}
	mu      sync.Mutex
	workers map[probeKey]*worker
	results map[probeKey]result
	// base is the context workers run under; Start cancels it when the daemon stops.
	base   context.Context
	cancel context.CancelFunc
}

// New returns the controller; rt is the node's runtime, c the daemon's client.
func New(c client.Client, rt *cri.Runtime, o Options) *Controller {
	if o.WriteInterval <= 0 {
		o.WriteInterval = DefaultWriteInterval
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	base, cancel := context.WithCancel(context.Background())
	return &Controller{
		client: c, rt: rt, prober: Prober{Runtime: rt.Containers}, opts: o,
		kick: make(chan struct{}, 1), workers: map[probeKey]*worker{}, results: map[probeKey]result{},
		base: base, cancel: cancel,
	}
}

// SetupWithManager watches the node's NodePodProbe (the daemon's cache holds only that one)
// and adds the status writer to mgr.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == c.opts.NodeName })
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("nodepodprobe-daemon").
		For(&appsv1alpha1.NodePodProbe{}, builder.WithPredicates(mine, predicate.GenerationChangedPredicate{})).
		Complete(c); err != nil {
		return fmt.Errorf("set up nodepodprobe probes: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("add nodepodprobe status writer: %w", err)
	}
	return nil
}

// Reconcile starts a worker for every probe of the spec, updates workers whose probe changed
// and stops the others.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	npp := &appsv1alpha1.NodePodProbe{}
	if err := c.client.Get(ctx, req.NamespacedName, npp); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("get nodepodprobe: %w", err)
		}
		npp = nil
	}
	var want map[probeKey]*appsv1alpha1.ContainerProbeSpec
	if npp != nil && npp.DeletionTimestamp == nil {
		want = keysOf(npp.Spec)
	}
	log := ctrl.LoggerFrom(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, w := range c.workers {
		if _, ok := want[k]; !ok {
			w.stop()
			delete(c.workers, k)
			delete(c.results, k)
			log.V(2).Info("Stopped probe", "pod", klog.KRef(k.namespace, k.pod), "probe", k.probe)
		}
	}
	for k, spec := range want {
		if w, ok := c.workers[k]; ok {
			w.setSpec(spec)
			continue
		}
		w := newWorker(c, k, spec)
		c.workers[k] = w
		go w.run(klog.NewContext(c.base, log.WithValues("pod", klog.KRef(k.namespace, k.pod), "probe", k.probe)))
		log.V(2).Info("Started probe", "pod", klog.KRef(k.namespace, k.pod), "probe", k.probe)
	}
	c.wake()
	return ctrl.Result{}, nil
}

// record stores a worker's result; a changed state or message, or a result older than
// Refresh, wakes the status writer.
func (c *Controller) record(k probeKey, state appsv1alpha1.ProbeState, msg string) {
	now := metav1.NewTime(c.opts.Clock.Now())
	c.mu.Lock()
	if _, live := c.workers[k]; !live {
		c.mu.Unlock()
		return
	}
	prev, had := c.results[k]
	if had && prev.state == state && prev.msg == msg && now.Sub(prev.at.Time) < c.opts.Refresh {
		c.mu.Unlock()
		return
	}
	c.results[k] = result{state: state, msg: msg, at: now}
	c.mu.Unlock()
	c.wake()
}

func (c *Controller) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Start runs the status writer until ctx ends, then stops every worker. Each wake-up writes
// the latest results once, then waits WriteInterval, so a burst of results is one write.
func (c *Controller) Start(ctx context.Context) error {
	defer c.cancel()
	log := ctrl.LoggerFrom(ctx).WithValues("NodePodProbe", klog.KRef("", c.opts.NodeName))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.kick:
		}
		if err := c.writeStatus(ctx); err != nil {
			log.Error(err, "Writing probe results")
			c.wake()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.opts.Clock.After(c.opts.WriteInterval):
		}
	}
}

// writeStatus writes the latest results into the NodePodProbe status if they change it.
func (c *Controller) writeStatus(ctx context.Context) error {
	npp := &appsv1alpha1.NodePodProbe{}
	if err := c.client.Get(ctx, types.NamespacedName{Name: c.opts.NodeName}, npp); err != nil {
		return client.IgnoreNotFound(err)
	}
	c.mu.Lock()
	results := make(map[probeKey]result, len(c.results))
	for k, r := range c.results {
		results[k] = r
	}
	c.mu.Unlock()
	next := buildStatus(npp.Spec, npp.Status, results)
	if statusEqual(next, npp.Status) {
		return nil
	}
	npp.Status = next
	if err := c.client.Status().Update(ctx, npp); err != nil {
		return fmt.Errorf("update nodepodprobe status: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Wrote probe results", "NodePodProbe", klog.KObj(npp))
	return nil
}

// NeedLeaderElection is false: every node's daemon probes its own pods.
func (c *Controller) NeedLeaderElection() bool { return false }
