package framework_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// Named timeouts. They bound waits for things that happen in milliseconds when all is well;
// they are long because the machines are shared, and reaching one is a failure.
const (
	startTimeout       = 2 * time.Minute
	processExitTimeout = framework.Medium
	scheduleTimeout    = framework.Medium
	statusTimeout      = framework.Medium
	deleteTimeout      = framework.Medium
	goroutineTimeout   = framework.Medium
)

// newNamespace creates a namespace for one test. It is not deleted: no namespace controller
// runs here, so a deleted namespace would only stay Terminating.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := builder.Namespace("").GenerateName("fw-").Obj()
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// startSimulator starts a simulator whose scheduler only takes pods of ns, and stops it and
// deletes its nodes when the test ends.
func startSimulator(t *testing.T, ns string, opts ...framework.SimOption) *framework.NodeSimulator {
	t.Helper()
	return startSimulatorOn(t, env, ns, opts...)
}

// startSimulatorOn is startSimulator reaching the apiserver through e's Config.
func startSimulatorOn(t *testing.T, e *framework.Env, ns string, opts ...framework.SimOption) *framework.NodeSimulator {
	t.Helper()
	ctx := klog.NewContext(context.Background(), testr.New(t))
	sim, err := framework.StartNodeSimulator(ctx, e, append([]framework.SimOption{framework.WithSchedulerNamespaces(ns)}, opts...)...)
	if err != nil {
		t.Fatalf("start node simulator: %v", err)
	}
	t.Cleanup(func() {
		if err := sim.DeleteNodes(context.Background()); err != nil {
			t.Errorf("delete simulated nodes: %v", err)
		}
		sim.Stop()
	})
	return sim
}

// nodeName makes a node name unique to the test's namespace; nodes are cluster-wide.
func nodeName(ns, name string) string { return ns + "-" + name }

func createPod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	if err := env.Client.Create(context.Background(), pod); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	return pod
}

func getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return env.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

// updatePod applies change to the latest pod, retrying on conflicts with the simulator.
func updatePod(t *testing.T, ns, name string, status bool, change func(*corev1.Pod)) {
	t.Helper()
	key := client.ObjectKey{Namespace: ns, Name: name}
	if status {
		framework.ChangeStatus(t, env.Client, key, change)
	} else {
		framework.Change(t, env.Client, key, change)
	}
}

// waitForPod polls the pod until check returns nil, and returns the pod it accepted.
func waitForPod(t *testing.T, ns, name string, timeout time.Duration, what string, check func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, timeout, fmt.Sprintf("pod %s: %s", name, what), check)
}

func isReady(pod *corev1.Pod) error {
	if framework.PodCondition(pod, corev1.PodReady) != corev1.ConditionTrue {
		return fmt.Errorf("phase %s, conditions %v", pod.Status.Phase, pod.Status.Conditions)
	}
	return nil
}

// proc is a live process found in /proc.
type proc struct {
	pid  int
	name string
}

func (p proc) String() string { return fmt.Sprintf("%s[%d]", p.name, p.pid) }

// processesUsing lists the live processes whose command line names dir. Zombies do not count:
// they have exited, and whether anything reaps them is up to the machine's init.
func processesUsing(t *testing.T, dir string) []proc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var found []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat is "pid (comm) state ...": the state follows the last ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X") {
			continue
		}
		found = append(found, proc{pid: pid, name: s[strings.Index(s, "(")+1 : strings.LastIndex(s, ")")]})
	}
	sort.Slice(found, func(i, j int) bool { return found[i].name < found[j].name })
	return found
}

func procNames(ps []proc) []string {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.name)
	}
	return names
}
