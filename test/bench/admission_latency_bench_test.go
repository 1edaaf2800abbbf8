package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// BenchmarkPodAdmissionLatency measures pod admission server-side, by webhook path, with 100
// SidecarSets and 100 WorkloadSpreads in the namespace: it creates BENCH_ADMISSION_LATENCY_PODS
// (default 200) pods of a Job that 5 of the SidecarSets inject into and no WorkloadSpread
// targets, as many of a Job one WorkloadSpread places (a status write each), and deletes them
// all. It prints, per phase, p50 and p99 per path from the manager's
// kruise_webhook_duration_seconds (the handler's own time), per webhook name from the
// apiserver's apiserver_admission_webhook_admission_duration_seconds (the round trip the
// apiserver waits for), and the client's p50/p99 against the same pods created before any pod
// webhook was configured. The manager's CPU profiles of each phase land in bin/bench.
func BenchmarkPodAdmissionLatency(b *testing.B) {
	n := envInt("BENCH_ADMISSION_LATENCY_PODS", 200)
	const sidecarSets, injecting, spreads = 100, 5, 100
	jobs := map[string]*batchv1.Job{}
	var base latencies
	runStaged(b, stageSpec{namespace: "bench-admission", beforeManager: func(ctx context.Context, st *stage) error {
		for _, name := range []string{"baseline", "web", "spread"} {
			j := builder.Job(name, st.ns).Parallelism(int32(n)).Obj()
			if err := st.create(ctx, j); err != nil {
				return err
			}
			jobs[name] = j
		}
		var err error
		if base, err = createJobPodsTimed(ctx, st.cs, jobs["baseline"], n); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		return deleteNamespacePods(ctx, st)
	}}, func(ctx context.Context, st *stage) ([]string, error) {
		if err := createAdmissionObjects(ctx, st, sidecarSets, injecting, spreads, map[string]string{"web": "", "spread": "spread"}); err != nil {
			return nil, err
		}
		// The webhooks see SidecarSets and WorkloadSpreads through the manager's cache: start
		// once a probe pod of "spread" comes back with the last SidecarSet's sidecar and placed.
		if err := waitAdmissionWarm(ctx, st, jobs["spread"], fmt.Sprintf("bench-adm-spread-%d-agent", injecting-1)); err != nil {
			return nil, err
		}
		out := []string{base.baseline("pod create without pod webhooks, 1 client", "pods/s")}
		for _, p := range []struct{ job, what string }{
			{"web", fmt.Sprintf("pod create, %d SidecarSets (%d inject) and %d WorkloadSpreads present, none targets the pod", sidecarSets, injecting, spreads)},
			{"spread", fmt.Sprintf("pod create, %d SidecarSets (%d inject) and %d WorkloadSpreads present, one places the pod (status write each)", sidecarSets, injecting, spreads)},
		} {
			var l latencies
			lines, err := st.mgr.observe.admissionPhase(ctx, "admission-create-"+p.job, func(ctx context.Context) error {
				var err error
				l, err = createJobPodsTimed(ctx, st.cs, jobs[p.job], n)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w (manager log %s)", p.what, err, st.mgr.log)
			}
			out = append(append(out, l.against(base, p.what+", client", "pods/s")), lines...)
		}
		lines, err := st.mgr.observe.admissionPhase(ctx, "admission-delete", func(ctx context.Context) error { return deleteNamespacePods(ctx, st) })
		if err != nil {
			return nil, fmt.Errorf("delete the pods: %w (manager log %s)", err, st.mgr.log)
		}
		out = append(append(out, fmt.Sprintf("pod delete of the %d pods above, one at a time:", 2*n)), lines...)
		return append(out, st.rssLine()), nil
	})
}

// createAdmissionObjects creates, for the pods of st's namespace, sidecarSets SidecarSets, of
// which injecting inject into each app of apps, and spreads WorkloadSpreads, of which one
// places the pods of each Job named by a non-empty value of apps; the others select or target
// nothing that exists. All are deleted when st closes.
func createAdmissionObjects(ctx context.Context, st *stage, sidecarSets, injecting, spreads int, apps map[string]string) error {
	made := 0
	for app := range apps {
		for i := range injecting {
			if err := st.create(ctx, benchSidecarSet(fmt.Sprintf("bench-adm-%s-%d", app, i), st.ns, app)); err != nil {
				return err
			}
			made++
		}
	}
	for i := 0; made < sidecarSets; i, made = i+1, made+1 {
		if err := st.create(ctx, benchSidecarSet(fmt.Sprintf("bench-adm-decoy-%d", i), st.ns, fmt.Sprintf("decoy-%d", i))); err != nil {
			return err
		}
	}
	made = 0
	for _, job := range apps {
		if job == "" {
			continue
		}
		if err := st.create(ctx, kinds.WorkloadSpread("bench-adm-"+job, st.ns).Target("batch/v1", "Job", job).
			ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "50%").Obj()); err != nil {
			return err
		}
		made++
	}
	for i := 0; made < spreads; i, made = i+1, made+1 {
		if err := st.create(ctx, kinds.WorkloadSpread(fmt.Sprintf("bench-adm-decoy-%d", i), st.ns).Target("batch/v1", "Job", fmt.Sprintf("absent-%d", i)).
			ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "").Obj()); err != nil {
			return err
		}
	}
	return nil
}

// waitAdmissionWarm waits until a probe pod of job is admitted with sidecar injected and
// placed in a subset, so that what follows measures a warm cache.
func waitAdmissionWarm(ctx context.Context, st *stage, job *batchv1.Job, sidecar string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := st.cs.CoreV1().Pods(st.ns).Create(ctx, jobPodFor(job), metav1.CreateOptions{})
		if err != nil {
			return false, nil
		}
		_ = st.cs.CoreV1().Pods(st.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		injected := false
		for _, c := range p.Spec.Containers {
			injected = injected || c.Name == sidecar
		}
		return injected && p.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations] != "", nil
	})
	if err != nil {
		return fmt.Errorf("the pod webhook never injected %s and placed a pod (log %s): %w", sidecar, st.mgr.log, err)
	}
	return nil
}

// deleteNamespacePods deletes every pod of st's namespace, one at a time, as a user would.
func deleteNamespacePods(ctx context.Context, st *stage) error {
	list, err := st.cs.CoreV1().Pods(st.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range list.Items {
		if err := st.cs.CoreV1().Pods(st.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			return fmt.Errorf("delete pod %s: %w", p.Name, err)
		}
	}
	return nil
}

// admissionPhase runs run as the phase name of o (profiles and controller lines) and returns
// those lines with the admission latency by webhook path that the phase saw.
func (o *observer) admissionPhase(ctx context.Context, name string, run func(context.Context) error) ([]string, error) {
	before, berr := o.admissionLatency(ctx)
	end := o.phase(ctx, name)
	err := run(ctx)
	explained := end()
	if err != nil {
		return nil, err
	}
	after, aerr := o.admissionLatency(ctx)
	if berr != nil || aerr != nil {
		return append([]string{fmt.Sprintf("  %s: admission latency unreadable: %v %v", name, berr, aerr)}, explained...), nil
	}
	return append(after.minus(before).lines(name), explained...), nil
}

// admissionScrape is the admission latency histograms of the manager (by path) and of the
// apiserver (by webhook name and operation).
type admissionScrape struct{ manager, apiserver map[string]histogram }

// histogram is one series of a Prometheus histogram: cumulative counts by bound, and the sum.
type histogram struct {
	b   buckets
	sum float64
}

// admissionLatency reads kruise_webhook_duration_seconds from the manager, summed over
// allowed, and apiserver_admission_webhook_admission_duration_seconds from the apiserver.
func (o *observer) admissionLatency(ctx context.Context) (admissionScrape, error) {
	m, err := scrapeHistograms(ctx, o.http, o.metricsURL, "kruise_webhook_duration_seconds", "path")
	if err != nil {
		return admissionScrape{}, err
	}
	a, err := scrapeHistograms(ctx, o.apiserver, o.apiHost+"/metrics", "apiserver_admission_webhook_admission_duration_seconds", "name", "operation")
	return admissionScrape{manager: m, apiserver: a}, err
}

// scrapeHistograms reads the histogram metric at url, summing its series by the values of
// keys, joined with a space.
func scrapeHistograms(ctx context.Context, c *http.Client, url, metric string, keys ...string) (map[string]histogram, error) {
	families, err := scrapeFamilies(ctx, c, url)
	if err != nil {
		return nil, err
	}
	out := map[string]histogram{}
	for _, m := range families[metric].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		var key []string
		for _, k := range keys {
			key = append(key, labels[k])
		}
		h := out[strings.Join(key, " ")]
		if h.b == nil {
			h.b = buckets{}
		}
		for _, bk := range m.GetHistogram().GetBucket() {
			if !math.IsInf(bk.GetUpperBound(), 1) {
				h.b[bk.GetUpperBound()] += float64(bk.GetCumulativeCount())
			}
		}
		h.sum += m.GetHistogram().GetSampleSum()
		out[strings.Join(key, " ")] = h
	}
	return out, nil
}

func (s admissionScrape) minus(o admissionScrape) admissionScrape {
	sub := func(a, b map[string]histogram) map[string]histogram {
		out := map[string]histogram{}
		for k, h := range a {
			out[k] = histogram{b: h.b.minus(b[k].b), sum: h.sum - b[k].sum}
		}
		return out
	}
	return admissionScrape{manager: sub(s.manager, o.manager), apiserver: sub(s.apiserver, o.apiserver)}
}

// lines reports every path and webhook that saw requests: its count, mean, and the bucket
// bounds that hold its p50 and p99.
func (s admissionScrape) lines(phase string) []string {
	var out []string
	for _, side := range []struct {
		what string
		m    map[string]histogram
	}{
		{"manager's handler time (kruise_webhook_duration_seconds) for", s.manager},
		{"apiserver's round trip (apiserver_admission_webhook_admission_duration_seconds) for", s.apiserver},
	} {
		var keys []string
		for k, h := range side.m {
			if h.b.count() > 0 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			h := side.m[k]
			n := h.b.count()
			out = append(out, fmt.Sprintf("  %s: %s %s: %d requests, mean %v, p50 <= %s, p99 <= %s", phase, side.what, k, n,
				time.Duration(h.sum/float64(n)*float64(time.Second)).Round(10*time.Microsecond), h.b.quantile(0.5), h.b.quantile(0.99)))
		}
	}
	return out
}
