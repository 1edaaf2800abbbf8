package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// statefulSetRun holds the figures of the one Advanced StatefulSet scenario a bench process runs.
var statefulSetRun scenario

// BenchmarkStatefulSet1000 runs kruise-manager as its own process and measures a Parallel
// Advanced StatefulSet going from 0 to 1000 Ready pods, then an in-place image update of all of
// them with maxUnavailable 20%. Baseline, in the same run: one client with no rate limit
// creating 1000 bare pods and the simulated nodes making them Ready. It also prints the
// manager's peak RSS. BENCH_REPLICAS changes the size.
func BenchmarkStatefulSet1000(b *testing.B) {
	statefulSetRun.report(b, runStatefulSetScenario)
}

func runStatefulSetScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	n := benchReplicas()
	ns := "bench-statefulset"
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), builder.Namespace(ns).Obj()) }()
	var nodes []*corev1.Node
	for i := 0; i < (n+99)/100+1; i++ {
		nodes = append(nodes, builder.Node(fmt.Sprintf("bench-sts-%d", i)).Capacity("256", "1Ti", 200).Obj())
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

	set := kinds.StatefulSet("bench", ns).Replicas(int32(n)).Image("registry.example.com/bench:1").
		PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).Obj()
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("20%"))
	set.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	start := time.Now()
	endUp := mgr.observe.phase(ctx, "statefulset-scaleup")
	if err := c.Create(ctx, set); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), set) }()
	if err := waitStatefulSet(ctx, ns, "bench", func(st appsv1beta1.StatefulSetStatus) bool { return int(st.ReadyReplicas) == n }); err != nil {
		return nil, fmt.Errorf("scale up: %w (manager log %s)", err, mgr.log)
	}
	scaleUp := time.Since(start)
	explained := endUp()

	start = time.Now()
	endUpdate := mgr.observe.phase(ctx, "statefulset-inplace")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &appsv1beta1.StatefulSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), cur); err != nil {
			return err
		}
		cur.Spec.Template.Spec.Containers[0].Image = "registry.example.com/bench:2"
		return c.Update(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	if err := waitStatefulSet(ctx, ns, "bench", func(st appsv1beta1.StatefulSetStatus) bool {
		return int(st.UpdatedReadyReplicas) == n && int(st.UpdatedReplicas) == n && st.UpdateRevision == st.CurrentRevision
	}); err != nil {
		return nil, fmt.Errorf("in-place update: %w (manager log %s)", err, mgr.log)
	}
	update := time.Since(start)
	explained = append(explained, endUpdate()...)
	rss := mgr.peakRSS()

	return append([]string{
		fmt.Sprintf("baseline: %d bare pods created by one unlimited client and Ready on simulated nodes: %v", n, base.Round(time.Millisecond)),
		fmt.Sprintf("Advanced StatefulSet (Parallel) 0 -> %d Ready: %v (%.1fx the baseline)", n, scaleUp.Round(time.Millisecond), scaleUp.Seconds()/base.Seconds()),
		fmt.Sprintf("Advanced StatefulSet in-place update of %d pods, maxUnavailable 20%%: %v (%.1fx the baseline)", n, update.Round(time.Millisecond), update.Seconds()/base.Seconds()),
		fmt.Sprintf("kruise-manager peak RSS: %s (manager flags: --rest-config-qps=%d --rest-config-burst=%d)", rss, benchQPS, 2*benchQPS),
		"where the time went:",
	}, explained...), nil
}

func waitStatefulSet(ctx context.Context, ns, name string, done func(appsv1beta1.StatefulSetStatus) bool) error {
	var last appsv1beta1.StatefulSetStatus
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		set := &appsv1beta1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, set); err != nil {
			return false, nil
		}
		last = set.Status
		return set.Status.ObservedGeneration == set.Generation && done(set.Status), nil
	})
	if err != nil {
		return fmt.Errorf("%v; last status %+v", err, last)
	}
	return nil
}
