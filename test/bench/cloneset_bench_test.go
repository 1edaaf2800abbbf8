package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// BenchmarkCloneSet1000 runs kruise-manager as its own process and measures a CloneSet going from
// 0 to 1000 Ready pods, then an in-place image update of all of them with maxUnavailable 20%.
// Baseline, in the same run: one client with no rate limit creating 1000 bare pods and the
// simulated nodes making them Ready. It also prints the node simulator's own pace, measured
// before the manager starts (simulatorAlone), against the scale-up's, and the manager's peak
// RSS. BENCH_REPLICAS changes the size.
func BenchmarkCloneSet1000(b *testing.B) {
	n := envInt("BENCH_REPLICAS", 1000)
	var simAlone float64 // pods per second, measured before the manager starts
	runStaged(b, stageSpec{namespace: "bench-cloneset", nodes: benchPoolNodes("bench-cs", n), baseline: n,
		sim: []framework.SimOption{framework.WithImageChangeDelay(0)},
		beforeManager: func(ctx context.Context, st *stage) (err error) {
			simAlone, err = simulatorAlone(ctx, st, n)
			return err
		}}, func(ctx context.Context, st *stage) ([]string, error) {
		mgr := st.mgr
		idle := mgr.rssParts()
		idleHeap := mgr.observe.heapNow("idle")

		var explained []string
		cs := kinds.CloneSet("bench", st.ns).Replicas(int32(n)).Image("registry.example.com/bench:1").
			UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).MaxUnavailable(intstr.FromString("20%")).Obj()
		start := time.Now()
		endScaleUp := mgr.observe.observe(ctx, "cloneset-scaleup")
		// Deleted explicitly: no namespace controller runs here, and the installer benchmark that
		// follows refuses to uninstall while any CloneSet remains.
		if err := st.create(ctx, cs); err != nil {
			return nil, err
		}
		if err := waitCloneSet(ctx, cs, func(st appsv1alpha1.CloneSetStatus) bool { return int(st.ReadyReplicas) == n }); err != nil {
			return nil, fmt.Errorf("scale up: %w (manager log %s)", err, mgr.log)
		}
		scaleUp := time.Since(start)
		scaleUpReport := endScaleUp()
		explained = append(explained, scaleUpReport.lines...)

		start = time.Now()
		endUpdate := mgr.observe.observe(ctx, "cloneset-inplace")
		if err := updateObject(ctx, client.ObjectKeyFromObject(cs), func(cur *appsv1alpha1.CloneSet) {
			cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/bench:2"
		}); err != nil {
			return nil, err
		}
		if err := waitCloneSet(ctx, cs, func(st appsv1alpha1.CloneSetStatus) bool {
			return int(st.UpdatedReadyReplicas) == n && int(st.UpdatedReplicas) == n && st.UpdateRevision == st.CurrentRevision
		}); err != nil {
			return nil, fmt.Errorf("in-place update: %w (manager log %s)", err, mgr.log)
		}
		update := time.Since(start)
		updateReport := endUpdate()
		explained = append(explained, updateReport.lines...)
		end := mgr.rssParts()
		base := st.base

		return append([]string{
			st.baselineLine(n),
			fmt.Sprintf("CloneSet 0 -> %d Ready: %s", n, st.againstBase(scaleUp)),
			// A scale-up that came close to the simulator's own pace would measure the simulator,
			// not the manager.
			simulatorLine(simAlone, n, scaleUp),
			fmt.Sprintf("CloneSet in-place update of %d pods, maxUnavailable 20%%: %s", n, st.againstBase(update)),
			inPlaceWritesPerPod(n, updateReport.writes),
			fmt.Sprintf("cost per pod at %d pods: scale-up %.1f ms, in-place update %.1f ms (baseline %.1f ms); compare with BENCH_REPLICAS=5000 (make bench-large)",
				n, 1000*scaleUp.Seconds()/float64(n), 1000*update.Seconds()/float64(n), 1000*base.Seconds()/float64(n)),
			cpuPerPod(n, st.baseCPU, scaleUpReport.cpu, updateReport.cpu, errors.Join(scaleUpReport.cpuErr, updateReport.cpuErr)),
			st.rssLine(),
			fmt.Sprintf("kruise-manager RSS idle, before the CloneSet: %s; at the end: %s", idle, end),
			"kruise-manager log: " + mgr.saveLog("cloneset-manager"),
			"where the time went:",
			idleHeap,
		}, explained...), nil
	})
}

// inPlaceFloor is the fewest pod writes an in-place image update of one pod takes under the
// wire contract, by who writes them: the workload's spec patch (images, revision label, in-place
// state), its InPlaceUpdateReady condition False and then True, and the kubelet's status writes
// (Ready False once the gate is False, the container restarted on its new image, Ready True
// once the gate is True).
var inPlaceFloor = []struct {
	what  string
	count float64
}{{"spec patch", 1}, {"InPlaceUpdateReady False and True", 2}, {"kubelet status", 3}}

// inPlaceWritesPerPod says how many pod writes the apiserver took per pod in the in-place
// phase, by writer, against inPlaceFloor. writes is the phase's count by resource and verb
// (apiserverWrites): pods PATCH is the workload's spec patch, pods/status PATCH its condition
// writes, and pods/status PUT the node simulator's status writes.
func inPlaceWritesPerPod(n int, writes map[string]float64) string {
	if writes == nil {
		return "writes per pod in the in-place update: unreadable"
	}
	per := func(keys ...string) float64 {
		var sum float64
		for _, k := range keys {
			sum += writes[k]
		}
		return sum / float64(n)
	}
	got := []float64{per("pods PATCH", "pods PUT"), per("pods/status PATCH"), per("pods/status PUT")}
	var total, floor float64
	var parts, floorParts []string
	for i, f := range inPlaceFloor {
		total += got[i]
		floor += f.count
		parts = append(parts, fmt.Sprintf("%s %.2f", f.what, got[i]))
		floorParts = append(floorParts, fmt.Sprintf("%s %.0f", f.what, f.count))
	}
	return fmt.Sprintf("writes per pod in the in-place update: %.2f (%s); floor %.0f (%s)",
		total, strings.Join(parts, ", "), floor, strings.Join(floorParts, ", "))
}

// benchPoolNodes are enough simulated nodes named <prefix>-<i> for n pods, 200 pods a node,
// with one to spare.
func benchPoolNodes(prefix string, n int) []*corev1.Node {
	var nodes []*corev1.Node
	for i := 0; i < (n+99)/100+1; i++ {
		nodes = append(nodes, builder.Node(fmt.Sprintf("%s-%d", prefix, i)).Capacity("256", "1Ti", 200).Obj())
	}
	return nodes
}

// cpuPerPod compares the CPU time the scale-up and the in-place update cost per pod, all
// processes together, with the baseline's: on a machine where every phase is bound by CPU, this
// is the ratio the wall time follows, with less of the noise of other work on the machine.
func cpuPerPod(n int, base, scaleUp, update map[string]time.Duration, err error) string {
	if err != nil {
		return fmt.Sprintf("CPU time per pod: unreadable: %v", err)
	}
	sum := func(m map[string]time.Duration) float64 {
		var t time.Duration
		for _, d := range m {
			t += d
		}
		return 1000 * t.Seconds() / float64(n)
	}
	b, su, u := sum(base), sum(scaleUp), sum(update)
	api := func(m map[string]time.Duration) float64 { return 1000 * m["kube-apiserver"].Seconds() / float64(n) }
	return fmt.Sprintf("CPU time per pod, apiserver, etcd, node simulator and manager together: baseline %.1f ms, scale-up %.1f ms (%.1fx), in-place update %.1f ms (%.1fx); the apiserver alone: %.1f ms, %.1f ms (%.1fx), %.1f ms (%.1fx)",
		b, su, su/b, u, u/b, api(base), api(scaleUp), api(scaleUp)/api(base), api(update), api(update)/api(base))
}

// benchQPS is the manager's client rate limit in the benchmark, high enough that the figures
// show the controller's own cost rather than the default limit of 30.
const benchQPS = 1000

// rawPodsToReady is the baseline: n bare pods created one after another by one client without a
// rate limit, until the simulated nodes report them all Ready. It returns the time that took and
// the CPU time the processes of benchPIDs used meanwhile. It waits on a watch, not by listing
// the pods again and again, so that the waiting costs the apiserver no more than a
// controller's informer would.
func rawPodsToReady(ctx context.Context, ns string, n int) (time.Duration, map[string]time.Duration, error) {
	cs, err := unlimitedClientset()
	if err != nil {
		return 0, nil, err
	}
	const sel = "app=raw"
	ready := watchPods(ctx, cs, ns, sel, n, 10*time.Minute, podReady)
	if err := ready.waitSynced(); err != nil {
		return 0, nil, fmt.Errorf("watch the baseline's pods: %w", err)
	}

	meter := newCPUMeter(benchPIDs(0))
	start := time.Now()
	for i := 0; i < n; i++ {
		pod := builder.Pod(fmt.Sprintf("raw-%d", i), ns).Label("app", "raw").Obj()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return 0, nil, err
		}
	}
	if err := <-ready.done; err != nil {
		return 0, nil, fmt.Errorf("wait for the baseline's pods to be Ready: %w", err)
	}
	elapsed := time.Since(start)
	used, err := meter.used()
	if err != nil {
		return 0, nil, err
	}
	if err := deletePods(ctx, cs, ns, sel); err != nil {
		return 0, nil, err
	}
	return elapsed, used, nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitCloneSet waits until cs's controller has seen its latest generation and done says yes
// of its status.
func waitCloneSet(ctx context.Context, cs *appsv1alpha1.CloneSet, done func(appsv1alpha1.CloneSetStatus) bool) error {
	return waitFor(ctx, client.ObjectKeyFromObject(cs), 200*time.Millisecond, 15*time.Minute, func(cur *appsv1alpha1.CloneSet) (any, bool) {
		return cur.Status, cur.Status.ObservedGeneration == cur.Generation && done(cur.Status)
	})
}

// managerProcess is kruise-manager run against the bench apiserver, with the webhook
// configurations made for it; they go with it, so that later benchmarks (the installer's)
// install into an apiserver with no webhook pointing at a dead server.
type managerProcess struct {
	*benchProcess
	webhooks []client.Object
	// observe explains a phase of a scenario: profiles and controller counters.
	observe *observer
	// env is the environment it runs with: the chart's (chartManagerEnv).
	env []string
}

// startManagerProcess starts kruise-manager; extraArgs come last, so they override the defaults
// (e.g. --metrics-addr).
func startManagerProcess(ctx context.Context, dir string, extraArgs ...string) (*managerProcess, error) {
	return startManagerProcessAs(ctx, dir, "", extraArgs...)
}

// startManagerProcessAs is startManagerProcess in the pod named podName (its POD_NAME, the
// Lease identity), as the kubelet restarts a container in the same pod; "" is a new pod.
func startManagerProcessAs(ctx context.Context, dir, podName string, extraArgs ...string) (*managerProcess, error) {
	bin, ports, err := binaryAndPorts(ctx, "github.com/kruise-addon/kruise-addon/cmd/kruise-manager", 4)
	if err != nil {
		return nil, err
	}
	const ns = "kruise-system"
	if err := env.Client.Create(ctx, builder.Namespace(ns).Label("control-plane", "openkruise").Obj()); err != nil && !strings.Contains(err.Error(), "already exists") {
		return nil, err
	}
	m, v := configuration.Desired(configuration.Target{Namespace: ns, Host: "127.0.0.1", Port: ports[0],
		FailurePolicyPods: admissionregistrationv1.Ignore, FailurePolicy: admissionregistrationv1.Fail})
	for _, obj := range []client.Object{m, v} {
		_ = env.Client.Delete(ctx, obj)
		if err := env.Client.Create(ctx, obj); err != nil {
			return nil, err
		}
	}
	health := "127.0.0.1:" + strconv.Itoa(ports[1])
	metrics := "127.0.0.1:" + strconv.Itoa(ports[2])
	pprofAddr := "127.0.0.1:" + strconv.Itoa(ports[3])
	obs, err := newObserver(metrics, pprofAddr)
	if err != nil {
		return nil, err
	}
	menv, err := chartManagerEnv(ctx, ns)
	if err != nil {
		return nil, err
	}
	if podName != "" {
		menv = setEnv(menv, "POD_NAME="+podName)
	}
	p, err := startProcess(bin, append([]string{"--kubeconfig", env.Kubeconfig, "--enable-leader-election=false",
		"--metrics-addr=" + metrics, "--pprof-addr=" + pprofAddr, "--health-probe-addr=" + health,
		"--webhook-host=127.0.0.1", "--webhook-port=" + strconv.Itoa(ports[0]), "--webhook-cert-dir=" + filepath.Join(dir, "certs"),
		fmt.Sprintf("--rest-config-qps=%d", benchQPS), fmt.Sprintf("--rest-config-burst=%d", 2*benchQPS), "-v=1"}, extraArgs...),
		menv, filepath.Join(dir, "manager.log"))
	if err != nil {
		return nil, err
	}
	obs.procs = benchPIDs(p.cmd.Process.Pid)
	mp := &managerProcess{benchProcess: p, webhooks: []client.Object{m, v}, observe: obs, env: menv}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", health, time.Second)
		if err != nil {
			return false, nil
		}
		conn.Close()
		return true, nil
	})
	if err == nil {
		// Both configurations must carry the new CA: the manager patches them one after the
		// other, and a CloneSet create goes through both.
		err = harness.WaitForCABundle(ctx, env.Client, 2*time.Minute)
	}
	if err != nil {
		mp.stop()
		return nil, fmt.Errorf("kruise-manager not ready (log %s): %w", p.log, err)
	}
	return mp, nil
}

func (m *managerProcess) stop() {
	m.benchProcess.stop()
	for _, obj := range m.webhooks {
		_ = env.Client.Delete(context.Background(), obj)
	}
}
