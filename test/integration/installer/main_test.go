package installer

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// env and sim are the package's control plane and nodes; set once in TestMain, then only read.
var (
	env *framework.Env
	sim *framework.NodeSimulator
)

// Zones of the simulated nodes; two nodes each. c2 runs docker (cri-dockerd).
const zoneA, zoneB, zoneC = "zone-a", "zone-b", "zone-c"

func testNodes() []*corev1.Node {
	return []*corev1.Node{
		builder.Node("a1").Zone(zoneA).Obj(), builder.Node("a2").Zone(zoneA).Obj(),
		builder.Node("b1").Zone(zoneB).Obj(), builder.Node("b2").Zone(zoneB).Obj(),
		builder.Node("c1").Zone(zoneC).Obj(), builder.Node("c2").Zone(zoneC).Runtime("docker://24.0.7").Obj(),
	}
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = framework.Start(framework.WithSchemeAdder(apis.AddToScheme))
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err = framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(), framework.WithNodes(testNodes()...))
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the node simulator: %v\n", err)
		return 1
	}
	defer sim.Stop()
	// After the nodes: the simulator writes their status once without retrying, and the
	// controller manager would race it.
	if err := env.StartKubeControllers(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "starting kube-controller-manager and kube-scheduler: %v\n", err)
		return 1
	}
	return m.Run()
}
