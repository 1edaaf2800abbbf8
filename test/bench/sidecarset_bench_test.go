package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// BenchmarkSidecarSet runs kruise-manager as its own process and measures, with baselines from
// the same run:
//   - pod admission latency (p50/p99 as the client sees it, and p50/p99 estimated from the
//     manager's kruise_webhook_duration_seconds for /mutate-pod) with 0, 100 and 1000 other
//     SidecarSets present, against creating pods in a namespace the pod webhook skips;
//   - an in-place sidecar image update of BENCH_SIDECARSET_PODS pods (default 300; set 1000 for
//     the large run), maxUnavailable 20%, against one client creating as many bare pods and the
//     nodes making them Ready;
//   - manager start-up until every one of BENCH_SIDECARSETS SidecarSets (default 1000; set
//     10000 for the large run) has a caught-up status, against start-up to ready with none;
//   - the manager's peak RSS.
//
// BENCH_ADMISSION_PODS (default 100) sets the pods created per admission size. Start-up times
// include linking the manager binary (the build cache is warmed first), in both figures.
func BenchmarkSidecarSet(b *testing.B) {
	runScenario(b, runSidecarSetScenario)
}

func runSidecarSetScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	c := env.Client
	const (
		ns      = "bench-sidecarset"
		skipped = "bench-sidecarset-skipped"
		upNs    = "bench-sidecarset-upgrade"
	)
	for _, n := range []*corev1.Namespace{builder.Namespace(ns).Obj(), builder.Namespace(upNs).Obj(),
		// The pod webhook skips namespaces labelled as the add-on's own: the no-webhook baseline.
		builder.Namespace(skipped).Label("control-plane", "openkruise").Obj()} {
		if err := c.Create(ctx, n); err != nil {
			return nil, err
		}
		defer func(n *corev1.Namespace) { _ = c.Delete(context.Background(), n) }(n)
	}
	defer func() { _ = c.DeleteAllOf(context.Background(), &appsv1alpha1.SidecarSet{}) }()
	var out []string

	ports, err := framework.FreePorts(1)
	if err != nil {
		return nil, err
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	// Warm the build cache, so that both timed start-ups below only link.
	if _, err := buildBinary(ctx, "github.com/kruise-addon/kruise-addon/cmd/kruise-manager"); err != nil {
		return nil, err
	}
	start := time.Now()
	mgr, err := startManagerProcess(ctx, b.TempDir(), "--metrics-addr="+metricsAddr)
	if err != nil {
		return nil, err
	}
	defer func() { mgr.stop() }()
	emptyStart := time.Since(start)

	// Admission.
	perSize := envInt("BENCH_ADMISSION_PODS", 100)
	match := benchSidecarSet("bench-match", ns, "web")
	if err := c.Create(ctx, match); err != nil {
		return nil, err
	}
	created := 0
	for _, size := range []int{0, 100, 1000} {
		for ; created < size; created++ {
			if err := c.Create(ctx, otherSidecarSet(created)); err != nil {
				return nil, fmt.Errorf("create sidecarset %d: %w", created, err)
			}
		}
		// Let the manager's cache see them before timing: the validating webhook lists
		// SidecarSets from it, so once it refuses a duplicate of the last one, the cache has it.
		if err := waitCacheHas(ctx, created); err != nil {
			return nil, err
		}
		base, err := createPodsTimed(ctx, skipped, perSize)
		if err != nil {
			return nil, fmt.Errorf("baseline pods: %w", err)
		}
		before, err := scrapeBuckets(ctx, metricsAddr, "/mutate-pod")
		if err != nil {
			return nil, err
		}
		with, err := createPodsTimed(ctx, ns, perSize)
		if err != nil {
			return nil, fmt.Errorf("pods through the webhook: %w", err)
		}
		after, err := scrapeBuckets(ctx, metricsAddr, "/mutate-pod")
		if err != nil {
			return nil, err
		}
		delta := after.minus(before)
		out = append(out, fmt.Sprintf("pod admission with 1 matching + %d other SidecarSets, %d pods: client p50 %v p99 %v (baseline without webhook p50 %v p99 %v; %.2fx, %.2fx); /mutate-pod metric p50 <= %s p99 <= %s over %d requests",
			size, perSize, pct(with, 50), pct(with, 99), pct(base, 50), pct(base, 99),
			ratio(pct(with, 50), pct(base, 50)), ratio(pct(with, 99), pct(base, 99)),
			delta.quantile(0.5), delta.quantile(0.99), delta.count()))
		for _, n := range []string{ns, skipped} {
			if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(n), client.GracePeriodSeconds(0)); err != nil {
				return nil, err
			}
		}
	}

	// In-place sidecar update.
	n := envInt("BENCH_SIDECARSET_PODS", 300)
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithNodes(benchPoolNodes("bench-ss", n)...), framework.WithSchedulerNamespaces(upNs),
		framework.WithWorkers(16), framework.WithStartDelay(0), framework.WithReadyDelay(0), framework.WithImageChangeDelay(0))
	if err != nil {
		return nil, err
	}
	defer func() { _ = sim.DeleteNodes(context.Background()); sim.Stop() }()
	base, _, err := rawPodsToReady(ctx, upNs, n)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	up := benchSidecarSet("bench-upgrade", upNs, "up")
	up.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("20%"))
	if err := c.Create(ctx, up); err != nil {
		return nil, err
	}
	if _, err := createPodsTimed(ctx, upNs, n, "up"); err != nil {
		return nil, err
	}
	if err := waitSidecarSet(ctx, "bench-upgrade", func(st appsv1alpha1.SidecarSetStatus) bool { return int(st.UpdatedReadyPods) == n }); err != nil {
		return nil, fmt.Errorf("pods ready: %w (manager log %s)", err, mgr.log)
	}
	start = time.Now()
	if err := updateObject(ctx, client.ObjectKey{Name: "bench-upgrade"}, func(cur *appsv1alpha1.SidecarSet) {
		cur.Spec.Containers[0].Image = "registry.example.com/agent:2"
	}); err != nil {
		return nil, err
	}
	if err := waitSidecarSet(ctx, "bench-upgrade", func(st appsv1alpha1.SidecarSetStatus) bool {
		return int(st.UpdatedPods) == n && int(st.UpdatedReadyPods) == n
	}); err != nil {
		return nil, fmt.Errorf("in-place update: %w (manager log %s)", err, mgr.log)
	}
	update := time.Since(start)
	out = append(out,
		fmt.Sprintf("baseline: %d bare pods created by one unlimited client and Ready on simulated nodes: %v", n, base.Round(time.Millisecond)),
		fmt.Sprintf("SidecarSet in-place sidecar update of %d pods, maxUnavailable 20%%: %v (%.1fx the baseline)", n, update.Round(time.Millisecond), update.Seconds()/base.Seconds()))
	rss := mgr.peakRSS()
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(upNs), client.GracePeriodSeconds(0)); err != nil {
		return nil, err
	}

	// Start-up with many SidecarSets, created while the manager is down.
	mgr.stop()
	// The apiserver drops the removed webhook configurations from its own cache a moment later.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, otherSidecarSet(created), client.DryRunAll) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("webhooks still called after the manager stopped: %w", err)
	}
	many := envInt("BENCH_SIDECARSETS", 1000)
	for i := created; i < many; i++ {
		if err := c.Create(ctx, otherSidecarSet(i)); err != nil {
			return nil, fmt.Errorf("create sidecarset %d: %w", i, err)
		}
	}
	start = time.Now()
	mgr, err = startManagerProcess(ctx, b.TempDir())
	if err != nil {
		return nil, err
	}
	ready := time.Since(start)
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list appsv1alpha1.SidecarSetList
		if err := c.List(ctx, &list); err != nil {
			return false, nil
		}
		behind := 0
		for i := range list.Items {
			if s := &list.Items[i]; s.Status.ObservedGeneration != s.Generation || s.Status.LatestRevision == "" {
				behind++
			}
		}
		last = fmt.Sprintf("%d of %d behind", behind, len(list.Items))
		return behind == 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("start-up: %w (%s; manager log %s)", err, last, mgr.log)
	}
	caughtUp := time.Since(start)
	out = append(out,
		fmt.Sprintf("manager start-up to ready with no SidecarSets: %v", emptyStart.Round(time.Millisecond)),
		fmt.Sprintf("manager start-up with %d SidecarSets: ready %v, every status caught up %v (%.1fx the empty start-up)",
			many+2, ready.Round(time.Millisecond), caughtUp.Round(time.Millisecond), caughtUp.Seconds()/emptyStart.Seconds()),
		fmt.Sprintf("kruise-manager peak RSS: first run (admission, update) %s; restart with %d SidecarSets %s", rss, many+2, mgr.peakRSS()))
	return out, nil
}

// waitCacheHas waits until the manager's cache holds the first n other SidecarSets: a SidecarSet
// reusing the container name of the n-th is refused only once the validating webhook sees it.
func waitCacheHas(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	probe := otherSidecarSet(n - 1)
	probe.Name = "bench-probe"
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "both inject"), nil
	})
}

// benchSidecarSet is a SidecarSet bound to ns injecting one agent into app=<app> pods.
func benchSidecarSet(name, ns, app string) *appsv1alpha1.SidecarSet {
	return &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1alpha1.SidecarSetSpec{
			Namespace: ns,
			Selector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Containers: []appsv1alpha1.SidecarContainer{{Container: corev1.Container{
				Name: name + "-agent", Image: "registry.example.com/agent:1"}}},
		},
	}
}

// otherSidecarSet is the i-th SidecarSet that matches none of the bench pods: nine in ten are
// bound to namespaces of their own, one in ten selects a label in every namespace.
func otherSidecarSet(i int) *appsv1alpha1.SidecarSet {
	s := benchSidecarSet(fmt.Sprintf("bench-other-%d", i), fmt.Sprintf("elsewhere-%d", i), "web")
	if i%10 == 0 {
		s.Spec.Namespace = ""
		s.Spec.Selector.MatchLabels["app"] = fmt.Sprintf("nomatch-%d", i)
	}
	return s
}

// createPodsTimed creates n pods labelled app=<label> (web by default) one after the other
// from a client without rate limit, and returns each create's latency.
func createPodsTimed(ctx context.Context, ns string, n int, label ...string) ([]time.Duration, error) {
	app := "web"
	if len(label) > 0 {
		app = label[0]
	}
	cs, err := unlimitedClientset()
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		pod := builder.Pod(fmt.Sprintf("%s-%d", app, i), ns).Label("app", app).Obj()
		start := time.Now()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(10 * time.Microsecond)
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

// waitSidecarSet waits until the SidecarSet's controller has seen its latest generation and
// done says yes of its status.
func waitSidecarSet(ctx context.Context, name string, done func(appsv1alpha1.SidecarSetStatus) bool) error {
	return waitFor(ctx, client.ObjectKey{Name: name}, 200*time.Millisecond, 15*time.Minute, func(cur *appsv1alpha1.SidecarSet) (any, bool) {
		return cur.Status, cur.Status.ObservedGeneration == cur.Generation && done(cur.Status)
	})
}

// buckets are the cumulative counts of one path's kruise_webhook_duration_seconds, by upper
// bound, summed over the allowed label.
type buckets map[float64]float64

// scrapeBuckets reads the manager's /metrics.
func scrapeBuckets(ctx context.Context, addr, path string) (buckets, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	out := buckets{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kruise_webhook_duration_seconds_bucket{") || !strings.Contains(line, `path="`+path+`"`) {
			continue
		}
		i := strings.Index(line, `le="`)
		j := strings.Index(line[i+4:], `"`)
		le, err := strconv.ParseFloat(line[i+4:i+4+j], 64)
		if err != nil {
			continue // +Inf
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			continue
		}
		out[le] += v
	}
	return out, sc.Err()
}

func (b buckets) minus(o buckets) buckets {
	out := buckets{}
	for k, v := range b {
		out[k] = v - o[k]
	}
	return out
}

func (b buckets) bounds() []float64 {
	var les []float64
	for k := range b {
		les = append(les, k)
	}
	sort.Float64s(les)
	return les
}

func (b buckets) count() int {
	les := b.bounds()
	if len(les) == 0 {
		return 0
	}
	return int(b[les[len(les)-1]])
}

// quantile returns the upper bound of the bucket holding quantile q.
func (b buckets) quantile(q float64) string {
	les := b.bounds()
	total := float64(b.count())
	if total == 0 {
		return "n/a"
	}
	for _, le := range les {
		if b[le] >= q*total {
			return (time.Duration(le * float64(time.Second))).String()
		}
	}
	return "> " + (time.Duration(les[len(les)-1] * float64(time.Second))).String()
}
