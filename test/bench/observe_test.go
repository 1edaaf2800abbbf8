package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// observer explains a bench phase of a process that serves /metrics and /debug/pprof: it saves
// CPU profiles taken back to back through the phase, a heap profile at its end, and prints what
// the controllers did meanwhile (reconciles and requeues per controller, mean time a key waited
// in its queue, apiserver writes and conflicts). Profiles go to benchOutDir(); read a phase's
// CPU profiles together with `go tool pprof -top <binary> <dir>/<phase>-cpu-*.pb.gz`.
type observer struct {
	metricsURL string
	pprofURL   string
	dir        string
	http       *http.Client
}

// benchOutDir is where benchmarks leave their profiles: BENCH_OUT, or bin/bench in the tree.
func benchOutDir() string {
	if d := os.Getenv("BENCH_OUT"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "bin", "bench")
}

func newObserver(metricsAddr, pprofAddr string) (*observer, error) {
	dir := benchOutDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &observer{
		metricsURL: "http://" + metricsAddr + "/metrics",
		pprofURL:   "http://" + pprofAddr + "/debug/pprof/",
		dir:        dir,
		http:       &http.Client{Timeout: 2 * time.Minute},
	}, nil
}

// phase starts observing the phase called name; the returned function ends it and returns the
// lines to print. Observation never fails the bench: what could not be read is said in the lines.
func (o *observer) phase(ctx context.Context, name string) func() []string {
	before, berr := o.scrape(ctx)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var profiles int
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			// Back to back 5 s profiles: the phase's length is not known up front.
			err := o.save(ctx, "profile?seconds=5", fmt.Sprintf("%s-cpu-%03d.pb.gz", name, i))
			if err != nil {
				if ctx.Err() == nil {
					perr = err
				}
				return
			}
			profiles++
		}
	}()
	return func() []string {
		// Let the running 5 s profile finish so it covers the phase's end, then stop.
		time.Sleep(5 * time.Second)
		cancel()
		wg.Wait()
		out := []string{}
		if perr != nil {
			out = append(out, fmt.Sprintf("  %s: CPU profile failed: %v", name, perr))
		} else {
			out = append(out, fmt.Sprintf("  %s: %d CPU profiles of 5 s and a heap profile in %s/%s-*.pb.gz", name, profiles, o.dir, name))
		}
		if err := o.save(context.Background(), "heap", name+"-heap.pb.gz"); err != nil {
			out = append(out, fmt.Sprintf("  %s: heap profile failed: %v", name, err))
		}
		after, aerr := o.scrape(context.Background())
		if err := errors.Join(berr, aerr); err != nil {
			return append(out, fmt.Sprintf("  %s: metrics unreadable: %v", name, err))
		}
		return append(out, explain(name, before, after)...)
	}
}

func (o *observer) save(ctx context.Context, what, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.pprofURL+what, nil)
	if err != nil {
		return err
	}
	resp, err := o.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", what, resp.Status)
	}
	f, err := os.Create(filepath.Join(o.dir, file))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sample is one scrape: every counter, and every histogram's sum and count, by metric name and
// its labels rendered as `name{k=v,...}`.
type sample map[string]float64

func (o *observer) scrape(ctx context.Context) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := o.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	s := sample{}
	for name, fam := range families {
		for _, m := range fam.GetMetric() {
			key := name + labelString(m)
			switch {
			case m.GetCounter() != nil:
				s[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				s[key+"_sum"] = m.GetHistogram().GetSampleSum()
				s[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return s, nil
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// explain turns two scrapes into the lines that say where a phase's time went.
func explain(phase string, before, after sample) []string {
	delta := func(key string) float64 { return after[key] - before[key] }
	// Reconciles and requeues per controller, and the mean wait of a key in its queue.
	type ctl struct{ total, requeue, errs, waitSum, waitN, workSum float64 }
	ctls := map[string]*ctl{}
	get := func(n string) *ctl {
		if ctls[n] == nil {
			ctls[n] = &ctl{}
		}
		return ctls[n]
	}
	var writes, conflicts, reads float64
	for key := range after {
		name, labels, _ := strings.Cut(key, "{")
		lv := parseLabels(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(labels, "_sum"), "_count"), "}"))
		switch {
		case name == "controller_runtime_reconcile_total":
			c := get(lv["controller"])
			c.total += delta(key)
			if r := lv["result"]; r == "requeue" || r == "requeue_after" {
				c.requeue += delta(key)
			}
		case name == "controller_runtime_reconcile_errors_total":
			get(lv["controller"]).errs += delta(key)
		case name == "workqueue_queue_duration_seconds" && strings.HasSuffix(key, "_sum"):
			get(lv["name"]).waitSum += delta(key)
		case name == "workqueue_queue_duration_seconds" && strings.HasSuffix(key, "_count"):
			get(lv["name"]).waitN += delta(key)
		case name == "controller_runtime_reconcile_time_seconds" && strings.HasSuffix(key, "_sum"):
			get(lv["controller"]).workSum += delta(key)
		case name == "rest_client_requests_total":
			switch lv["method"] {
			case "GET", "LIST", "WATCH":
				reads += delta(key)
			default:
				writes += delta(key)
				if lv["code"] == "409" {
					conflicts += delta(key)
				}
			}
		}
	}
	var names []string
	for n, c := range ctls {
		if c.total > 0 || c.waitN > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := []string{fmt.Sprintf("  %s: apiserver writes %.0f (409 conflicts %.0f), reads %.0f", phase, writes, conflicts, reads)}
	for _, n := range names {
		c := ctls[n]
		wait := 0.0
		if c.waitN > 0 {
			wait = c.waitSum / c.waitN
		}
		out = append(out, fmt.Sprintf("  %s: controller %s: %.0f reconciles (%.0f requeued, %.0f errors), %.1f s working, mean queue wait %.0f ms",
			phase, n, c.total, c.requeue, c.errs, c.workSum, 1000*wait))
	}
	return out
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}
