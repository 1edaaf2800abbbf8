package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// BenchmarkPodUnavailableBudgetConcurrentDelete measures pod DELETE admission through
// kruise-manager's /validate-pod when many clients delete Ready pods one budget covers at once,
// as a rollout or a node drain does: every deletion takes room from the same budget's status.
// Baseline, in the same run: the same deletions, as concurrent, before any webhook is
// configured. BENCH_PUB_PODS (default 50) pods per measurement, BENCH_PUB_CLIENTS (default 8)
// clients. A deletion the webhook refuses (the budget's status write lost to conflicts) is
// retried, as a client would, and counted. The manager's apiserver writes and 409 conflicts
// over the covered deletions are printed with them.
func BenchmarkPodUnavailableBudgetConcurrentDelete(b *testing.B) {
	n := envInt("BENCH_PUB_PODS", 50)
	clients := envInt("BENCH_PUB_CLIENTS", 8)
	var base latencies
	runStaged(b, stageSpec{namespace: "bench-pub-concurrent", beforeManager: func(ctx context.Context, st *stage) error {
		st.defer_(func() {
			_ = env.Client.DeleteAllOf(context.Background(), &policyv1alpha1.PodUnavailableBudget{}, client.InNamespace(st.ns))
		})
		names, err := createPods(ctx, st.cs, st.ns, "baseline", n, true)
		if err != nil {
			return err
		}
		if base, _, err = deletePodsConcurrently(ctx, st.cs, st.ns, names, clients); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		return nil
	}}, func(ctx context.Context, st *stage) ([]string, error) {
		ns, c, mgr, cs := st.ns, env.Client, st.mgr, st.cs
		if err := c.Create(ctx, benchBudget(ns, "covered", "covered", intstr.FromInt32(1))); err != nil {
			return nil, err
		}
		names, err := createCoveredPods(ctx, st, "covered", n)
		if err != nil {
			return nil, err
		}
		end := mgr.observe.phase(ctx, "pub-concurrent-delete")
		covered, refused, err := deletePodsConcurrently(ctx, cs, ns, names[:n-1], clients)
		explained := end()
		if err != nil {
			return nil, fmt.Errorf("covered pods: %w", err)
		}
		return append([]string{
			base.baseline(fmt.Sprintf("pod delete without pod webhooks, %d clients", clients), "deletes/s"),
			covered.against(base, fmt.Sprintf("pod delete through /validate-pod, %d clients, Ready pods one budget covers", clients), "deletes/s"),
			fmt.Sprintf("deletions refused and retried (the budget's status write lost to conflicts): %d", refused),
			fmt.Sprintf("kruise-manager peak RSS: %s", mgr.peakRSS()),
			"where the time of the covered deletions went (the manager's writes include its controller's):",
		}, explained...), nil
	})
}

// createCoveredPods creates n Ready pods app=<budget> once the pod webhook stamps such a pod with
// the budget of that name (it sees budgets through its cache), and waits until the budget
// counts them: room for all but one.
func createCoveredPods(ctx context.Context, st *stage, budget string, n int) ([]string, error) {
	ns, cs := st.ns, st.cs
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, builder.Pod("", ns).GenerateName("probe-").Label("app", budget).Obj(), metav1.CreateOptions{})
		if err != nil {
			return false, nil
		}
		_ = cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		return p.Annotations[policyv1alpha1.PodRelatedPubAnnotation] == budget, nil
	})
	if err != nil {
		return nil, fmt.Errorf("webhook never stamped a pod (log %s): %w", st.mgr.log, err)
	}
	names, err := createPods(ctx, cs, ns, budget, n, true)
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pub := &policyv1alpha1.PodUnavailableBudget{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: budget}, pub); err != nil {
			return false, nil
		}
		return pub.Status.UnavailableAllowed == int32(n-1), nil
	})
	if err != nil {
		return nil, fmt.Errorf("budget never counted the covered pods (log %s): %w", st.mgr.log, err)
	}
	return names, nil
}

// deletePodsConcurrently deletes the pods from the given number of clients at once and times
// each delete, retries included; it returns how many deletes were refused and retried.
func deletePodsConcurrently(ctx context.Context, cs kubernetes.Interface, ns string, names []string, clients int) (latencies, int64, error) {
	n := len(names)
	ds := make([]time.Duration, n)
	var refused atomic.Int64
	var next atomic.Int64
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					err := cs.CoreV1().Pods(ns).Delete(ctx, names[i], metav1.DeleteOptions{})
					switch {
					case err == nil || apierrors.IsNotFound(err):
						return true, nil
					case apierrors.IsForbidden(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err):
						refused.Add(1)
						return false, nil
					default:
						return false, err
					}
				})
				if err != nil {
					errs[w] = fmt.Errorf("delete pod %s: %w", names[i], err)
					return
				}
				ds[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	total := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return latencies{}, 0, err
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return latencies{n: n, p50: ds[n/2], p99: ds[(n*99)/100], rate: float64(n) / total.Seconds()}, refused.Load(), nil
}
