package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkDaemonSet300Nodes runs kruise-manager as its own process and measures an Advanced
// DaemonSet reaching a Ready pod on each of 300 simulated nodes, then an InPlaceIfPossible image
// update of all of them with maxUnavailable 20%. Baseline, in the same run: one client with no
// rate limit creating as many bare pods and the simulated nodes making them Ready. It also
// prints the manager's peak RSS. BENCH_NODES changes the number of nodes.
func BenchmarkDaemonSet300Nodes(b *testing.B) {
	n := envInt("BENCH_NODES", 300)
	// The bench's own nodes carry a label the DaemonSet selects, so that nodes other benchmarks
	// leave behind do not count.
	const pool = "bench.kruise.io/daemonset"
	runStaged(b, stageSpec{namespace: "bench-daemonset", nodes: labelledNodes("bench-ds", pool, n), baseline: n,
		sim: []framework.SimOption{framework.WithImageChangeDelay(0)}}, func(ctx context.Context, st *stage) ([]string, error) {
		ds := kinds.DaemonSet("bench", st.ns).Image("registry.example.com/agent:1").NodeSelector(map[string]string{pool: "true"}).
			RollingUpdateType(appsv1alpha1.InplaceRollingUpdateType).MaxUnavailable(intstr.FromString("20%")).Obj()
		took, explained, err := st.runPhases(ctx,
			phase{"daemonset-scaleup", "placement", steps(func(ctx context.Context) error { return st.create(ctx, ds) },
				func(ctx context.Context) error {
					return waitDaemonSet(ctx, ds, func(s appsv1alpha1.DaemonSetStatus) bool {
						return int(s.DesiredNumberScheduled) == n && int(s.NumberReady) == n
					})
				})},
			phase{"daemonset-inplace", "in-place update", steps(func(ctx context.Context) error {
				return updateObject(ctx, client.ObjectKeyFromObject(ds), func(cur *appsv1alpha1.DaemonSet) {
					cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/agent:2"
				})
			},
				func(ctx context.Context) error {
					return waitDaemonSet(ctx, ds, func(s appsv1alpha1.DaemonSetStatus) bool {
						return int(s.UpdatedNumberScheduled) == n && int(s.NumberAvailable) == n
					})
				})})
		if err != nil {
			return nil, err
		}
		placed, updated := took[0], took[1]

		return append([]string{
			st.baselineLine(n),
			fmt.Sprintf("Advanced DaemonSet on %d nodes, 0 -> %d Ready (burstReplicas 250): %s", n, n, st.againstBase(placed)),
			fmt.Sprintf("Advanced DaemonSet in-place update over %d nodes, maxUnavailable 20%%: %s", n, st.againstBase(updated)),
			st.rssLine(),
			"where the time went:",
		}, explained...), nil
	})
}

// labelledNodes are n simulated nodes named <prefix>-<i> carrying the label pool=true.
func labelledNodes(prefix, pool string, n int) []*corev1.Node {
	var nodes []*corev1.Node
	for i := 0; i < n; i++ {
		nodes = append(nodes, builder.Node(fmt.Sprintf("%s-%d", prefix, i)).Label(pool, "true").Obj())
	}
	return nodes
}

// waitDaemonSet waits until ds's controller has seen its latest generation and done says yes
// of its status.
func waitDaemonSet(ctx context.Context, ds *appsv1alpha1.DaemonSet, done func(appsv1alpha1.DaemonSetStatus) bool) error {
	return waitFor(ctx, client.ObjectKeyFromObject(ds), 200*time.Millisecond, 15*time.Minute, func(cur *appsv1alpha1.DaemonSet) (any, bool) {
		return cur.Status, cur.Status.ObservedGeneration == cur.Generation && done(cur.Status)
	})
}
