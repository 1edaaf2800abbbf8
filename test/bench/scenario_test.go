package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// scenario is one measured scenario of a bench process. A scenario takes minutes, so it runs
// once however large b.N is, and b.N only repeats its report, which is printed the first time.
type scenario struct {
	once sync.Once
	err  error
	out  []string
}

// scenarios holds each benchmark's scenario, by the benchmark's name.
var scenarios sync.Map

// runScenario runs the scenario of the benchmark b names with run, once in the process, and
// prints its figures; see scenario.
func runScenario(b *testing.B, run func(*testing.B) ([]string, error)) {
	s, _ := scenarios.LoadOrStore(b.Name(), &scenario{})
	s.(*scenario).report(b, run)
}

// runStaged is runScenario for a scenario on a stage: run gets the stage setUp built from
// spec, which is closed once run returns.
func runStaged(b *testing.B, spec stageSpec, run func(ctx context.Context, st *stage) ([]string, error)) {
	runScenario(b, func(b *testing.B) ([]string, error) {
		ctx := context.Background()
		st, err := setUp(ctx, b, spec)
		defer st.close()
		if err != nil {
			return nil, err
		}
		return run(ctx, st)
	})
}

// report runs the scenario on its first call and prints its figures; a failed run fails every
// call.
func (s *scenario) report(b *testing.B, run func(*testing.B) ([]string, error)) {
	s.once.Do(func() { s.out, s.err = run(b) })
	if s.err != nil {
		b.Fatal(s.err)
	}
	for _, l := range s.out {
		fmt.Println(l)
	}
	s.out = nil
}

// stageSpec says what a scenario stands on; setUp builds it in this order.
type stageSpec struct {
	// namespace is created first and deleted last.
	namespace string
	// nodes, when set, run on a node simulator that schedules the namespace's pods with 16
	// workers and no start or ready delay; sim adds options to those.
	nodes []*corev1.Node
	sim   []framework.SimOption
	// baseline, when not 0, is how many bare pods rawPodsToReady makes Ready before the
	// manager starts.
	baseline int
	// beforeManager, when set, runs after the baseline and before the manager starts: a
	// scenario's own baseline, which must not see the webhooks.
	beforeManager func(ctx context.Context, s *stage) error
}

// stage is what setUp built for one scenario. close undoes it, in reverse order.
type stage struct {
	ns  string
	sim *framework.NodeSimulator
	// base is the baseline's time and baseCPU the CPU time it cost, when the spec asked for one.
	base    time.Duration
	baseCPU map[string]time.Duration
	mgr     *managerProcess
	// cs is a clientset without a client rate limit.
	cs   kubernetes.Interface
	undo []func()
}

// setUp creates the namespace, starts the node simulator, runs the baseline and starts
// kruise-manager as its own process in b's temp dir, as spec says. The returned stage is never
// nil; close it even when setUp fails.
func setUp(ctx context.Context, b *testing.B, spec stageSpec) (*stage, error) {
	s := &stage{ns: spec.namespace}
	var err error
	if s.cs, err = unlimitedClientset(); err != nil {
		return s, err
	}
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(s.ns).Obj()); err != nil {
		return s, err
	}
	s.defer_(func() { _ = c.Delete(context.Background(), builder.Namespace(s.ns).Obj()) })
	if len(spec.nodes) > 0 {
		opts := append([]framework.SimOption{framework.WithNodes(spec.nodes...), framework.WithSchedulerNamespaces(s.ns),
			framework.WithWorkers(16), framework.WithStartDelay(0), framework.WithReadyDelay(0)}, spec.sim...)
		sim, err := framework.StartNodeSimulator(ctx, env, opts...)
		if err != nil {
			return s, err
		}
		s.sim = sim
		s.defer_(func() { _ = sim.DeleteNodes(context.Background()); sim.Stop() })
	}
	if spec.baseline > 0 {
		if s.base, s.baseCPU, err = rawPodsToReady(ctx, s.ns, spec.baseline); err != nil {
			return s, fmt.Errorf("baseline: %w", err)
		}
	}
	if spec.beforeManager != nil {
		if err := spec.beforeManager(ctx, s); err != nil {
			return s, err
		}
	}
	mgr, err := startManagerProcess(ctx, b.TempDir())
	if err != nil {
		return s, err
	}
	s.mgr = mgr
	s.defer_(mgr.stop)
	return s, nil
}

// defer_ has close run f, before what was deferred earlier.
func (s *stage) defer_(f func()) { s.undo = append(s.undo, f) }

func (s *stage) close() {
	for _, f := range slices.Backward(s.undo) {
		f()
	}
}

// create creates obj and has close delete it.
func (s *stage) create(ctx context.Context, obj client.Object) error {
	if err := env.Client.Create(ctx, obj); err != nil {
		return err
	}
	s.defer_(func() { _ = env.Client.Delete(context.Background(), obj) })
	return nil
}

// phase is one timed step of a scenario, which the manager's observer explains under name;
// what names the step in an error.
type phase struct {
	name, what string
	run        func(ctx context.Context) error
}

// steps is a phase's run that does each step in turn and stops at the first that fails.
func steps(steps ...func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for _, step := range steps {
			if err := step(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// runPhases runs the phases one after the other and returns how long each took and the
// observer's lines on all of them.
func (s *stage) runPhases(ctx context.Context, phases ...phase) ([]time.Duration, []string, error) {
	var took []time.Duration
	var explained []string
	for _, p := range phases {
		start := time.Now()
		end := s.mgr.observe.phase(ctx, p.name)
		if err := p.run(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (manager log %s)", p.what, err, s.mgr.log)
		}
		took = append(took, time.Since(start))
		explained = append(explained, end()...)
	}
	return took, explained, nil
}

// baselineLine reports the bare-pod baseline of n pods.
func (s *stage) baselineLine(n int) string {
	return fmt.Sprintf("baseline: %d bare pods created by one unlimited client and Ready on simulated nodes: %v", n, s.base.Round(time.Millisecond))
}

// againstBase is d rounded, with how many times the baseline it took.
func (s *stage) againstBase(d time.Duration) string {
	return fmt.Sprintf("%v (%.1fx the baseline)", d.Round(time.Millisecond), d.Seconds()/s.base.Seconds())
}

// rssLine reports the manager's peak RSS with the client rate limit it ran with.
func (s *stage) rssLine() string {
	return fmt.Sprintf("kruise-manager peak RSS: %s (manager flags: --rest-config-qps=%d --rest-config-burst=%d; env as the chart's: %s)",
		s.mgr.peakRSS(), benchQPS, 2*benchQPS, s.mgr.envString())
}

// waitFor reads the object at key every interval until done says it is there, for at most
// timeout; done also returns what the error reports as the last status seen.
func waitFor[T any, P framework.Object[T]](ctx context.Context, key client.ObjectKey, interval, timeout time.Duration, done func(P) (status any, ok bool)) error {
	var last any
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		obj := P(new(T))
		if err := env.Client.Get(ctx, key, obj); err != nil {
			return false, nil
		}
		var ok bool
		last, ok = done(obj)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%v; last status %+v", err, last)
	}
	return nil
}

// updateObject reads the object at key, changes it with mutate and writes it, again on a conflict.
func updateObject[T any, P framework.Object[T]](ctx context.Context, key client.ObjectKey, mutate func(P)) error {
	return framework.TryChange(ctx, env.Client, key, mutate)
}

// unlimitedClientset is a clientset on the bench apiserver without a client rate limit.
func unlimitedClientset() (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, -1
	return kubernetes.NewForConfig(cfg)
}

// BenchmarkRawPodCreate measures the physical limit later controller benchmarks are quoted
// against: pods per second that one client with no rate limit can create in this control plane.
func BenchmarkRawPodCreate(b *testing.B) {
	ctx := context.Background()
	cs, err := unlimitedClientset()
	if err != nil {
		b.Fatal(err)
	}
	ns := framework.NewNamespace(b, env.Client, "bench-", nil)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "raw-", Labels: map[string]string{"app": "bench"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example/bench:1"}}},
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			b.Fatalf("create pod %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "pods/s")
	fmt.Printf("baseline: raw pod create, 1 client, no rate limit: %d pods in %v = %.0f pods/s\n", b.N, elapsed.Round(time.Millisecond), rate)
}

// deletePods deletes the namespace's pods that sel selects, at once, and waits until they are
// gone. A collection of thousands outlasts the apiserver's request timeout, which then answers
// with a timeout while it goes on deleting: that is waited out, not failed on.
func deletePods(ctx context.Context, cs kubernetes.Interface, ns, sel string) error {
	err := cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{LabelSelector: sel})
	if err != nil && !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) {
		return fmt.Errorf("delete pods: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		left, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: 1})
		if err != nil {
			return false, nil
		}
		return len(left.Items) == 0, nil
	})
}
