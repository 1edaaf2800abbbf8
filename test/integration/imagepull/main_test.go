package imagepull

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/imagelistpulljob"
	"github.com/kruise-addon/kruise-addon/controllers/imagepulljob"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/nodeimage"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	imagepulljobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/imagepulljob"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// managerNamespace is where the in-process manager keeps its Lease and Secret.
const managerNamespace = "kruise-system"

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

// Five simulated nodes: pool a holds node-0..2, pool b node-3 and node-4.
var poolOf = map[string]string{"node-0": "a", "node-1": "a", "node-2": "a", "node-3": "b", "node-4": "b"}

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
	ctx := context.Background()
	// The log lives outside env.Dir, which Stop removes, and is kept only when a test fails.
	logFile, err := os.CreateTemp("", "imagepull-manager-*.log")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()
	keepLog := false
	defer func() {
		if !keepLog {
			_ = os.Remove(logFile.Name())
		}
	}()
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(2))))

	for _, ns := range []*corev1.Namespace{
		builder.Namespace(managerNamespace).Label("control-plane", "openkruise").Obj(),
		builder.Namespace(imagepulljob.DaemonConfigNamespace).Obj(),
	} {
		if err := env.Client.Create(ctx, ns); err != nil {
			fmt.Fprintf(os.Stderr, "create %s: %v\n", ns.Name, err)
			return 1
		}
	}
	var nodes []*corev1.Node
	for i := 0; i < len(poolOf); i++ {
		name := fmt.Sprintf("node-%d", i)
		nodes = append(nodes, builder.Node(name).Label("pool", poolOf[name]).Obj())
	}
	sim, err = framework.StartNodeSimulator(ctx, env, framework.WithNodes(nodes...),
		framework.WithStartDelay(100*time.Millisecond), framework.WithReadyDelay(200*time.Millisecond))
	if err != nil {
		fmt.Fprintf(os.Stderr, "start node simulator: %v\n", err)
		return 1
	}
	defer sim.Stop()

	o, err := testOptions()
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager options: %v\n", err)
		return 1
	}
	mgr := harness.Start(ctx, env.Config, "manager", o)
	defer mgr.Stop()
	if err := mgr.WaitReady(ctx, startup); err != nil {
		keepLog = true
		fmt.Fprintf(os.Stderr, "manager not ready (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	if err := harness.RegisterWebhooks(ctx, env.Client, managerNamespace, o.WebhookPort); err != nil {
		keepLog = true
		fmt.Fprintf(os.Stderr, "register webhooks: %v\n", err)
		return 1
	}
	if err := waitForServedWebhooks(ctx, startup); err != nil {
		keepLog = true
		fmt.Fprintf(os.Stderr, "webhooks not patched (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		keepLog = true
		fmt.Fprintf(os.Stderr, "manager log: %s\n", logFile.Name())
	}
	return code
}

// testOptions run the three image controllers, NodeImages created as soon as a Node is Ready,
// the ImagePullJob gate on, and only the ImagePullJob and ImageListPullJob webhooks.
func testOptions() (*manager.Options, error) {
	o, err := harness.LoopbackOptions(env.Dir, managerNamespace)
	if err != nil {
		return nil, err
	}
	o.EnableLeaderElection = false
	if err := o.Gates.SetFromMap(map[string]bool{string(features.ImagePullJobGate): true}); err != nil {
		return nil, err
	}
	o.Controllers = []manager.Component{
		{Name: nodeimage.Name, Setup: nodeimage.Setup(nodeimage.Options{})},
		{Name: imagepulljob.Name, Setup: imagepulljob.SetupWithManager},
		{Name: imagelistpulljob.Name, Setup: imagelistpulljob.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{imagepulljobwebhook.Handlers}
	return o, nil
}

// waitForServedWebhooks waits until the configurations hold only the two served webhooks, with
// the CA.
func waitForServedWebhooks(ctx context.Context, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.MutatingName}, m); err != nil {
			return false, nil
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.ValidatingName}, v); err != nil {
			return false, nil
		}
		if len(m.Webhooks) != 0 || len(v.Webhooks) != 2 {
			return false, nil
		}
		for _, w := range v.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
}
