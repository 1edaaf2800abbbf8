package podprobemarker

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/nodepodprobe"
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	ppmwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podprobemarker"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "podprobemarker",
		LogVerbosity: 4,
		// vk-0 is a serverless node: its pods are counted but not probed.
		Nodes: []*corev1.Node{builder.Node("node-0").Obj(), builder.Node("node-1").Obj(),
			builder.Node("vk-0").Label("type", appsv1alpha1.VirtualKubeletNodeType).Obj()},
		Simulator: harness.PodTiming(100*time.Millisecond, 200*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond),
		// The manager runs the PodProbeMarker and NodePodProbe controllers and the PodProbeMarker
		// webhook.
		Controllers: harness.Controllers(podprobemarker.Name, nodepodprobe.Name),
		Webhooks:    []setup.Webhooks{ppmwebhook.Handlers},
		Workers:     map[string]int{podprobemarker.Name: 2, nodepodprobe.Name: 2},
		Env:         &env,
	}))
}
