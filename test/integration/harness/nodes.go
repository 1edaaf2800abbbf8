package harness

import (
	"context"
	"fmt"

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
