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
// lease timing of the chart's values.yaml and each in a pod of its own (POD_NAME, the Lease
// identity), and kills the leader three times: with SIGKILL and no restart, as a lost node; with
// SIGKILL and the process started again in its pod, as the kubelet restarts a crashed container;
// with SIGTERM, as a rollout or a drain does. A new standby is started before each kill. Right
// after each kill it scales a CloneSet (through its scale subresource, which no webhook of the
// dead leader stands in the way of) and prints which process took the Lease and when, and the
// time until the new pods exist. For SIGTERM it also prints when the old leader's process
// ended: before the new leader took the Lease, or the two overlapped.
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
	if _, err := buildBinary(ctx, "github.com/kruise-addon/kruise-addon/cmd/kruise-manager"); err != nil {
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
	cases := []struct {
		sig syscall.Signal
		// restart starts the killed leader again in its pod, as the kubelet restarts a
		// crashed container.
		restart bool
		what    string
	}{
		{syscall.SIGKILL, false, "SIGKILL, not restarted (a lost node)"},
		{syscall.SIGKILL, true, "SIGKILL, restarted in its pod (a crashed process)"},
		{syscall.SIGTERM, false, "SIGTERM (a graceful stop)"},
	}
	for _, c := range cases {
		for len(running) < 2 { // the next standby
			if _, err := start(); err != nil {
				return nil, err
			}
		}
		leader, standby, err := leaderOf(ctx, running)
		if err != nil {
			return nil, err
		}
		if _, err := waitPods(ctx, ns, func(p []corev1.Pod) bool { return len(p) == replicas }); err != nil {
			return nil, fmt.Errorf("before the %s: %w (leader log %s)", c.what, err, leader.log)
		}
		replicas += 10
		killed := time.Now()
		if err := leader.cmd.Process.Signal(c.sig); err != nil {
			return nil, err
		}
		exited := make(chan time.Duration, 1)
		go func() { _ = leader.cmd.Wait(); exited <- time.Since(killed) }()
		if err := env.Client.SubResource("scale").Patch(ctx, kinds.CloneSet(cs.Name, ns).Obj(), client.RawPatch(types.MergePatchType,
			fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)), client.WithSubResourceBody(&autoscalingv1.Scale{})); err != nil {
			return nil, fmt.Errorf("scale the CloneSet: %w", err)
		}
		running = remove(running, leader)
		candidates := []*managerProcess{standby}
		var gone time.Duration
		if c.restart { // the kubelet restarts a container once its process has died
			gone = <-exited
			restarted, err := startManagerProcessAs(ctx, b.TempDir(), podNameOf(leader), args...)
			if err != nil {
				return nil, err
			}
			running = append(running, restarted)
			candidates = append(candidates, restarted)
		}
		next, acquired, err := firstToLead(ctx, candidates, killed)
		if err != nil {
			return nil, err
		}
		if err := waitPodCount(ctx, ns, replicas); err != nil {
			return nil, fmt.Errorf("after the %s: %w (new leader log %s)", c.what, err, next.log)
		}
		reconciled := time.Since(killed)
		if !c.restart {
			gone = <-exited
		}
		who := "the standby"
		if next != standby {
			who = "the restarted leader"
		}
		line := fmt.Sprintf("failover after %s (%d pods): %s took the Lease after %v, created the new pods after %v",
			c.what, replicas-10, who, acquired.Round(time.Millisecond), reconciled.Round(time.Millisecond))
		if c.sig == syscall.SIGTERM {
			verdict := "no overlap"
			if gone > acquired {
				verdict = "OVERLAP: both could write"
			}
			line += fmt.Sprintf("; old leader's process ended after %v (%s)", gone.Round(time.Millisecond), verdict)
		}
		out = append(out, line)
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

// podNameOf is the pod m runs in: its POD_NAME, the Lease identity.
func podNameOf(m *managerProcess) string {
	for _, kv := range m.env {
		if v, ok := strings.CutPrefix(kv, "POD_NAME="); ok {
			return v
		}
	}
	return ""
}

// firstToLead waits until one of candidates logs that it took the Lease and returns it with
// the time since since.
func firstToLead(ctx context.Context, candidates []*managerProcess, since time.Time) (*managerProcess, time.Duration, error) {
	var leader *managerProcess
	var at time.Duration
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		at = time.Since(since)
		for _, m := range candidates {
			if logHas(m.log, leaseAcquired) {
				leader = m
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("no manager took the Lease: %w", err)
	}
	return leader, at, nil
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
