package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
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

// BenchmarkStatefulSet1000 runs kruise-manager as its own process and measures a Parallel
// Advanced StatefulSet going from 0 to 1000 Ready pods, then an in-place image update of all of
// them with maxUnavailable 20%. Baseline, in the same run: one client with no rate limit
// creating 1000 bare pods and the simulated nodes making them Ready. It also prints the
// manager's peak RSS. BENCH_REPLICAS changes the size.
func BenchmarkStatefulSet1000(b *testing.B) {
	n := envInt("BENCH_REPLICAS", 1000)
	runStaged(b, stageSpec{namespace: "bench-statefulset", nodes: benchPoolNodes("bench-sts", n), baseline: n,
		sim: []framework.SimOption{framework.WithImageChangeDelay(0)}}, func(ctx context.Context, st *stage) ([]string, error) {
		set := kinds.StatefulSet("bench", st.ns).Replicas(int32(n)).Image("registry.example.com/bench:1").Parallel().
			PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).MaxUnavailable(intstr.FromString("20%")).
			ReadinessGate(appspub.InPlaceUpdateReady).Obj()
		took, explained, err := st.runPhases(ctx,
			phase{"statefulset-scaleup", "scale up", steps(func(ctx context.Context) error { return st.create(ctx, set) },
				func(ctx context.Context) error {
					return waitStatefulSet(ctx, set, func(s appsv1beta1.StatefulSetStatus) bool { return int(s.ReadyReplicas) == n })
				})},
			phase{"statefulset-inplace", "in-place update", steps(func(ctx context.Context) error {
				return updateObject(ctx, client.ObjectKeyFromObject(set), func(cur *appsv1beta1.StatefulSet) {
					cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/bench:2"
				})
			},
				func(ctx context.Context) error {
					return waitStatefulSet(ctx, set, func(s appsv1beta1.StatefulSetStatus) bool {
						return int(s.UpdatedReadyReplicas) == n && int(s.UpdatedReplicas) == n && s.UpdateRevision == s.CurrentRevision
					})
				})})
		if err != nil {
			return nil, err
		}
		scaleUp, updated := took[0], took[1]

		return append([]string{
			st.baselineLine(n),
			fmt.Sprintf("Advanced StatefulSet (Parallel) 0 -> %d Ready: %s", n, st.againstBase(scaleUp)),
			fmt.Sprintf("Advanced StatefulSet in-place update of %d pods, maxUnavailable 20%%: %s", n, st.againstBase(updated)),
			st.rssLine(),
			"where the time went:",
		}, explained...), nil
	})
}

// waitStatefulSet waits until set's controller has seen its latest generation and done says
// yes of its status.
func waitStatefulSet(ctx context.Context, set *appsv1beta1.StatefulSet, done func(appsv1beta1.StatefulSetStatus) bool) error {
	return waitFor(ctx, client.ObjectKeyFromObject(set), 200*time.Millisecond, 15*time.Minute, func(cur *appsv1beta1.StatefulSet) (any, bool) {
		return cur.Status, cur.Status.ObservedGeneration == cur.Generation && done(cur.Status)
	})
}

// BenchmarkBroadcastJob runs kruise-manager as its own process and measures a BroadcastJob from
// creation to Complete over 100 simulated nodes (BENCH_BCJ_NODES changes it): one pod per node,
// each bound by the scheduler through its node affinity and ending Succeeded at once. Baseline, in
// the same run: one client with no rate limit creating as many bare pods and the simulated nodes
// making them Ready.
func BenchmarkBroadcastJob(b *testing.B) {
	n := envInt("BENCH_BCJ_NODES", 100)
	// The job selects the bench's own nodes by label, so that nodes other benchmarks leave
	// behind do not count.
	const pool = "bench.kruise.io/broadcastjob"
	runStaged(b, stageSpec{namespace: "bench-broadcastjob", nodes: labelledNodes("bench-bcj", pool, n), baseline: n}, func(ctx context.Context, st *stage) ([]string, error) {

		job := kinds.BroadcastJob("bench", st.ns).NodeSelector(map[string]string{pool: "true"}).
			PodAnnotation(framework.AnnotationPhase, string(corev1.PodSucceeded)).Obj()
		st.defer_(func() { _ = env.Client.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(st.ns)) })
		var succeeded int32
		took, explained, err := st.runPhases(ctx, phase{"broadcastjob", "BroadcastJob", func(ctx context.Context) error {
			if err := st.create(ctx, job); err != nil {
				return err
			}
			return waitFor(ctx, client.ObjectKeyFromObject(job), 100*time.Millisecond, 15*time.Minute, func(cur *appsv1alpha1.BroadcastJob) (any, bool) {
				succeeded = cur.Status.Succeeded
				return cur.Status, cur.Status.Phase == appsv1alpha1.PhaseCompleted
			})
		}})
		if err != nil {
			return nil, err
		}

		return append([]string{
			st.baselineLine(n),
			fmt.Sprintf("BroadcastJob over %d nodes, created -> Complete (%d pods succeeded): %s", n, succeeded, st.againstBase(took[0])),
			"where the time went:",
		}, explained...), nil
	})
}

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
