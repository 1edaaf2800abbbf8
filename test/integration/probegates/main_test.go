package probegates

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/nodepodprobe"
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

// The suite's nodes: an ordinary one and a serverless one.
const (
	node        = "node-0"
	virtualNode = "vk-0"
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "probegates",
		LogVerbosity: 4,
		Nodes: []*corev1.Node{
			builder.Node(node).Obj(),
			builder.Node(virtualNode).Label("type", appsv1alpha1.VirtualKubeletNodeType).Obj(),
		},
		Simulator: harness.PodTiming(100*time.Millisecond, 200*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond),
		// The manager runs the PodProbeMarker and NodePodProbe controllers and every webhook it
		// serves, the pod webhook with its steps wired as in production.
		Controllers: harness.Controllers(podprobemarker.Name, nodepodprobe.Name),
		Gates:       []featuregate.Feature{features.EnhancedLivenessProbe, features.EnablePodProbeMarkerOnServerless},
		Env:         &env,
	}))
}
