package bench

import (
	"context"
	"fmt"
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

// unitedDeploymentRun holds the figures of the one UnitedDeployment scenario a bench process runs.
var unitedDeploymentRun scenario

// BenchmarkUnitedDeployment900 runs kruise-manager as its own process and measures a
// UnitedDeployment of three CloneSet subsets, one per zone, going from 0 to 900 Ready pods.
// Baseline, in the same run: one client with no rate limit creating 900 bare pods and the
// simulated nodes making them Ready. It also prints the manager's peak RSS. BENCH_UD_REPLICAS
// changes the size.
func BenchmarkUnitedDeployment900(b *testing.B) {
	unitedDeploymentRun.report(b, runUnitedDeploymentScenario)
}

func runUnitedDeploymentScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	n := envInt("BENCH_UD_REPLICAS", 900)
	ns := "bench-uniteddeployment"
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), builder.Namespace(ns).Obj()) }()
	zones := []string{"bench-zone-a", "bench-zone-b", "bench-zone-c"}
	var nodes []*corev1.Node
	for _, z := range zones {
		for i := 0; i < (n/len(zones)+199)/200+1; i++ {
			nodes = append(nodes, builder.Node(fmt.Sprintf("bench-ud-%s-%d", z, i)).Zone(z).Capacity("256", "1Ti", 200).Obj())
		}
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

	ud := kinds.UnitedDeployment("bench", ns).Replicas(int32(n)).Image("registry.example.com/bench:1").Zones(zones...).Obj()
	start := time.Now()
	if err := c.Create(ctx, ud); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), ud) }()
	var last appsv1alpha1.UnitedDeploymentStatus
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		cur := &appsv1alpha1.UnitedDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ud), cur); err != nil {
			return false, nil
		}
		last = cur.Status
		return cur.Status.ObservedGeneration == cur.Generation && int(cur.Status.ReadyReplicas) == n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("scale up: %w; last status %+v (manager log %s)", err, last, mgr.log)
	}
	scaleUp := time.Since(start)
	rss := mgr.peakRSS()

	return []string{
		fmt.Sprintf("baseline: %d bare pods created by one unlimited client and Ready on simulated nodes: %v", n, base.Round(time.Millisecond)),
		fmt.Sprintf("UnitedDeployment of %d CloneSet subsets 0 -> %d Ready: %v (%.1fx the baseline)", len(zones), n, scaleUp.Round(time.Millisecond), scaleUp.Seconds()/base.Seconds()),
		fmt.Sprintf("kruise-manager peak RSS: %s (manager flags: --rest-config-qps=%d --rest-config-burst=%d)", rss, benchQPS, 2*benchQPS),
	}, nil
}
