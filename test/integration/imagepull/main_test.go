package imagepull

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
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
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- manager.Run(ctrl.LoggerInto(mctx, ctrl.Log.WithName("manager")), env.Config, o) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
	}()
	if err := waitReady(ctx, o.HealthProbeAddr, done, startup); err != nil {
		keepLog = true
		fmt.Fprintf(os.Stderr, "manager not ready (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	if err := registerWebhooks(ctx, o.WebhookPort); err != nil {
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
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	o := manager.NewOptions()
	o.PodNamespace = managerNamespace
	o.MetricsAddr = "0"
	o.HealthProbeAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	o.WebhookPort = ports[0]
	o.WebhookHost = "127.0.0.1"
	o.WebhookBindAddress = "127.0.0.1"
	o.WebhookCertDir = filepath.Join(env.Dir, "certs")
	o.EnableLeaderElection = false
	o.GracefulShutdown = 5 * time.Second
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

// registerWebhooks creates both webhook configurations pointing at port on loopback, as the
// chart does with webhookConfiguration.host set; the manager patches in its CA and drops the
// webhooks it does not serve.
func registerWebhooks(ctx context.Context, port int) error {
	m, v := configuration.Desired(configuration.Target{Namespace: managerNamespace, Host: "127.0.0.1", Port: port})
	if err := env.Client.Create(ctx, m); err != nil {
		return err
	}
	return env.Client.Create(ctx, v)
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

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
