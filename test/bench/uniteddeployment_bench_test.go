package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkUnitedDeployment900 runs kruise-manager as its own process and measures a
// UnitedDeployment of three CloneSet subsets, one per zone, going from 0 to 900 Ready pods.
// Baseline, in the same run: one client with no rate limit creating 900 bare pods and the
// simulated nodes making them Ready. It also prints the manager's peak RSS. BENCH_UD_REPLICAS
// changes the size.
func BenchmarkUnitedDeployment900(b *testing.B) {
	n := envInt("BENCH_UD_REPLICAS", 900)
	zones := []string{"bench-zone-a", "bench-zone-b", "bench-zone-c"}
	var nodes []*corev1.Node
	for _, z := range zones {
		for i := 0; i < (n/len(zones)+199)/200+1; i++ {
			nodes = append(nodes, builder.Node(fmt.Sprintf("bench-ud-%s-%d", z, i)).Zone(z).Capacity("256", "1Ti", 200).Obj())
		}
	}
	runStaged(b, stageSpec{namespace: "bench-uniteddeployment", nodes: nodes, baseline: n,
		sim: []framework.SimOption{framework.WithImageChangeDelay(0)}}, func(ctx context.Context, st *stage) ([]string, error) {

		ud := kinds.UnitedDeployment("bench", st.ns).Replicas(int32(n)).Image("registry.example.com/bench:1").Zones(zones...).Obj()
		start := time.Now()
		if err := st.create(ctx, ud); err != nil {
			return nil, err
		}
		err := waitFor(ctx, client.ObjectKeyFromObject(ud), 200*time.Millisecond, 15*time.Minute, func(cur *appsv1alpha1.UnitedDeployment) (any, bool) {
			return cur.Status, cur.Status.ObservedGeneration == cur.Generation && int(cur.Status.ReadyReplicas) == n
		})
		if err != nil {
			return nil, fmt.Errorf("scale up: %w (manager log %s)", err, st.mgr.log)
		}
		scaleUp := time.Since(start)

		return []string{
			st.baselineLine(n),
			fmt.Sprintf("UnitedDeployment of %d CloneSet subsets 0 -> %d Ready: %s", len(zones), n, st.againstBase(scaleUp)),
			st.rssLine(),
		}, nil
	})
}
