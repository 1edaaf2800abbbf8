package kubectlplugin

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	daemonsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/daemonset"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// nodeCount is how many simulated nodes run; an Advanced DaemonSet has one pod on each.
const nodeCount = 3

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	var nodes []*corev1.Node
	for i := range nodeCount {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Obj())
	}
	// kube-controller-manager runs Deployments and the other native kinds, for kubectl's own
	// wording.
	os.Exit(harness.Main(m, harness.Suite{
		Name:            "kubectlplugin",
		LogVerbosity:    2,
		Nodes:           nodes,
		Simulator:       harness.FastPods(),
		KubeControllers: "deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,garbage-collector-controller",
		// The manager runs the three workload controllers and their webhooks.
		Controllers: harness.Controllers(cloneset.Name, statefulset.Name, daemonset.Name, podreadiness.Name),
		Webhooks:    []setup.Webhooks{clonesetwebhook.Handlers, statefulsetwebhook.Handlers, daemonsetwebhook.Handlers, podwebhook.Handlers()},
		Env:         &env,
	}))
}
