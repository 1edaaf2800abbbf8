package imagepull

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/imagelistpulljob"
	"github.com/kruise-addon/kruise-addon/controllers/imagepulljob"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/nodeimage"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	imagepulljobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/imagepulljob"
	nodeimagewebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/nodeimage"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

// Five simulated nodes: pool a holds node-0..2, pool b node-3 and node-4.
var poolOf = map[string]string{"node-0": "a", "node-1": "a", "node-2": "a", "node-3": "b", "node-4": "b"}

func TestMain(m *testing.M) {
	var nodes []*corev1.Node
	for i := 0; i < len(poolOf); i++ {
		name := fmt.Sprintf("node-%d", i)
		nodes = append(nodes, builder.Node(name).Label("pool", poolOf[name]).Obj())
	}
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "imagepull",
		Namespaces:   []string{imagepulljob.DaemonConfigNamespace},
		LogVerbosity: 2,
		Nodes:        nodes,
		Simulator:    []framework.SimOption{framework.WithStartDelay(100 * time.Millisecond), framework.WithReadyDelay(200 * time.Millisecond)},
		// The manager runs the three image controllers, NodeImages created as soon as a Node is
		// Ready, the ImagePullJob gate on, and only the ImagePullJob, ImageListPullJob and
		// NodeImage webhooks.
		Controllers: []manager.Component{
			{Name: nodeimage.Name, Setup: nodeimage.Setup(nodeimage.Options{})},
			{Name: imagepulljob.Name, Setup: imagepulljob.SetupWithManager},
			{Name: imagelistpulljob.Name, Setup: imagelistpulljob.SetupWithManager},
		},
		Webhooks: []setup.Webhooks{imagepulljobwebhook.Handlers, nodeimagewebhook.Handlers},
		Gates:    []featuregate.Feature{features.ImagePullJobGate},
		// One manager: it need not wait for a Lease.
		Manager: func(o *manager.Options) error {
			o.EnableLeaderElection = false
			return nil
		},
		Setup: func(ctx context.Context, s *harness.Shared) (func(), error) {
			env, sim = s.Env, s.Sim
			// The configurations hold only the three defaulting and three validating webhooks
			// served.
			if err := harness.WaitForServedWebhooks(ctx, env.Client, framework.Long, 3, 3); err != nil {
				return nil, fmt.Errorf("webhooks not patched: %w", err)
			}
			// A job whose selector matches no NodeImage completes at once with desired 0, so
			// no test may start before every node has its NodeImage.
			if err := waitForNodeImages(ctx, framework.Long); err != nil {
				return nil, fmt.Errorf("nodeimages not created: %w", err)
			}
			return nil, nil
		},
	}))
}

// waitForNodeImages waits until every simulated node has its NodeImage.
func waitForNodeImages(ctx context.Context, timeout time.Duration) error {
	return framework.PollUntil(ctx, timeout, func(ctx context.Context) error {
		for name := range poolOf {
			ni := &appsv1alpha1.NodeImage{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, ni); err != nil {
				return fmt.Errorf("nodeimage %s: %w", name, err)
			}
		}
		return nil
	})
}
