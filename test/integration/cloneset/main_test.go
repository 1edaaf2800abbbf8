package cloneset

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// managerNamespace is where the in-process managers keep their Lease and Secret.
const managerNamespace = "kruise-system"

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
	// primary is the manager every test relies on; the leader-election test starts a second.
	primary *runningManager
)

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
	logFile, err := os.Create(filepath.Join(env.Dir, "manager.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(2))))

	if err := env.Client.Create(ctx, builder.Namespace(managerNamespace).Label("control-plane", "openkruise").Obj()); err != nil {
		fmt.Fprintf(os.Stderr, "create %s: %v\n", managerNamespace, err)
		return 1
	}
	var nodes []*corev1.Node
	for i, zone := range []string{"zone-a", "zone-b", "zone-c", "zone-a", "zone-b", "zone-c"} {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Zone(zone).Capacity("64", "256Gi", 500).Obj())
	}
	sim, err = framework.StartNodeSimulator(ctx, env,
		framework.WithNodes(nodes...),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(300*time.Millisecond),
		framework.WithImageChangeDelay(300*time.Millisecond),
		framework.WithTerminationDelay(100*time.Millisecond),
	)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start node simulator: %v\n", err)
		return 1
	}
	defer sim.Stop()

	primary, err = startManager(ctx, "primary")
	if err != nil {
		fmt.Fprintf(os.Stderr, "start manager: %v\n", err)
		return 1
	}
	if err := registerWebhooks(ctx, primary.webhookPort); err != nil {
		fmt.Fprintf(os.Stderr, "register webhooks: %v\n", err)
		return 1
	}
	if err := primary.waitReady(ctx, 60*time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "manager not ready (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	if err := waitForCABundle(ctx, 60*time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "webhook caBundle not patched (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "manager log: %s\n", logFile.Name())
	}
	primary.stop()
	return code
}

// runningManager is one in-process kruise-manager.
type runningManager struct {
	name        string
	webhookPort int
	healthPort  int
	cancel      context.CancelFunc
	done        chan error
	stopOnce    sync.Once
}

// testOptions are the manager options the tests run with: the CloneSet controller and its
// webhooks, reached by URL on loopback, and quick leader election so a takeover is fast.
func testOptions(name string) (*manager.Options, error) {
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
	o.WebhookCertDir = filepath.Join(env.Dir, "certs-"+name)
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 4*time.Second, 3*time.Second, 500*time.Millisecond
	o.GracefulShutdown = 5 * time.Second
	// Two managers run in this one process; controller names are unique per process.
	o.SkipControllerNameValidation = true
	o.Controllers = []manager.Component{
		{Name: "cloneset", Setup: cloneset.SetupWithManager},
		{Name: "podreadiness", Setup: podreadiness.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{clonesetwebhook.Handlers, podwebhook.Handlers}
	o.Workers = map[string]int{"cloneset": 3, "podreadiness": 3}
	return o, nil
}

func startManager(ctx context.Context, name string) (*runningManager, error) {
	o, err := testOptions(name)
	if err != nil {
		return nil, err
	}
	hp, _ := strconv.Atoi(o.HealthProbeAddr[len("127.0.0.1:"):])
	ctx, cancel := context.WithCancel(ctx)
	rm := &runningManager{name: name, webhookPort: o.WebhookPort, healthPort: hp, cancel: cancel, done: make(chan error, 1)}
	go func() { rm.done <- manager.Run(ctrl.LoggerInto(ctx, ctrl.Log.WithName(name)), env.Config, o) }()
	return rm, nil
}

// waitReady waits for /readyz, which passes once the webhook server serves.
func (m *runningManager) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", m.healthPort)
	for {
		err := httpOK(ctx, url)
		if err == nil {
			return nil
		}
		select {
		case err := <-m.done:
			return fmt.Errorf("manager %s exited: %v", m.name, err)
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond) // polling interval of a wait, not synchronisation
	}
}

// stop cancels the manager and waits for it to return.
func (m *runningManager) stop() {
	m.stopOnce.Do(func() {
		m.cancel()
		select {
		case <-m.done:
		case <-time.After(30 * time.Second):
		}
	})
}

// registerWebhooks creates the two webhook configurations pointing at port on loopback, as the
// chart would with webhookConfiguration.host set. The manager patches the caBundle in.
func registerWebhooks(ctx context.Context, port int) error {
	m, v := configuration.Desired(configuration.Target{
		Namespace:         managerNamespace,
		Host:              "127.0.0.1",
		Port:              port,
		FailurePolicyPods: admissionregistrationv1.Ignore,
		FailurePolicy:     admissionregistrationv1.Fail,
	})
	if err := env.Client.Create(ctx, m); err != nil {
		return err
	}
	return env.Client.Create(ctx, v)
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
