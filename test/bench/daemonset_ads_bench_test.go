package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// daemonSetRun holds the figures of the one DaemonSet scenario a bench process runs; b.N only
// repeats the report.
var daemonSetRun scenario

// BenchmarkDaemonSet300Nodes runs kruise-manager as its own process and measures an Advanced
// DaemonSet reaching a Ready pod on each of 300 simulated nodes, then an InPlaceIfPossible image
// update of all of them with maxUnavailable 20%. Baseline, in the same run: one client with no
// rate limit creating as many bare pods and the simulated nodes making them Ready. It also
// prints the manager's peak RSS. BENCH_NODES changes the number of nodes.
func BenchmarkDaemonSet300Nodes(b *testing.B) {
	daemonSetRun.report(b, runDaemonSetScenario)
}

func benchNodes() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_NODES")); err == nil && v > 0 {
		return v
	}
	return 300
}

func runDaemonSetScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	n := benchNodes()
	ns := "bench-daemonset"
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), builder.Namespace(ns).Obj()) }()
	// The bench's own nodes carry a label the DaemonSet selects, so that nodes other benchmarks
	// leave behind do not count.
	const pool = "bench.kruise.io/daemonset"
	var nodes []*corev1.Node
	for i := 0; i < n; i++ {
		nodes = append(nodes, builder.Node(fmt.Sprintf("bench-ds-%d", i)).Label(pool, "true").Obj())
	}
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithNodes(nodes...), framework.WithSchedulerNamespaces(ns),
		framework.WithWorkers(16), framework.WithStartDelay(0), framework.WithReadyDelay(0), framework.WithImageChangeDelay(0))
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

	ds := kinds.DaemonSet("bench", ns).Image("registry.example.com/agent:1").NodeSelector(map[string]string{pool: "true"}).
		RollingUpdateType(appsv1alpha1.InplaceRollingUpdateType).MaxUnavailable(intstr.FromString("20%")).Obj()
	start := time.Now()
	endUp := mgr.observe.phase(ctx, "daemonset-scaleup")
	if err := c.Create(ctx, ds); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), ds) }()
	if err := waitDaemonSet(ctx, ns, "bench", func(st appsv1alpha1.DaemonSetStatus) bool {
		return int(st.DesiredNumberScheduled) == n && int(st.NumberReady) == n
	}); err != nil {
		return nil, fmt.Errorf("placement: %w (manager log %s)", err, mgr.log)
	}
	placed := time.Since(start)
	explained := endUp()

	start = time.Now()
	endUpdate := mgr.observe.phase(ctx, "daemonset-inplace")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &appsv1alpha1.DaemonSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), cur); err != nil {
			return err
		}
		cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/agent:2"
		return c.Update(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	if err := waitDaemonSet(ctx, ns, "bench", func(st appsv1alpha1.DaemonSetStatus) bool {
		return int(st.UpdatedNumberScheduled) == n && int(st.NumberAvailable) == n
	}); err != nil {
		return nil, fmt.Errorf("in-place update: %w (manager log %s)", err, mgr.log)
	}
	update := time.Since(start)
	explained = append(explained, endUpdate()...)
	rss := mgr.peakRSS()

	return append([]string{
		fmt.Sprintf("baseline: %d bare pods created by one unlimited client and Ready on simulated nodes: %v", n, base.Round(time.Millisecond)),
		fmt.Sprintf("Advanced DaemonSet on %d nodes, 0 -> %d Ready (burstReplicas 250): %v (%.1fx the baseline)", n, n, placed.Round(time.Millisecond), placed.Seconds()/base.Seconds()),
		fmt.Sprintf("Advanced DaemonSet in-place update over %d nodes, maxUnavailable 20%%: %v (%.1fx the baseline)", n, update.Round(time.Millisecond), update.Seconds()/base.Seconds()),
		fmt.Sprintf("kruise-manager peak RSS: %s (manager flags: --rest-config-qps=%d --rest-config-burst=%d)", rss, benchQPS, 2*benchQPS),
		"where the time went:",
	}, explained...), nil
}

func waitDaemonSet(ctx context.Context, ns, name string, done func(appsv1alpha1.DaemonSetStatus) bool) error {
	var last appsv1alpha1.DaemonSetStatus
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		ds := &appsv1alpha1.DaemonSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ds); err != nil {
			return false, nil
		}
		last = ds.Status
		return ds.Status.ObservedGeneration == ds.Generation && done(ds.Status), nil
	})
	if err != nil {
		return fmt.Errorf("%v; last status %+v", err, last)
	}
	return nil
}
