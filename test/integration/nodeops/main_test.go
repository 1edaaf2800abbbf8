package nodeops

import (
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

var (
	// env, sim and cronClock are set once in TestMain and only read afterwards (cronClock is
	// stepped by the AdvancedCronJob tests, which do not run in parallel).
	env       *framework.Env
	sim       *framework.NodeSimulator
	cronClock *clocktesting.FakeClock
)

func TestMain(m *testing.M) {
	cronClock = clocktesting.NewFakeClock(time.Now())
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "nodeops",
		LogVerbosity: 4,
		Nodes:        []*corev1.Node{builder.Node("node-0").Obj(), builder.Node("node-1").Obj()},
		Simulator:    harness.PodTiming(100*time.Millisecond, 200*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond),
		// The manager runs the pod readiness, ContainerRecreateRequest and AdvancedCronJob
		// controllers and the ContainerRecreateRequest webhook. Only the AdvancedCronJob controller
		// gets the fake clock: the certificate rotator and the other controllers keep real time.
		Controllers: []manager.Component{
			{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
			{Name: containerrecreaterequest.Name, Setup: containerrecreaterequest.SetupWithManager},
			{Name: advancedcronjob.Name, Setup: func(mgr ctrl.Manager, d setup.Deps) error {
				d.Clock = cronClock
				return advancedcronjob.SetupWithManager(mgr, d)
			}},
		},
		Webhooks: []setup.Webhooks{crrwebhook.Handlers},
		Workers:  map[string]int{podreadiness.Name: 2, containerrecreaterequest.Name: 2, advancedcronjob.Name: 2},
		Env:      &env,
		Sim:      &sim,
	}))
}

// runningPodWithGate creates a pod on node-0 carrying the KruisePodReady readiness gate and
// waits for it to be Ready with a container ID, as the kubelet would report it.
func runningPodWithGate(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := builder.Pod(name, ns).Node("node-0").ReadinessGate(kruisePodReady).TerminationGracePeriod(7).Obj()
	framework.Create(t, env.Client, pod)
	return framework.WaitFor(t, env.Client, client.ObjectKeyFromObject(pod), framework.Medium, "pod "+name+" is Ready with a container ID", func(got *corev1.Pod) error {
		if framework.PodCondition(got, corev1.PodReady) != corev1.ConditionTrue {
			return fmt.Errorf("Ready is %q", framework.PodCondition(got, corev1.PodReady))
		}
		if st := framework.ContainerStatus(got, "main"); st == nil || st.ContainerID == "" {
			return fmt.Errorf("no container ID yet")
		}
		return nil
	})
}
