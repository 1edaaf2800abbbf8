package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// hugeRun holds the figures of the one huge-CloneSet scenario a bench process runs.
var hugeRun struct {
	once sync.Once
	err  error
	out  []string
}

// BenchmarkCloneSetHugeReplicas runs kruise-manager as its own process and creates a CloneSet of
// 100,000 replicas (BENCH_HUGE_REPLICAS changes it) with no node to run them. It prints the
// manager's peak RSS while it creates the first BENCH_HUGE_PODS pods (3000 unless set) against
// its RSS just before the CloneSet existed, then scales to 0 and deletes the CloneSet. It also
// prints how long the validating webhook takes to answer an update listing 1000 podsToDelete
// names, against an update listing none.
func BenchmarkCloneSetHugeReplicas(b *testing.B) {
	hugeRun.once.Do(func() { hugeRun.out, hugeRun.err = runHugeCloneSetScenario(b) })
	if hugeRun.err != nil {
		b.Fatal(hugeRun.err)
	}
	for _, l := range hugeRun.out {
		fmt.Println(l)
	}
	hugeRun.out = nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func runHugeCloneSetScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	replicas := envInt("BENCH_HUGE_REPLICAS", 100_000)
	pods := envInt("BENCH_HUGE_PODS", 3000)
	ns := "bench-cloneset-huge"
	c := env.Client
	if err := c.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() { _ = c.Delete(context.Background(), builder.Namespace(ns).Obj()) }()

	mgr, err := startManagerProcess(ctx, b.TempDir())
	if err != nil {
		return nil, err
	}
	defer mgr.stop()
	idle, err := procStatusKB(mgr.benchProcess, "VmRSS")
	if err != nil {
		return nil, err
	}

	cs := kinds.CloneSet("huge", ns).Replicas(int32(replicas)).Image("registry.example.com/bench:1").Obj()
	start := time.Now()
	// The apiserver reads webhook configurations through its own informer, so it may call the
	// new manager with the CA of a moment ago; such a refusal is retried.
	var createErr error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		createErr = c.Create(ctx, cs)
		if createErr != nil && strings.Contains(createErr.Error(), "failed calling webhook") {
			return false, nil
		}
		return true, createErr
	})
	if err != nil {
		return nil, fmt.Errorf("create the CloneSet: %w (last: %v)", err, createErr)
	}
	// Deleted explicitly: no namespace controller runs here, and the installer benchmark refuses
	// to uninstall while any CloneSet remains.
	defer func() { _ = c.Delete(context.Background(), cs) }()
	if err := waitPodCount(ctx, ns, func(n int) bool { return n >= pods }); err != nil {
		return nil, fmt.Errorf("first %d pods: %w (manager log %s)", pods, err, mgr.log)
	}
	created := time.Since(start)
	peak, err := procStatusKB(mgr.benchProcess, "VmHWM")
	if err != nil {
		return nil, err
	}

	many, none, err := podsToDeleteLatency(ctx, cs)
	if err != nil {
		return nil, err
	}

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &appsv1alpha1.CloneSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cs), cur); err != nil {
			return err
		}
		cur.Spec.Replicas = ptr.To[int32](0)
		return c.Update(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	if err := waitPodCount(ctx, ns, func(n int) bool { return n == 0 }); err != nil {
		return nil, fmt.Errorf("scale to 0: %w (manager log %s)", err, mgr.log)
	}

	return []string{
		fmt.Sprintf("kruise-manager RSS before a %d-replica CloneSet: %d MB (baseline)", replicas, idle/1024),
		fmt.Sprintf("kruise-manager peak RSS while creating its first %d pods (%v): %d MB (%.2fx the baseline)",
			pods, created.Round(time.Millisecond), peak/1024, float64(peak)/float64(idle)),
		fmt.Sprintf("CloneSet webhook, update listing 1000 podsToDelete names (999 not its pods): %v (%.1fx an update listing none, %v)",
			many.Round(time.Microsecond), many.Seconds()/none.Seconds(), none.Round(time.Microsecond)),
	}, nil
}

// podsToDeleteLatency returns the median time the apiserver, through the CloneSet webhooks,
// takes to refuse an update listing 1000 podsToDelete names, and to accept one listing none.
func podsToDeleteLatency(ctx context.Context, cs *appsv1alpha1.CloneSet) (many, none time.Duration, err error) {
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("huge-none-%03d", i))
	}
	const rounds = 5
	var manyTimes, noneTimes []time.Duration
	for i := range rounds {
		cur := &appsv1alpha1.CloneSet{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), cur); err != nil {
			return 0, 0, err
		}
		withNames := cur.DeepCopy()
		withNames.Spec.ScaleStrategy.PodsToDelete = names
		start := time.Now()
		if err := env.Client.Update(ctx, withNames); err == nil || !strings.Contains(err.Error(), "podsToDelete") {
			return 0, 0, fmt.Errorf("an update listing 1000 missing pods was not refused for podsToDelete: %v", err)
		}
		manyTimes = append(manyTimes, time.Since(start))

		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels["bench-round"] = strconv.Itoa(i)
		start = time.Now()
		if err := env.Client.Update(ctx, cur); err != nil {
			return 0, 0, fmt.Errorf("a label-only update: %w", err)
		}
		noneTimes = append(noneTimes, time.Since(start))
	}
	return median(manyTimes), median(noneTimes), nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// waitPodCount waits until the number of pods in ns satisfies done.
func waitPodCount(ctx context.Context, ns string, done func(int) bool) error {
	last := -1
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		last = len(list.Items)
		return done(last), nil
	})
	if err != nil {
		return fmt.Errorf("%v; last count %d", err, last)
	}
	return nil
}

// procStatusKB reads a kB figure, such as VmRSS or VmHWM, from the process's /proc status.
func procStatusKB(p *benchProcess, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, p.cmd.Process.Pid)
}
