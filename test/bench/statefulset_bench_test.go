package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkStatefulSet1000 runs kruise-manager as its own process and measures a Parallel
// Advanced StatefulSet going from 0 to 1000 Ready pods, then an in-place image update of all of
// them with maxUnavailable 20%. Baseline, in the same run: one client with no rate limit
// creating 1000 bare pods and the simulated nodes making them Ready. It also prints the
// manager's peak RSS. BENCH_REPLICAS changes the size.
func BenchmarkStatefulSet1000(b *testing.B) {
	n := envInt("BENCH_REPLICAS", 1000)
	runStaged(b, stageSpec{namespace: "bench-statefulset", nodes: benchPoolNodes("bench-sts", n), baseline: n,
		sim: []framework.SimOption{framework.WithImageChangeDelay(0)}}, func(ctx context.Context, st *stage) ([]string, error) {
		set := kinds.StatefulSet("bench", st.ns).Replicas(int32(n)).Image("registry.example.com/bench:1").
			PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).Obj()
		set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("20%"))
		set.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
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
