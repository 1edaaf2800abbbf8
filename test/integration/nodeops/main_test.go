package nodeops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/textlogger"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/advancedcronjob"
	"github.com/kruise-addon/kruise-addon/controllers/containerrecreaterequest"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	crrwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/containerrecreaterequest"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// managerNamespace is where the in-process manager keeps its Lease and Secret.
const managerNamespace = "kruise-system"

var (
	// env, sim and cronClock are set once in TestMain and only read afterwards (cronClock is
	// stepped by the AdvancedCronJob tests, which do not run in parallel).
	env       *framework.Env
	sim       *framework.NodeSimulator
	cronClock *clocktesting.FakeClock
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logFile, err := os.Create(filepath.Join(env.Dir, "manager.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(4))))

	if err := env.Client.Create(ctx, builder.Namespace(managerNamespace).Label("control-plane", "openkruise").Obj()); err != nil {
		fmt.Fprintf(os.Stderr, "create %s: %v\n", managerNamespace, err)
		return 1
	}
	sim, err = framework.StartNodeSimulator(ctx, env,
		framework.WithNodes(builder.Node("node-0").Obj(), builder.Node("node-1").Obj()),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(200*time.Millisecond),
		framework.WithTerminationDelay(100*time.Millisecond),
	)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start node simulator: %v\n", err)
		return 1
	}
	defer sim.Stop()

	cronClock = clocktesting.NewFakeClock(time.Now())
	o, err := testOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr := harness.Start(ctx, env.Config, "manager", o)
	defer mgr.Stop()
	if err := harness.RegisterWebhooks(ctx, env.Client, managerNamespace, o.WebhookPort); err != nil {
		fmt.Fprintf(os.Stderr, "register webhooks: %v\n", err)
		return 1
	}
	if err := mgr.WaitReady(ctx, startup); err != nil {
		fmt.Fprintf(os.Stderr, "manager not ready (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	if err := harness.WaitForCABundle(ctx, env.Client, startup); err != nil {
		fmt.Fprintf(os.Stderr, "webhook caBundle not patched (log: %s): %v\n", logFile.Name(), err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "manager log: %s\n", logFile.Name())
	}
	return code
}

// testOptions run the pod readiness, ContainerRecreateRequest and AdvancedCronJob controllers
// and the ContainerRecreateRequest webhook, reached by URL on loopback. Only the
// AdvancedCronJob controller gets the fake clock: the certificate rotator and the other
// controllers keep real time.
func testOptions() (*manager.Options, error) {
	o, err := harness.LoopbackOptions(env.Dir, managerNamespace)
	if err != nil {
		return nil, err
	}
	o.Controllers = []manager.Component{
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
		{Name: containerrecreaterequest.Name, Setup: containerrecreaterequest.SetupWithManager},
		{Name: advancedcronjob.Name, Setup: func(mgr ctrl.Manager, d setup.Deps) error {
			d.Clock = cronClock
			return advancedcronjob.SetupWithManager(mgr, d)
		}},
	}
	o.Webhooks = []setup.Webhooks{crrwebhook.Handlers}
	o.Workers = map[string]int{podreadiness.Name: 2, containerrecreaterequest.Name: 2, advancedcronjob.Name: 2}
	return o, nil
}

// runningPodWithGate creates a pod on node-0 carrying the KruisePodReady readiness gate and
// waits for it to be Ready with a container ID, as the kubelet would report it.
func runningPodWithGate(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := builder.Pod(name, ns).Node("node-0").ReadinessGate(kruisePodReady).TerminationGracePeriod(7).Obj()
	create(t, pod)
	var got *corev1.Pod
	eventually(t, settle, "pod "+name+" is Ready with a container ID", func(ctx context.Context) error {
		got = &corev1.Pod{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			return err
		}
		if condition(got, corev1.PodReady) != corev1.ConditionTrue {
			return fmt.Errorf("Ready is %q", condition(got, corev1.PodReady))
		}
		if st := containerStatus(got, "main"); st == nil || st.ContainerID == "" {
			return fmt.Errorf("no container ID yet")
		}
		return nil
	})
	return got
}
