package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkHugeReplicas creates, one kind at a time, each workload kind with its replicas-like
// count at 2147483647 (framework.HugeReplicas), each with a kruise-manager of its own, run as its
// own process: a CloneSet, an Advanced StatefulSet, a UnitedDeployment of each, an Advanced
// DaemonSet (burstReplicas, partition and maxUnavailable) and a BroadcastJob (parallelism) on
// BENCH_HUGE_NODES simulated nodes (300 unless set), and an EphemeralJob (replicas and
// parallelism) over as many pods. It lets the manager create its first BENCH_HUGE_PODS pods (300
// unless set; the per-node kinds one per node, the EphemeralJob its container in every pod) and
// prints a table: the manager's RSS before the workload existed, its peak RSS, and the pods
// created, against the chart's 1 GiB memory limit. Pods are left pending: no scheduler binds
// them. It also prints how long the CloneSet validating webhook takes to refuse an update
// listing 1000 podsToDelete names, against an update listing none.
func BenchmarkHugeReplicas(b *testing.B) {
	runScenario(b, runHugeReplicas)
}

// hugePool labels the benchmark's own nodes, which the per-node kinds select, so that nodes
// other benchmarks leave behind do not count.
const hugePool = "bench.kruise.io/huge"

// hugeNoKubelet is the node the EphemeralJob's target pods are bound to: no kubelet serves it,
// so they stay as they are made.
const hugeNoKubelet = "bench-huge-no-kubelet"

// hugeKind is one row of BenchmarkHugeReplicas.
type hugeKind struct {
	name string
	// objects makes what the row creates in ns, the workload last.
	objects func(ns string) []client.Object
	// pods is how many pods of ns the manager must create (or, for the EphemeralJob, give its
	// container) before the peak is read.
	pods int
	// done counts those pods; nil counts every pod of ns.
	done func(pods []corev1.Pod) int
	// extra measures more on the running workload, for lines after the table.
	extra func(ctx context.Context, workload client.Object) ([]string, error)
}

func hugeKinds(pods, nodes int) []hugeKind {
	huge := intstr.FromInt32(framework.HugeReplicas)
	pool := map[string]string{hugePool: "true"}
	asts := func(ns string) client.Object {
		set := kinds.StatefulSet("huge", ns).Replicas(framework.HugeReplicas).Obj()
		set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		return set
	}
	ud := func(ns string) *kinds.UnitedDeploymentBuilder {
		return kinds.UnitedDeployment("huge", ns).Replicas(framework.HugeReplicas).Zones("zone-a", "zone-b")
	}
	return []hugeKind{
		{name: "CloneSet", pods: pods, extra: podsToDeleteFigures,
			objects: func(ns string) []client.Object {
				return []client.Object{kinds.CloneSet("huge", ns).Replicas(framework.HugeReplicas).Obj()}
			}},
		{name: "Advanced StatefulSet (Parallel)", pods: pods,
			objects: func(ns string) []client.Object { return []client.Object{asts(ns)} }},
		{name: "UnitedDeployment of CloneSets (2 subsets)", pods: pods,
			objects: func(ns string) []client.Object { return []client.Object{ud(ns).Obj()} }},
		{name: "UnitedDeployment of Advanced StatefulSets (2 subsets)", pods: pods,
			objects: func(ns string) []client.Object { return []client.Object{ud(ns).AdvancedStatefulSet().Obj()} }},
		{name: "Advanced DaemonSet (burstReplicas, partition, maxUnavailable)", pods: nodes,
			objects: func(ns string) []client.Object {
				return []client.Object{kinds.DaemonSet("huge", ns).NodeSelector(pool).BurstReplicas(huge).Partition(framework.HugeReplicas).MaxUnavailable(huge).Obj()}
			}},
		{name: "BroadcastJob (parallelism)", pods: nodes,
			objects: func(ns string) []client.Object {
				return []client.Object{kinds.BroadcastJob("huge", ns).NodeSelector(pool).Parallelism(huge).Never().Obj()}
			}},
		{name: "EphemeralJob (replicas, parallelism), pods given its container", pods: nodes,
			done: withEphemeralContainer,
			objects: func(ns string) []client.Object {
				var out []client.Object
				for i := range nodes {
					out = append(out, builder.Pod(fmt.Sprintf("target-%d", i), ns).Label("app", "target").Node(hugeNoKubelet).Obj())
				}
				job := kinds.EphemeralJob("huge", ns, "target").Obj()
				job.Spec.Replicas, job.Spec.Parallelism = ptr.To[int32](framework.HugeReplicas), ptr.To[int32](framework.HugeReplicas)
				return append(out, job)
			}},
	}
}

// withEphemeralContainer counts the pods that hold an ephemeral container.
func withEphemeralContainer(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if len(p.Spec.EphemeralContainers) > 0 {
			n++
		}
	}
	return n
}

func runHugeReplicas(b *testing.B) ([]string, error) {
	ctx := context.Background()
	pods := envInt("BENCH_HUGE_PODS", 300)
	nodes := envInt("BENCH_HUGE_NODES", 300)
	var list []*corev1.Node
	for i := range nodes {
		list = append(list, builder.Node(fmt.Sprintf("bench-huge-%d", i)).Label(hugePool, "true").Obj())
	}
	// The simulator keeps the nodes Ready; with its scheduler off, the pods stay pending and
	// cost the manager only what it holds of them.
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithNodes(list...), framework.WithoutScheduler())
	if err != nil {
		return nil, err
	}
	defer func() { _ = sim.DeleteNodes(context.Background()); sim.Stop() }()

	out := []string{
		fmt.Sprintf("Each workload kind at %d, each with a kruise-manager of its own; the chart's manager memory limit is %d MB.", framework.HugeReplicas, framework.ChartMemoryLimitMB),
		"| kind | manager RSS before | peak RSS | peak / limit | pods created | time |",
		"|---|---|---|---|---|---|",
	}
	var extras []string
	for i, k := range hugeKinds(pods, nodes) {
		row, more, err := runHugeKind(ctx, b.TempDir(), fmt.Sprintf("bench-huge-%d", i), k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		out = append(out, row)
		extras = append(extras, more...)
	}
	return append(out, extras...), nil
}

// runHugeKind runs one row with a new manager process: it reads the manager's RSS, creates the
// row's objects, waits for its pods, reads the peak RSS, and removes everything again.
func runHugeKind(ctx context.Context, dir, ns string, k hugeKind) (row string, extra []string, err error) {
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return "", nil, err
	}
	objs := k.objects(ns)
	// No namespace controller or garbage collector runs here: everything is deleted by hand,
	// pods last, with no grace since no kubelet runs them.
	defer func() {
		ctx := context.Background()
		for i := len(objs) - 1; i >= 0; i-- {
			_ = c.Delete(ctx, objs[i])
		}
		_ = c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
		_ = c.Delete(ctx, builder.Namespace(ns).Obj())
	}()

	mgr, err := startManagerProcess(ctx, dir)
	if err != nil {
		return "", nil, err
	}
	defer mgr.stop()
	before, err := procStatusKB(mgr.benchProcess, "VmRSS")
	if err != nil {
		return "", nil, err
	}
	start := time.Now()
	for _, obj := range objs {
		if err := createThroughWebhook(ctx, obj); err != nil {
			return "", nil, err
		}
	}
	count := k.done
	if count == nil {
		count = func(pods []corev1.Pod) int { return len(pods) }
	}
	created, err := waitPods(ctx, ns, func(pods []corev1.Pod) bool { return count(pods) >= k.pods })
	if err != nil {
		return "", nil, fmt.Errorf("first %d pods: %w (manager log %s)", k.pods, err, mgr.log)
	}
	took := time.Since(start)
	peak, err := procStatusKB(mgr.benchProcess, "VmHWM")
	if err != nil {
		return "", nil, err
	}
	if k.extra != nil {
		if extra, err = k.extra(ctx, objs[len(objs)-1]); err != nil {
			return "", nil, err
		}
	}
	row = fmt.Sprintf("| %s | %d MB | %d MB | %.0f%% | %d | %v |", k.name, before/1024, peak/1024,
		100*float64(peak)/1024/framework.ChartMemoryLimitMB, count(created), took.Round(100*time.Millisecond))
	return row, extra, nil
}

// createThroughWebhook creates obj, trying again while the apiserver still calls the new
// manager's webhooks with the CA of a moment ago: it reads webhook configurations through its
// own informer.
func createThroughWebhook(ctx context.Context, obj client.Object) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = env.Client.Create(ctx, obj)
		if last != nil && strings.Contains(last.Error(), "failed calling webhook") {
			return false, nil
		}
		return true, last
	})
	if err != nil {
		return fmt.Errorf("create %T %s: %w (last: %v)", obj, obj.GetName(), err, last)
	}
	return nil
}

// podsToDeleteFigures is the CloneSet row's extra: the validating webhook's answer to an update
// listing 1000 podsToDelete names, against an update listing none.
func podsToDeleteFigures(ctx context.Context, obj client.Object) ([]string, error) {
	many, none, err := podsToDeleteLatency(ctx, obj.(*appsv1alpha1.CloneSet))
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("CloneSet webhook, update listing 1000 podsToDelete names (999 not its pods): %v (%.1fx an update listing none, %v)",
		many.Round(time.Microsecond), many.Seconds()/none.Seconds(), none.Round(time.Microsecond))}, nil
}

// podsToDeleteLatency returns the median time the apiserver, through the CloneSet webhooks,
// takes to refuse an update listing 1000 podsToDelete names, and to accept one listing none.
func podsToDeleteLatency(ctx context.Context, cs *appsv1alpha1.CloneSet) (many, none time.Duration, err error) {
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("huge-none-%03d", i))
	}
	const rounds = 5
	var manyTimes, noneTimes []time.Duration
	for i := range rounds {
		cur := &appsv1alpha1.CloneSet{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), cur); err != nil {
			return 0, 0, err
		}
		withNames := cur.DeepCopy()
		withNames.Spec.ScaleStrategy.PodsToDelete = names
		start := time.Now()
		if err := env.Client.Update(ctx, withNames); err == nil || !strings.Contains(err.Error(), "podsToDelete") {
			return 0, 0, fmt.Errorf("an update listing 1000 missing pods was not refused for podsToDelete: %v", err)
		}
		manyTimes = append(manyTimes, time.Since(start))

		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), cur); err != nil {
				return err
			}
			if cur.Labels == nil {
				cur.Labels = map[string]string{}
			}
			cur.Labels["bench-round"] = strconv.Itoa(i)
			start = time.Now()
			return env.Client.Update(ctx, cur)
		})
		if err != nil {
			return 0, 0, fmt.Errorf("a label-only update: %w", err)
		}
		noneTimes = append(noneTimes, time.Since(start))
	}
	return median(manyTimes), median(noneTimes), nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// waitPods waits until the pods of ns satisfy done, and returns them.
func waitPods(ctx context.Context, ns string, done func([]corev1.Pod) bool) ([]corev1.Pod, error) {
	var last []corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		last = list.Items
		return done(last), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%v; last count %d", err, len(last))
	}
	return last, nil
}
