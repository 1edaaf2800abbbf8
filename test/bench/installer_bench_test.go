package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// benchRegistry names the images' registry, which the chart leaves to the user.
const benchRegistry = "imageRegistry=registry.example.com"

// BenchmarkChartRender measures a client-only render of the large spec, against loading the
// embedded chart alone (the part every command pays).
func BenchmarkChartRender(b *testing.B) {
	ctx := context.Background()
	load := measure(b, 20, func() error { _, err := chartsource.Load(""); return err })
	o := installer.RenderOptions{Options: installer.Options{Spec: &installer.SpecChoice{Preset: spec.Large}, Set: []string{benchRegistry}}}
	per := timedLoop(b, func() error { _, err := installer.Render(ctx, o); return err })
	fmt.Printf("chart render (large): %v per render; baseline chart load %v; ratio %.1fx\n", per.Round(time.Microsecond), load.Round(time.Microsecond), float64(per)/float64(load))
	// The other presets render the same templates; their figures show that none is an outlier.
	for _, p := range []spec.Preset{spec.Small, spec.Custom} {
		o := installer.RenderOptions{Options: installer.Options{Spec: &installer.SpecChoice{Preset: p}, Set: []string{benchRegistry}}}
		d := measure(b, 10, func() error { _, err := installer.Render(ctx, o); return err })
		fmt.Printf("chart render (%s): %v per render; ratio to the chart load %.1fx\n", p, d.Round(time.Microsecond), float64(d)/float64(load))
	}
}

// BenchmarkPreflight5000Nodes runs every preflight check on facts of 5000 nodes in 50 zones
// (a tenth on docker), against the same checks on 50 nodes; a ratio near 100 means linear.
func BenchmarkPreflight5000Nodes(b *testing.B) {
	small := syntheticFacts(50)
	large := syntheticFacts(5000)
	o := installer.Options{Spec: &installer.SpecChoice{Preset: spec.Large}}
	base := measure(b, 20, func() error { _, err := installer.PreflightFacts(o, small); return err })
	per := timedLoop(b, func() error { _, err := installer.PreflightFacts(o, large); return err })
	fmt.Printf("preflight on 5000 nodes: %v; baseline 50 nodes %v; ratio %.0fx for 100x the nodes\n", per.Round(time.Microsecond), base.Round(time.Microsecond), float64(per)/float64(base))
}

// BenchmarkInstallToReady installs the small spec and waits until the manager and the daemon
// are ready, against creating a Deployment and a DaemonSet of the same shape directly and
// waiting for them. Each install is followed by an uninstall outside the timer. Installs are
// slow, so at most BENCH_INSTALLS (default 3) run whatever b.N asks; the figures say how many.
func BenchmarkInstallToReady(b *testing.B) {
	ctx := context.Background()
	startTestBed(b)
	n := min(b.N, maxInstalls())
	base := measure(b, n, func() error { return directToReady(ctx) })
	i, err := installer.New(kubeconfigGetter(), installer.WithProgress(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	b.ResetTimer()
	for k := 0; k < n; k++ {
		start := time.Now()
		_, err := i.Install(ctx, installer.Options{Namespace: "kruise-bench", Timeout: 3 * time.Minute,
			Set: []string{benchRegistry, "webhookConfiguration.failurePolicy.default=Ignore", "webhookConfiguration.timeoutSeconds=1"}})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		uo := installer.UninstallOptions{Namespace: "kruise-bench"}
		uo.Timeout = 3 * time.Minute
		if _, err := i.Uninstall(ctx, uo); err != nil {
			b.Fatal(err)
		}
		if err := waitNoPods(ctx, "kruise-bench"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	per := total / time.Duration(n)
	b.ReportMetric(per.Seconds(), "s/install")
	fmt.Printf("install-to-ready (small, 3 nodes): %v per install over %d install(s); baseline direct Deployment+DaemonSet %v; ratio %.1fx\n",
		per.Round(time.Millisecond), n, base.Round(time.Millisecond), float64(per)/float64(base))
}

// measure returns the mean time of n runs of f.
func measure(b *testing.B, n int, f func() error) time.Duration {
	b.Helper()
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// timedLoop is the benchmark's timed part: b.N calls of f, after the set-up and before what
// follows, and their mean duration.
func timedLoop(b *testing.B, f func() error) time.Duration {
	b.Helper()
	b.ResetTimer()
	defer b.StopTimer()
	return measure(b, b.N, f)
}

func maxInstalls() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_INSTALLS")); err == nil && v > 0 {
		return v
	}
	return 3
}

func syntheticFacts(nodes int) facts.Facts {
	f := facts.Facts{ServerVersion: "v1.37.2"}
	for i := range nodes {
		zone := fmt.Sprintf("zone-%d", i%50)
		rt := "containerd://1.7.13"
		if i%10 == 0 {
			rt = "docker://24.0.7"
		}
		f.Nodes = append(f.Nodes, facts.Node{
			Name: fmt.Sprintf("node-%d", i), Zone: zone, Ready: true, Schedulable: true, ContainerRuntimeVersion: rt,
			Labels: map[string]string{corev1.LabelHostname: fmt.Sprintf("node-%d", i), corev1.LabelTopologyZone: zone},
		})
	}
	return f
}

// testBed is kube-controller-manager, kube-scheduler and three simulated nodes next to the
// package's apiserver, started by a benchmark that needs them and stopped when it ends: a
// kube-scheduler left running would bind the pods of later benchmarks beside their node
// simulator, and kube-controller-manager would load their apiserver.
type testBed struct {
	mu  sync.Mutex
	sim *framework.NodeSimulator
}

var bed testBed

func startTestBed(b *testing.B) {
	b.Helper()
	bed.mu.Lock()
	defer bed.mu.Unlock()
	if bed.sim != nil {
		return
	}
	ctx := context.Background()
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(), framework.WithNodes(
		builder.Node("bench-a").Zone("a").Obj(), builder.Node("bench-b").Zone("b").Obj(), builder.Node("bench-c").Zone("c").Obj()))
	if err != nil {
		b.Fatal(err)
	}
	bed.sim = sim
	b.Cleanup(stopTestBed)
	if err := env.StartKubeControllers(ctx); err != nil {
		b.Fatal(err)
	}
}

func stopTestBed() {
	bed.mu.Lock()
	defer bed.mu.Unlock()
	if bed.sim == nil {
		return
	}
	_ = env.StopKubeControllers()
	_ = bed.sim.DeleteNodes(context.Background())
	bed.sim.Stop()
	bed.sim = nil
}

func kubeconfigGetter() genericclioptions.RESTClientGetter {
	f := genericclioptions.NewConfigFlags(false)
	k := env.Kubeconfig
	f.KubeConfig = &k
	return f
}

// directToReady creates a one-replica Deployment and a DaemonSet in a fresh namespace, waits
// for both to be ready, and deletes the namespace.
func directToReady(ctx context.Context) error {
	cs := env.Clientset
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-direct-"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) }()
	labels := map[string]string{"app": "direct"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
		Containers:  []corev1.Container{{Name: "main", Image: "registry.example.com/bench:1"}},
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	}}
	if _, err := cs.AppsV1().Deployments(ns.Name).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl,
	}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cs.AppsV1().DaemonSets(ns.Name).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds"}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl,
	}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns.Name).Get(ctx, "d", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ds, err := cs.AppsV1().DaemonSets(ns.Name).Get(ctx, "ds", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return d.Status.ReadyReplicas == 1 && ds.Status.DesiredNumberScheduled > 0 && ds.Status.NumberReady == ds.Status.DesiredNumberScheduled, nil
	})
}

func waitNoPods(ctx context.Context, namespace string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := env.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	})
}
