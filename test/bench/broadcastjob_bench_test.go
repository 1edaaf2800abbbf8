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
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

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
