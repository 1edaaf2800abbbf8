package daemonset

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"

	"github.com/kruise-addon/kruise-addon/controllers/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	daemonsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/daemonset"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// baseNodes is how many simulated nodes every test starts with.
const baseNodes = 4

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

func TestMain(m *testing.M) {
	var nodes []*corev1.Node
	for i := range baseNodes {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Obj())
	}
	// kube-scheduler places the daemon pods, and the garbage collector removes a deleted
	// DaemonSet's pods, as in a cluster.
	os.Exit(harness.Main(m, harness.Suite{
		Name:                  "daemonset",
		CacheMutationDetector: true,
		LogVerbosity:          4,
		Nodes:                 nodes,
		Simulator:             harness.FastPods(),
		KubeControllers:       "garbage-collector-controller",
		// The manager runs the DaemonSet controller and webhooks.
		// The pod readiness controller gives new pods their first InPlaceUpdateReady condition.
		Controllers: harness.Controllers(daemonset.Name, podreadiness.Name),
		Webhooks:    []setup.Webhooks{daemonsetwebhook.Handlers},
		Workers:     map[string]int{daemonset.Name: 3},
		// Pre-download is off by default (as in 1.8); the suite turns it on to test it. No
		// pull-job controller runs here, so the jobs are only created and deleted.
		Gates: []featuregate.Feature{features.PreDownloadImageForDaemonSetUpdate},
		Env:   &env,
		Sim:   &sim,
	}))
}

// baseNodeNames are the names of the nodes every test starts with, sorted.
func baseNodeNames() []string {
	var out []string
	for i := range baseNodes {
		out = append(out, fmt.Sprintf("node-%d", i))
	}
	return out
}
