package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// broadcastJobRun holds the figures of the one BroadcastJob scenario a bench process runs; b.N
// only repeats the report.
var broadcastJobRun scenario

// BenchmarkBroadcastJob runs kruise-manager as its own process and measures a BroadcastJob from
// creation to Complete over 100 simulated nodes (BENCH_BCJ_NODES changes it): one pod per node,
// each bound by the scheduler through its node affinity and ending Succeeded at once. Baseline, in
// the same run: one client with no rate limit creating as many bare pods and the simulated nodes
// making them Ready.
func BenchmarkBroadcastJob(b *testing.B) {
	broadcastJobRun.report(b, runBroadcastJobScenario)
}

func broadcastJobNodes() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_BCJ_NODES")); err == nil && v > 0 {
		return v
	}
	return 100
}

func runBroadcastJobScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	n := broadcastJobNodes()
	ns := "bench-broadcastjob"
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), builder.Namespace(ns).Obj()) }()
	// The job selects the bench's own nodes by label, so that nodes other benchmarks leave
	// behind do not count.
	const pool = "bench.kruise.io/broadcastjob"
	var nodes []*corev1.Node
	for i := 0; i < n; i++ {
		nodes = append(nodes, builder.Node(fmt.Sprintf("bench-bcj-%d", i)).Label(pool, "true").Obj())
	}
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithNodes(nodes...), framework.WithSchedulerNamespaces(ns),
		framework.WithWorkers(16), framework.WithStartDelay(0), framework.WithReadyDelay(0))
	if err != nil {
		return nil, err
	}
	defer func() { _ = sim.DeleteNodes(context.Background()); sim.Stop() }()

	base, _, err := rawPodsToReady(ctx, ns, n)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}

	mgr, err := startManagerProcess(ctx, b.TempDir())
	if err != nil {
		return nil, err
	}
	defer mgr.stop()

	job := kinds.BroadcastJob("bench", ns).NodeSelector(map[string]string{pool: "true"}).
		PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj()
	start := time.Now()
	end := mgr.observe.phase(ctx, "broadcastjob")
	if err := c.Create(ctx, job); err != nil {
		return nil, err
	}
	defer func() {
		_ = c.Delete(context.Background(), job)
		_ = c.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns))
	}()
	var last appsv1alpha1.BroadcastJobStatus
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		cur := &appsv1alpha1.BroadcastJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), cur); err != nil {
			return false, nil
		}
		last = cur.Status
		return cur.Status.Phase == appsv1alpha1.PhaseCompleted, nil
	})
	if err != nil {
		return nil, fmt.Errorf("BroadcastJob: %v; last status %+v (manager log %s)", err, last, mgr.log)
	}
	took := time.Since(start)
	explained := end()

	return append([]string{
		fmt.Sprintf("baseline: %d bare pods created by one unlimited client and Ready on simulated nodes: %v", n, base.Round(time.Millisecond)),
		fmt.Sprintf("BroadcastJob over %d nodes, created -> Complete (%d pods succeeded): %v (%.1fx the baseline)", n, last.Succeeded, took.Round(time.Millisecond), took.Seconds()/base.Seconds()),
		"where the time went:",
	}, explained...), nil
}
