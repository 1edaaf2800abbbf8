package broadcastjob

import (
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/advancedcronjob"
	"github.com/kruise-addon/kruise-addon/controllers/broadcastjob"
	"github.com/kruise-addon/kruise-addon/controllers/ephemeraljob"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	acjwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/advancedcronjob"
	broadcastjobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/broadcastjob"
	ejobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/ephemeraljob"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// The suite's nodes: three plain ones and one tainted dedicated=gpu:NoSchedule.
const (
	taintKey     = "dedicated"
	taintValue   = "gpu"
	taintedNode  = "node-gpu"
	plainNodes   = 3
	allNodeCount = plainNodes + 1
)

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

func TestMain(m *testing.M) {
	nodes := []*corev1.Node{builder.Node(taintedNode).Taint(taintKey, taintValue, corev1.TaintEffectNoSchedule).Obj()}
	for i := range plainNodes {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Obj())
	}
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "broadcastjob",
		LogVerbosity: 4,
		Nodes:        nodes,
		Simulator:    harness.PodTiming(100*time.Millisecond, 200*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond),
		// The manager runs the BroadcastJob, AdvancedCronJob and EphemeralJob controllers and the
		// webhooks of the three kinds.
		Controllers: harness.Controllers(broadcastjob.Name, advancedcronjob.Name, ephemeraljob.Name),
		Webhooks:    []setup.Webhooks{broadcastjobwebhook.Handlers, acjwebhook.Handlers, ejobwebhook.Handlers},
		Env:         &env,
		Sim:         &sim,
	}))
}
