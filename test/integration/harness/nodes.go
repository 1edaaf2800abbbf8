package harness

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// StartNodesAndControllers starts simulated nodes, then kube-controller-manager and
// kube-scheduler, so that Deployments and DaemonSets get real, scheduled pods and an install's
// readiness wait is real. The nodes come first: the simulator writes their status once without
// retrying, and the controller manager would race it. stop stops the simulator (the control
// plane's own stop ends the controllers); it is set whenever the simulator started.
func StartNodesAndControllers(ctx context.Context, env *framework.Env, nodes ...*corev1.Node) (sim *framework.NodeSimulator, stop func(), err error) {
	sim, err = framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(), framework.WithNodes(nodes...))
	if err != nil {
		return nil, nil, fmt.Errorf("starting the node simulator: %w", err)
	}
	if err := env.StartKubeControllers(ctx); err != nil {
		return sim, sim.Stop, fmt.Errorf("starting kube-controller-manager and kube-scheduler: %w", err)
	}
	return sim, sim.Stop, nil
}

// KubeControllers starts kube-controller-manager once for a package, for the tests that need
// some of its controllers; the package declares one per set of controllers as a variable.
type KubeControllers struct {
	once sync.Once
	err  error
}

// Start starts kube-controller-manager with the controllers of list and no scheduler the first
// time it is called, and fails t, then and on every later call, if that start failed.
func (k *KubeControllers) Start(t testing.TB, env *framework.Env, list string) {
	t.Helper()
	k.once.Do(func() {
		k.err = env.StartKubeControllers(context.Background(), framework.WithoutKubeScheduler(), framework.WithControllers(list))
	})
	if k.err != nil {
		t.Fatalf("start kube-controller-manager's %s: %v", list, k.err)
	}
}
