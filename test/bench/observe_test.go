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
	"k8s.io/client-go/rest"
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
	// apiserver fetches the apiserver's own /debug/pprof, with the bench's credentials: on these
	// machines the apiserver, not the manager, is where most of a phase's CPU goes.
	apiserver *http.Client
	apiHost   string
	// procs are the processes whose CPU time each phase reports (benchPIDs), set once the
	// observed process runs.
	procs map[string]int
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
	cfg := rest.CopyConfig(env.Config)
	cfg.Timeout = 2 * time.Minute
	api, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &observer{
		metricsURL: "http://" + metricsAddr + "/metrics",
		pprofURL:   "http://" + pprofAddr + "/debug/pprof/",
		dir:        dir,
		http:       &http.Client{Timeout: 2 * time.Minute},
		apiserver:  api,
		apiHost:    strings.TrimSuffix(cfg.Host, "/"),
	}, nil
}

// phase starts observing the phase called name; the returned function ends it and returns the
// lines to print. Observation never fails the bench: what could not be read is said in the lines.
func (o *observer) phase(ctx context.Context, name string) func() []string {
	end := o.observe(ctx, name)
	return func() []string { return end().lines }
}

// phaseReport is what observing a phase found: the lines to print, and the CPU time each
// process of procs used during it (or why that could not be read).
type phaseReport struct {
	lines  []string
	cpu    map[string]time.Duration
	cpuErr error
	// writes counts the writes the apiserver handled in the phase, from every client, by
	// resource and verb ("pods/status PATCH"); nil when its metrics were unreadable.
	writes map[string]float64
}

// observe is phase, and also returns the CPU time the processes used, for a scenario that
// compares it with its baseline's.
func (o *observer) observe(ctx context.Context, name string) func() phaseReport {
	before, berr := o.scrape(ctx)
	apiBefore, aberr := o.scrapeAPIServer(ctx)
	cpu := newCPUMeter(o.procs)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var profiles int
	var perr, aerr error
	// The apiserver's CPU over the phase's first apiserverProfile: long enough to cover most of
	// a 1000-pod phase; a shorter phase waits for it at its end.
	wg.Add(1)
	go func() {
		defer wg.Done()
		aerr = o.get(parent, o.apiserver, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", o.apiHost, int(apiserverProfile.Seconds())), name+"-apiserver-cpu.pb.gz")
	}()
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
	return func() phaseReport {
		used, cerr := cpu.used()
		r := phaseReport{cpu: used, cpuErr: cerr}
		// Let the running 5 s profile finish so it covers the phase's end, then stop.
		time.Sleep(5 * time.Second)
		cancel()
		wg.Wait()
		out := []string{}
		if cerr != nil {
			out = append(out, fmt.Sprintf("  %s: CPU time unreadable: %v", name, cerr))
		} else {
			out = append(out, fmt.Sprintf("  %s: CPU time used: %s", name, describeCPU(used)))
		}
		if perr != nil {
			out = append(out, fmt.Sprintf("  %s: CPU profile failed: %v", name, perr))
		} else {
			out = append(out, fmt.Sprintf("  %s: %d CPU profiles of 5 s and a heap profile in %s/%s-*.pb.gz", name, profiles, o.dir, name))
		}
		if aerr != nil {
			out = append(out, fmt.Sprintf("  %s: apiserver CPU profile failed: %v", name, aerr))
		} else {
			out = append(out, fmt.Sprintf("  %s: the apiserver's CPU profile of the first %v in %s/%s-apiserver-cpu.pb.gz", name, apiserverProfile, o.dir, name))
		}
		out = append(out, o.heapNow(name))
		apiAfter, err := o.scrapeAPIServer(context.Background())
		if err = errors.Join(aberr, err); err != nil {
			out = append(out, fmt.Sprintf("  %s: apiserver metrics unreadable: %v", name, err))
		} else {
			out = append(out, explainAPIServer(name, apiBefore, apiAfter))
			r.writes, _ = apiserverWrites(apiBefore, apiAfter)
		}
		after, err := o.scrape(context.Background())
		if err := errors.Join(berr, err); err != nil {
			r.lines = append(out, fmt.Sprintf("  %s: metrics unreadable: %v", name, err))
			return r
		}
		r.lines = append(out, explain(name, before, after)...)
		return r
	}
}

// apiserverProfile is how long the apiserver's CPU profile of a phase runs.
const apiserverProfile = 8 * time.Second

func (o *observer) save(ctx context.Context, what, file string) error {
	return o.get(ctx, o.http, o.pprofURL+what, file)
}

// get saves what url answers to file in the observer's directory.
func (o *observer) get(ctx context.Context, c *http.Client, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
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
	return scrapeURL(ctx, o.http, o.metricsURL)
}

// scrapeAPIServer reads the apiserver's own metrics: its request counts cover every client,
// the node simulator's writes included.
func (o *observer) scrapeAPIServer(ctx context.Context) (sample, error) {
	return scrapeURL(ctx, o.apiserver, o.apiHost+"/metrics")
}

func scrapeURL(ctx context.Context, c *http.Client, url string) (sample, error) {
	families, err := scrapeFamilies(ctx, c, url)
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
			case m.GetGauge() != nil:
				s[key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				s[key+"_sum"] = m.GetHistogram().GetSampleSum()
				s[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return s, nil
}

// scrapeFamilies reads the metrics url serves, by name.
func scrapeFamilies(ctx context.Context, c *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
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

// explainAPIServer says which writes the apiserver handled in a phase, from every client, by
// resource and verb: e.g. "pods/status PATCH 2000".
func explainAPIServer(phase string, before, after sample) string {
	counts, total := apiserverWrites(before, after)
	var parts []string
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, v))
	}
	sort.Strings(parts)
	return fmt.Sprintf("  %s: the apiserver handled %.0f writes from all clients: %s", phase, total, strings.Join(parts, ", "))
}

// apiserverWrites counts the writes the apiserver handled between two samples, from every
// client, by resource and verb ("pods/status PATCH"), and their total.
func apiserverWrites(before, after sample) (map[string]float64, float64) {
	counts := map[string]float64{}
	var total float64
	for key, v := range after {
		name, labels, _ := strings.Cut(key, "{")
		if name != "apiserver_request_total" {
			continue
		}
		lv := parseLabels(strings.TrimSuffix(labels, "}"))
		switch lv["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		default:
			continue
		}
		d := v - before[key]
		if d <= 0 {
			continue
		}
		what := lv["resource"]
		if lv["subresource"] != "" {
			what += "/" + lv["subresource"]
		}
		counts[what+" "+lv["verb"]] += d
		total += d
	}
	return counts, total
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
