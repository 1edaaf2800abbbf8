package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkLargeFailover runs two kruise-manager processes with leader election on, with the
// lease timing of the chart's values.yaml, and kills the leader twice: with SIGKILL, as a
// crashed node, then, with a new standby started, with SIGTERM, as a rollout or a drain does.
// Right after each kill it scales a CloneSet (through its scale subresource, which no webhook
// of the dead leader stands in the way of) and prints the time until the standby has created
// the new pods, with the time the standby took the Lease. For SIGTERM it also prints when the
// old leader's process ended: before the new leader took the Lease, or the two overlapped.
// BENCH_FAILOVER_PODS (10; 1000 under make bench-large) is the CloneSet's size before the kill.
func BenchmarkLargeFailover(b *testing.B) {
	runScenario(b, runFailoverScenario)
}

// leaseAcquired is the line client-go's leader election logs when a replica takes the Lease.
const leaseAcquired = "Successfully acquired lease"

func runFailoverScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	timing, err := chartLeaseTiming()
	if err != nil {
		return nil, err
	}
	n := scaled("BENCH_FAILOVER_PODS", 10, 1000)
	ns := "bench-failover"
	if err := env.Client.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() {
		_ = env.Client.DeleteAllOf(context.Background(), kinds.CloneSet("", ns).Obj(), client.InNamespace(ns))
		_ = env.Client.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
		_ = env.Client.Delete(context.Background(), builder.Namespace(ns).Obj())
	}()
	if _, err := buildBinary(ctx, b.TempDir(), "github.com/kruise-addon/kruise-addon/cmd/kruise-manager"); err != nil {
		return nil, err
	}
	args := append([]string{"--enable-leader-election=true"}, timing.flags()...)
	var running []*managerProcess
	defer func() {
		for _, m := range running {
			m.stop()
		}
	}()
	start := func() (*managerProcess, error) {
		m, err := startManagerProcess(ctx, b.TempDir(), args...)
		if err == nil {
			running = append(running, m)
		}
		return m, err
	}
	for range 2 {
		if _, err := start(); err != nil {
			return nil, err
		}
	}
	cs := kinds.CloneSet("failover", ns).Replicas(int32(n)).Image("registry.example.com/bench:1").Obj()
	if err := env.Client.Create(ctx, cs); err != nil {
		return nil, err
	}
	out := []string{fmt.Sprintf("chart lease timing: %s", timing)}
	replicas := n
	signals := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL (a crash)", syscall.SIGTERM: "SIGTERM (a graceful stop)"}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		leader, standby, err := leaderOf(ctx, running)
		if err != nil {
			return nil, err
		}
		if _, err := waitPods(ctx, ns, func(p []corev1.Pod) bool { return len(p) == replicas }); err != nil {
			return nil, fmt.Errorf("before the %v: %w (leader log %s)", sig, err, leader.log)
		}
		replicas += 10
		killed := time.Now()
		if err := leader.cmd.Process.Signal(sig); err != nil {
			return nil, err
		}
		exited := make(chan time.Duration, 1)
		go func() { _ = leader.cmd.Wait(); exited <- time.Since(killed) }()
		if err := env.Client.SubResource("scale").Patch(ctx, kinds.CloneSet(cs.Name, ns).Obj(), client.RawPatch(types.MergePatchType,
			fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)), client.WithSubResourceBody(&autoscalingv1.Scale{})); err != nil {
			return nil, fmt.Errorf("scale the CloneSet: %w", err)
		}
		acquired, err := waitLogLine(ctx, standby.log, leaseAcquired, killed)
		if err != nil {
			return nil, err
		}
		if err := waitPodCount(ctx, ns, replicas); err != nil {
			return nil, fmt.Errorf("after the %v: %w (new leader log %s)", sig, err, standby.log)
		}
		reconciled := time.Since(killed)
		gone := <-exited
		running = remove(running, leader)
		line := fmt.Sprintf("failover after %s of the leader (%d pods): standby took the Lease after %v, created the new pods after %v",
			signals[sig], replicas-10, acquired.Round(time.Millisecond), reconciled.Round(time.Millisecond))
		if sig == syscall.SIGTERM {
			verdict := "no overlap"
			if gone > acquired {
				verdict = "OVERLAP: both could write"
			}
			line += fmt.Sprintf("; old leader's process ended after %v (%s)", gone.Round(time.Millisecond), verdict)
		}
		out = append(out, line)
		if sig == syscall.SIGKILL {
			if _, err := start(); err != nil { // the next standby
				return nil, err
			}
		}
	}
	return out, nil
}

// leaseTiming is the chart's manager.leaderElectionTiming.
type leaseTiming struct {
	LeaseDuration string `json:"leaseDuration"`
	RenewDeadline string `json:"renewDeadline"`
	RetryPeriod   string `json:"retryPeriod"`
}

func (t leaseTiming) flags() []string {
	return []string{"--leader-election-lease-duration=" + t.LeaseDuration,
		"--leader-election-renew-deadline=" + t.RenewDeadline, "--leader-election-retry-period=" + t.RetryPeriod}
}

func (t leaseTiming) String() string {
	return fmt.Sprintf("lease %s, renew deadline %s, retry period %s", t.LeaseDuration, t.RenewDeadline, t.RetryPeriod)
}

// chartLeaseTiming reads the lease timing from the chart's own values.yaml, so that the
// benchmark runs the managers as the chart's defaults do.
func chartLeaseTiming() (leaseTiming, error) {
	data, err := os.ReadFile(filepath.Join("..", "..", "charts", "kruise", "values.yaml"))
	if err != nil {
		return leaseTiming{}, err
	}
	var v struct {
		Manager struct {
			Timing leaseTiming `json:"leaderElectionTiming"`
		} `json:"manager"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return leaseTiming{}, fmt.Errorf("read the chart's values.yaml: %w", err)
	}
	if t := v.Manager.Timing; t.LeaseDuration == "" || t.RenewDeadline == "" || t.RetryPeriod == "" {
		return leaseTiming{}, fmt.Errorf("the chart's values.yaml has no complete manager.leaderElectionTiming: %+v", t)
	}
	return v.Manager.Timing, nil
}

// leaderOf waits until one of two running managers has taken the Lease (its log says so) and
// returns it and the other.
func leaderOf(ctx context.Context, running []*managerProcess) (leader, standby *managerProcess, err error) {
	if len(running) != 2 {
		return nil, nil, fmt.Errorf("%d managers run, want 2", len(running))
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for i, m := range running {
			if logHas(m.log, leaseAcquired) {
				leader, standby = m, running[1-i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("no manager took the Lease: %w", err)
	}
	return leader, standby, nil
}

func logHas(path, s string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), s)
}

// waitLogLine waits until the log at path holds s and returns how long after since that was.
func waitLogLine(ctx context.Context, path, s string, since time.Time) (time.Duration, error) {
	var at time.Duration
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		at = time.Since(since)
		return logHas(path, s), nil
	})
	if err != nil {
		return 0, fmt.Errorf("no %q in %s: %w", s, path, err)
	}
	return at, nil
}

// waitPodCount waits until ns holds n pods, reading them often enough to time a failover.
func waitPodCount(ctx context.Context, ns string, n int) error {
	var have int
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		have = len(pods.Items)
		return have == n, nil
	})
	if err != nil {
		return fmt.Errorf("%d pods in %s, want %d: %w", have, ns, n, err)
	}
	return nil
}

func remove(ms []*managerProcess, m *managerProcess) []*managerProcess {
	out := ms[:0]
	for _, x := range ms {
		if x != m {
			out = append(out, x)
		}
	}
	return out
}
