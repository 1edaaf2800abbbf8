package installer

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is the package's control plane; set once in TestMain, then only read. The suite's nodes
// are simulated, and no test needs the simulator itself.
var env *framework.Env

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
	os.Exit(harness.Main(m, harness.Suite{
		Name: "installer",
		// Deployments and DaemonSets get real, scheduled pods, so an install's readiness wait is real.
		Nodes:           testNodes(),
		KubeControllers: framework.AllKubeControllers,
		Env:             &env,
	}))
}
