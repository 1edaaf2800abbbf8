package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	corev1 "k8s.io/api/core/v1"
)

// Shared is what Main started for a package's tests.
type Shared struct {
	Env *framework.Env
	// Sim is the node simulator; nil when the Suite has no Nodes.
	Sim *framework.NodeSimulator
	// Manager is the in-process manager; nil when the Suite has no Manager.
	Manager *Manager
	// Log is the path of the file the manager and the controllers log to.
	Log string
}

// PodTiming is how fast the simulated kubelet acts: containers start this long after their pod
// is bound, turn ready ready later, take imageChange to come back with a new image (or after
// any stop), and end termination after their pod is deleted.
func PodTiming(start, ready, imageChange, termination time.Duration) []framework.SimOption {
	return []framework.SimOption{
		framework.WithStartDelay(start),
		framework.WithReadyDelay(ready),
		framework.WithImageChangeDelay(imageChange),
		framework.WithTerminationDelay(termination),
	}
}

// FastPods is the timing most suites run with.
func FastPods() []framework.SimOption {
	return PodTiming(100*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 100*time.Millisecond)
}

// Nodes are n simulated nodes, node-0 to node-<n-1>, with room for 500 pods each (64 CPUs,
// 256Gi), spread round robin over zones when zones are given.
func Nodes(n int, zones ...string) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		b := builder.Node(fmt.Sprintf("node-%d", i)).Capacity("64", "256Gi", 500)
		if len(zones) > 0 {
			b = b.Zone(zones[i%len(zones)])
		}
		out = append(out, b.Obj())
	}
	return out
}

// Controllers are kruise-manager's own controllers of those names (manager.Controllers), in that
// order, without their gates and default workers: a suite runs what it names whatever the gates.
// It panics on a name the manager does not run, a mistake in the suite's own table.
func Controllers(names ...string) []manager.Component {
	all := manager.Controllers()
	out := make([]manager.Component, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(all, func(c manager.Component) bool { return c.Name == name })
		if i < 0 {
			panic(fmt.Sprintf("harness.Controllers: kruise-manager runs no controller %q", name))
		}
		out = append(out, manager.Component{Name: name, Setup: all[i].Setup})
	}
	return out
}

// startShared starts the Suite's node simulator, kube controllers and manager into sh, in that
// order. stop stops what started, in reverse order, and is never nil.
func startShared(ctx context.Context, s Suite, sh *Shared) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	if len(s.Nodes) > 0 {
		opts := append(slices.Clone(s.Simulator), framework.WithNodes(s.Nodes...))
		if s.KubeControllers != "" {
			opts = append(opts, framework.WithoutScheduler())
		}
		if sh.Sim, err = framework.StartNodeSimulator(ctx, sh.Env, opts...); err != nil {
			return stop, fmt.Errorf("start node simulator: %w", err)
		}
		stops = append(stops, sh.Sim.Stop)
	}
	if s.KubeControllers != "" {
		if err := sh.Env.StartKubeControllers(ctx, framework.WithControllers(s.KubeControllers)); err != nil {
			return stop, fmt.Errorf("start kube-scheduler and kube-controller-manager: %w", err)
		}
	}
	if s.runsManager() {
		o, err := s.managerOptions(sh.Env.Dir)
		if err != nil {
			return stop, err
		}
		sh.Manager, err = Serve(ctx, sh.Env, "manager", o)
		if sh.Manager != nil {
			stops = append(stops, sh.Manager.Stop)
		}
		if err != nil {
			return stop, err
		}
	}
	return stop, nil
}

// runsManager reports whether the Suite asks for an in-process manager.
func (s Suite) runsManager() bool {
	return s.Manager != nil || s.Controllers != nil || s.Webhooks != nil || s.Workers != nil || s.Gates != nil
}

// managerOptions are LoopbackOptions in dir with the Suite's controllers, webhooks, workers and
// gates, then changed by its Manager function.
func (s Suite) managerOptions(dir string) (*manager.Options, error) {
	o, err := LoopbackOptions(dir, ManagerNamespace)
	if err != nil {
		return nil, err
	}
	// What the Suite leaves nil keeps NewOptions' default.
	if s.Controllers != nil {
		o.Controllers = s.Controllers
	}
	if s.Webhooks != nil {
		o.Webhooks = s.Webhooks
	}
	if s.Workers != nil {
		o.Workers = s.Workers
	}
	on := map[string]bool{}
	for _, g := range s.Gates {
		on[string(g)] = true
	}
	if err := o.Gates.SetFromMap(on); err != nil {
		return nil, fmt.Errorf("manager feature gates: %w", err)
	}
	if s.Manager != nil {
		if err := s.Manager(o); err != nil {
			return nil, fmt.Errorf("manager options: %w", err)
		}
	}
	return o, nil
}
