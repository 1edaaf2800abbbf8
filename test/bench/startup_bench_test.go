package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// BenchmarkLargeStartup measures kruise-manager's start-up with many SidecarSets and pods already
// in the apiserver, created while no manager runs: BENCH_STARTUP_SIDECARSETS (2000; 20,000
// under make bench-large) and BENCH_STARTUP_PODS (1000; 10,000). It starts the manager twice,
// as its own process: first with every SidecarSet's status still empty (a first install over
// existing objects), then again once every status has caught up (a restart, the common case).
// For each it prints the time from the process start to ready (webhook serving and the
// caBundles patched), to the SidecarSet controller's first reconcile, and to every SidecarSet
// reconciled (its status caught up), with the manager's API writes meanwhile and its peak RSS.
func BenchmarkLargeStartup(b *testing.B) {
	runScenario(b, runStartupScenario)
}

func runStartupScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	sets := scaled("BENCH_STARTUP_SIDECARSETS", 2000, 20000)
	pods := scaled("BENCH_STARTUP_PODS", 1000, 10000)
	const ns = "bench-startup"
	if err := env.Client.Create(ctx, builder.Namespace(ns).Obj()); err != nil {
		return nil, err
	}
	defer func() {
		_ = env.Client.DeleteAllOf(context.Background(), &appsv1alpha1.SidecarSet{})
		_ = env.Client.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
		_ = env.Client.Delete(context.Background(), builder.Namespace(ns).Obj())
	}()
	if _, err := buildBinary(ctx, "github.com/kruise-addon/kruise-addon/cmd/kruise-manager"); err != nil {
		return nil, err
	}
	createStart := time.Now()
	if err := createInParallel(ctx, sets, func(c client.Client, i int) error { return c.Create(ctx, otherSidecarSet(i)) }); err != nil {
		return nil, fmt.Errorf("create SidecarSets: %w", err)
	}
	if err := createInParallel(ctx, pods, func(c client.Client, i int) error {
		return c.Create(ctx, builder.Pod(fmt.Sprintf("web-%d", i), ns).Label("app", "web").Obj())
	}); err != nil {
		return nil, fmt.Errorf("create pods: %w", err)
	}
	out := []string{fmt.Sprintf("created %d SidecarSets and %d pods in %v", sets, pods, time.Since(createStart).Round(time.Millisecond))}
	for _, run := range []struct{ name, desc string }{{"first", "first start, statuses empty"}, {"restart", "restart, statuses caught up"}} {
		lines, err := timeStartup(ctx, b.TempDir(), run.name, run.desc, sets)
		out = append(out, lines...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// timeStartup starts a manager and times it, from its process's start, until it is ready, until
// its SidecarSet controller's first reconcile, and until it has reconciled each of the sets
// SidecarSets and every status has caught up; then it stops it.
func timeStartup(ctx context.Context, dir, name, desc string, sets int) ([]string, error) {
	mgr, err := startManagerProcess(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer mgr.stop()
	ready, err := mgr.age()
	if err != nil {
		return nil, err
	}
	end := mgr.observe.observe(ctx, "startup-"+name)
	var first, all time.Duration
	var reconciled float64
	behind := -1
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		if reconciled < float64(sets) {
			s, err := mgr.observe.scrape(ctx)
			if err != nil {
				return false, nil
			}
			reconciled = 0
			for k, v := range s {
				if strings.HasPrefix(k, "controller_runtime_reconcile_total{") && strings.Contains(k, "controller=sidecarset,") {
					reconciled += v
				}
			}
			if reconciled > 0 && first == 0 {
				first, _ = mgr.age()
			}
			return false, nil
		}
		// Listing every SidecarSet costs the apiserver: only once each has been reconciled, and
		// not more than once a second.
		if behind >= 0 {
			time.Sleep(time.Second)
		}
		var list appsv1alpha1.SidecarSetList
		if err := env.Client.List(ctx, &list); err != nil {
			return false, nil
		}
		behind = 0
		for i := range list.Items {
			if s := &list.Items[i]; s.Status.ObservedGeneration != s.Generation || s.Status.LatestRevision == "" {
				behind++
			}
		}
		if behind == 0 {
			all, _ = mgr.age()
		}
		return behind == 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %.0f reconciles of %d SidecarSets, %d statuses behind: %w (manager log %s)", desc, reconciled, sets, behind, err, mgr.log)
	}
	report := end()
	lines := []string{fmt.Sprintf("manager start-up with %d SidecarSets, %s, from the process's start: ready %v, first SidecarSet reconcile %v, every status caught up %v; peak RSS %s",
		sets, desc, ready.Round(10*time.Millisecond), first.Round(10*time.Millisecond), all.Round(10*time.Millisecond), mgr.peakRSS())}
	lines = append(lines, report.lines...)
	lines = append(lines, "kruise-manager log: "+mgr.saveLog("startup-"+name+"-manager"))
	return lines, nil
}

// createInParallel calls create for 0..n-1 from 8 goroutines, each with a client of its own
// without rate limit; no webhook runs, so the apiserver is the only limit.
func createInParallel(ctx context.Context, n int, create func(c client.Client, i int) error) error {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, -1
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := create(c, i); err != nil {
					errs <- fmt.Errorf("object %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
