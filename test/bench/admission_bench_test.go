package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkWorkloadSpreadPodAdmission measures pod creation through kruise-manager's pod
// webhooks with 100 WorkloadSpreads in the namespace: pods of a Job one of them spreads (each
// recorded in a subset's creatingPods with a status write) and pods of a Job none of them
// targets (the lookup alone). Baseline, in the same run: the same pods created before any
// webhook is configured. One client, one create at a time; BENCH_WS_PODS (default 200) pods per
// measurement.
func BenchmarkWorkloadSpreadPodAdmission(b *testing.B) {
	n := envInt("BENCH_WS_PODS", 200)
	const spreads = 100
	jobs := map[string]*batchv1.Job{}
	var base latencies
	runStaged(b, stageSpec{namespace: "bench-ws", beforeManager: func(ctx context.Context, st *stage) error {
		cs := st.cs
		for _, name := range []string{"baseline", "spread", "unspread"} {
			j := builder.Job(name, st.ns).Parallelism(int32(n)).Obj()
			if err := env.Client.Create(ctx, j); err != nil {
				return err
			}
			jobs[name] = j
		}
		var err error
		if base, err = createJobPodsTimed(ctx, cs, jobs["baseline"], n); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		return nil
	}}, func(ctx context.Context, st *stage) ([]string, error) {
		ns, c, mgr, cs := st.ns, env.Client, st.mgr, st.cs
		// 99 WorkloadSpreads over Jobs that do not exist, and one over "spread" whose two
		// percentage subsets take every pod, so each pod costs a status write.
		for i := range spreads - 1 {
			ws := kinds.WorkloadSpread(fmt.Sprintf("decoy-%d", i), ns).Target("batch/v1", "Job", fmt.Sprintf("absent-%d", i)).
				ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "").Obj()
			if err := c.Create(ctx, ws); err != nil {
				return nil, err
			}
		}
		if err := c.Create(ctx, kinds.WorkloadSpread("spread", ns).Target("batch/v1", "Job", "spread").
			ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "50%").Obj()); err != nil {
			return nil, err
		}
		// The webhook sees the WorkloadSpreads through its cache: wait until a probe pod of
		// "spread" comes back placed, so the measurement starts warm.
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Create(ctx, jobPodFor(jobs["spread"]), metav1.CreateOptions{})
			if err != nil {
				return false, nil
			}
			_ = cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
			return p.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations] != "", nil
		})
		if err != nil {
			return nil, fmt.Errorf("webhook never placed a pod (log %s): %w", mgr.log, err)
		}
		unspread, err := createJobPodsTimed(ctx, cs, jobs["unspread"], n)
		if err != nil {
			return nil, fmt.Errorf("pods no WorkloadSpread targets: %w", err)
		}
		spread, err := createJobPodsTimed(ctx, cs, jobs["spread"], n)
		if err != nil {
			return nil, fmt.Errorf("pods of the spread Job: %w", err)
		}
		placed := 0
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "spread"}); err != nil {
			return nil, err
		}
		for _, p := range list.Items {
			if p.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations] != "" {
				placed++
			}
		}
		rss := mgr.peakRSS()
		return []string{
			base.baseline("pod create without pod webhooks, 1 client", "pods/s"),
			unspread.against(base, fmt.Sprintf("pod create with %d WorkloadSpreads present, pod targeted by none", spreads), "pods/s"),
			spread.against(base, fmt.Sprintf("pod create with %d WorkloadSpreads present, pod placed in a subset (status write each)", spreads), "pods/s"),
			fmt.Sprintf("pods of the spread Job carrying a subset: %d of %d", placed, n),
			fmt.Sprintf("kruise-manager peak RSS: %s", rss),
		}, nil
	})
}

// latencies summarises one run of creations.
type latencies struct {
	n        int
	p50, p99 time.Duration
	rate     float64
}

// baseline reports l as the baseline of what; per names the rate's unit.
func (l latencies) baseline(what, per string) string {
	return fmt.Sprintf("baseline: %s: %d pods, p50 %v, p99 %v, %.0f %s",
		what, l.n, l.p50.Round(10*time.Microsecond), l.p99.Round(10*time.Microsecond), l.rate, per)
}

// against reports l for what, each percentile with how many times base's it is; per names the
// rate's unit.
func (l latencies) against(base latencies, what, per string) string {
	return fmt.Sprintf("%s: %d pods, p50 %v (%.1fx the baseline), p99 %v (%.1fx), %.0f %s",
		what, l.n, l.p50.Round(10*time.Microsecond), l.p50.Seconds()/base.p50.Seconds(),
		l.p99.Round(10*time.Microsecond), l.p99.Seconds()/base.p99.Seconds(), l.rate, per)
}

// createJobPodsTimed creates n pods of job one after the other and times each create.
func createJobPodsTimed(ctx context.Context, cs kubernetes.Interface, job *batchv1.Job, n int) (latencies, error) {
	ds := make([]time.Duration, 0, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		t := time.Now()
		if _, err := cs.CoreV1().Pods(job.Namespace).Create(ctx, jobPodFor(job), metav1.CreateOptions{}); err != nil {
			return latencies{}, fmt.Errorf("create pod %d: %w", i, err)
		}
		ds = append(ds, time.Since(t))
	}
	total := time.Since(start)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return latencies{n: n, p50: ds[n/2], p99: ds[(n*99)/100], rate: float64(n) / total.Seconds()}, nil
}

// jobPodFor is a pod controlled by job, named by the apiserver as a ReplicaSet's would be.
func jobPodFor(job *batchv1.Job) *corev1.Pod {
	return builder.Pod("", job.Namespace).GenerateName(job.Name+"-").Label("app", job.Name).
		OwnedBy(builder.ControllerRef("batch/v1", "Job", job)).Obj()
}

// BenchmarkPodUnavailableBudgetDelete measures pod DELETE admission through kruise-manager's
// /validate-pod: with no budget in the namespace, with 100 budgets none of which covers the
// pod, and for Ready pods a budget covers (each deletion takes room with a status write).
// Baseline, in the same run: the same deletions before any webhook is configured. One client,
// one delete at a time; BENCH_PUB_PODS (default 50) pods per measurement.
func BenchmarkPodUnavailableBudgetDelete(b *testing.B) {
	n := envInt("BENCH_PUB_PODS", 50)
	const budgets = 100
	var base latencies
	runStaged(b, stageSpec{namespace: "bench-pub", beforeManager: func(ctx context.Context, st *stage) error {
		cs := st.cs
		// Deleted explicitly: no namespace controller runs here, and the benchmarks that follow
		// uninstall the add-on, which is refused while any budget remains.
		st.defer_(func() {
			_ = env.Client.DeleteAllOf(context.Background(), &policyv1alpha1.PodUnavailableBudget{}, client.InNamespace(st.ns))
		})
		baseNames, err := createPods(ctx, cs, st.ns, "baseline", n, false)
		if err != nil {
			return err
		}
		if base, err = deletePodsTimed(ctx, cs, st.ns, baseNames); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		return nil
	}}, func(ctx context.Context, st *stage) ([]string, error) {
		ns, c, mgr, cs := st.ns, env.Client, st.mgr, st.cs
		noneNames, err := createPods(ctx, cs, ns, "none", n, true)
		if err != nil {
			return nil, err
		}
		none, err := deletePodsTimed(ctx, cs, ns, noneNames)
		if err != nil {
			return nil, fmt.Errorf("no budgets: %w", err)
		}

		// 99 budgets over labels no pod has, and one covering "covered" that leaves room for all
		// but one of its pods.
		for i := range budgets - 1 {
			if err := c.Create(ctx, benchBudget(ns, fmt.Sprintf("decoy-%d", i), fmt.Sprintf("decoy-%d", i), intstr.FromInt32(1))); err != nil {
				return nil, err
			}
		}
		if err := c.Create(ctx, benchBudget(ns, "covered", "covered", intstr.FromInt32(1))); err != nil {
			return nil, err
		}
		uncoveredNames, err := createPods(ctx, cs, ns, "uncovered", n, true)
		if err != nil {
			return nil, err
		}
		coveredNames, err := createCoveredPods(ctx, st, "covered", n)
		if err != nil {
			return nil, err
		}
		uncovered, err := deletePodsTimed(ctx, cs, ns, uncoveredNames)
		if err != nil {
			return nil, fmt.Errorf("uncovered pods: %w", err)
		}
		covered, err := deletePodsTimed(ctx, cs, ns, coveredNames[:n-1])
		if err != nil {
			return nil, fmt.Errorf("covered pods: %w", err)
		}
		return []string{
			base.baseline("pod delete without pod webhooks, 1 client", "deletes/s"),
			none.against(base, "pod delete through /validate-pod, 0 budgets", "deletes/s"),
			uncovered.against(base, fmt.Sprintf("pod delete through /validate-pod, %d budgets, pod covered by none", budgets), "deletes/s"),
			covered.against(base, fmt.Sprintf("pod delete through /validate-pod, %d budgets, Ready pod covered (status write each)", budgets), "deletes/s"),
			fmt.Sprintf("kruise-manager peak RSS: %s", mgr.peakRSS()),
		}, nil
	})
}

func benchBudget(ns, name, app string, minAvailable intstr.IntOrString) *policyv1alpha1.PodUnavailableBudget {
	return &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			MinAvailable: &minAvailable,
		},
	}
}

// createPods creates n bare pods app=<app>; ready marks them Running and Ready through the
// status subresource, as a kubelet would, so budgets count them. No node runs them: an
// unscheduled pod is deleted at once, so a delete's latency is admission and storage only.
func createPods(ctx context.Context, cs kubernetes.Interface, ns, app string, n int, ready bool) ([]string, error) {
	var names []string
	for i := range n {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, builder.Pod(app+"-"+strconv.Itoa(i), ns).Label("app", app).Obj(), metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create pod %d of %s: %w", i, app, err)
		}
		if ready {
			// The manager may write the new pod meanwhile (a budget's annotation): read it again on a conflict.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				cur.Status.Phase = corev1.PodRunning
				cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("mark pod %s ready: %w", p.Name, err)
			}
		}
		names = append(names, p.Name)
	}
	return names, nil
}

// deletePodsTimed deletes the pods one after the other and times each delete.
func deletePodsTimed(ctx context.Context, cs kubernetes.Interface, ns string, names []string) (latencies, error) {
	n := len(names)
	ds := make([]time.Duration, 0, n)
	start := time.Now()
	for _, name := range names {
		t := time.Now()
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return latencies{}, fmt.Errorf("delete pod %s: %w", name, err)
		}
		ds = append(ds, time.Since(t))
	}
	total := time.Since(start)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return latencies{n: n, p50: ds[n/2], p99: ds[(n*99)/100], rate: float64(n) / total.Seconds()}, nil
}
