package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/server"
)

const (
	serveBenchNamespace = "bench-serve"
	serveBenchToken     = "bench-token-0123456789abcdef"
	serveConcurrency    = 20
)

// BenchmarkServerAPI measures the API's status and preflight calls (TLS, token, JSON; status
// also reads the nodes for its runtime check) against the library's Status and Preflight on a
// new installer per call, as the server makes one per request, on an installed add-on with
// three simulated nodes; and 20 concurrent status calls against 20 concurrent library calls.
// BENCH_SERVER_CALLS (default 30) sets the calls per figure.
//
// The baseline does not reuse one installer: its clients keep client-go's default rate limit
// (5 requests a second after a burst of 10), which a status of about ten requests exhausts, so
// a reused installer measures the limiter rather than the work.
//
// One round runs per bench process, whatever b.N asks: a round is already 140 calls of tens of
// milliseconds each, and the harness calls a benchmark again for every b.N it tries.
func BenchmarkServerAPI(b *testing.B) {
	serverAPIRun.Do(func() { runServerAPI(b) })
}

var serverAPIRun sync.Once

func runServerAPI(b *testing.B) {
	startTestBed(b)
	ctx := context.Background()
	i, err := installer.New(kubeconfigGetter())
	if err != nil {
		b.Fatal(err)
	}
	o := installer.Options{Namespace: serveBenchNamespace, Timeout: 3 * time.Minute,
		Set: []string{benchRegistry, "webhookConfiguration.failurePolicy.default=Ignore", "webhookConfiguration.timeoutSeconds=1"}}
	if _, err := i.Install(ctx, o); err != nil {
		b.Fatalf("install: %v", err)
	}
	defer func() {
		uo := installer.UninstallOptions{Namespace: serveBenchNamespace}
		uo.Timeout = 3 * time.Minute
		if _, err := i.Uninstall(context.Background(), uo); err != nil {
			b.Errorf("uninstall: %v", err)
		}
	}()
	ts := startBenchServer(b)
	client := ts.Client()
	n := serverCalls()
	statusPath := "/v1/clusters/bench/addon?namespace=" + serveBenchNamespace
	preflightBody := `{"namespace":"` + serveBenchNamespace + `","values":{"webhookConfiguration":{"timeoutSeconds":1}}}`
	// Each library call gets a new installer, as each API request does.
	fresh := func(f func(*installer.Installer) error) func() error {
		return func() error {
			li, err := installer.New(kubeconfigGetter())
			if err != nil {
				return err
			}
			return f(li)
		}
	}
	bench := installer.Options{Namespace: serveBenchNamespace}
	status := fresh(func(li *installer.Installer) error { _, err := li.Status(ctx, bench); return err })
	preflight := fresh(func(li *installer.Installer) error { _, err := li.Preflight(ctx, bench); return err })
	libStatus := samples(b, n, status)
	apiStatus := samples(b, n, func() error { return call(client, ts.URL, "GET", statusPath, "") })
	libPreflight := samples(b, n, preflight)
	apiPreflight := samples(b, n, func() error { return call(client, ts.URL, "POST", "/v1/clusters/bench/preflight", preflightBody) })
	libConc, libWall := concurrent(b, n, status)
	apiConc, apiWall := concurrent(b, n, func() error { return call(client, ts.URL, "GET", statusPath, "") })
	report("status", apiStatus, libStatus)
	report("preflight", apiPreflight, libPreflight)
	report(fmt.Sprintf("status, %d concurrent", serveConcurrency), apiConc, libConc)
	fmt.Printf("  %d concurrent status calls, wall time per round: API %v, library %v, ratio %.1fx\n",
		serveConcurrency, apiWall.Round(time.Millisecond), libWall.Round(time.Millisecond), float64(apiWall)/float64(libWall))
}

func startBenchServer(b *testing.B) *httptest.Server {
	b.Helper()
	a, err := server.AccessConfig{Tokens: []server.TokenEntry{{Name: "bench", Token: serveBenchToken, Role: server.ReadOnly}}}.Build()
	if err != nil {
		b.Fatal(err)
	}
	clusters, err := server.ClusterConfig{Clusters: []server.ClusterEntry{{Name: "bench", Kubeconfig: env.Kubeconfig}}}.Build(nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := server.New(server.Options{Clusters: clusters, Access: a})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewTLSServer(s)
	b.Cleanup(ts.Close)
	return ts
}

func call(c *http.Client, base, method, path, body string) error {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+serveBenchToken)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return nil
}

// samples times n sequential calls of f.
func samples(b *testing.B, n int, f func() error) []time.Duration {
	b.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	return out
}

// concurrent runs rounds of serveConcurrency calls of f at once until about n calls ran, and
// returns every call's time and the mean wall time of a round.
func concurrent(b *testing.B, n int, f func() error) ([]time.Duration, time.Duration) {
	b.Helper()
	rounds := max(1, n/serveConcurrency)
	var mu sync.Mutex
	var all []time.Duration
	var wall time.Duration
	for range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, serveConcurrency)
		start := time.Now()
		for range serveConcurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := time.Now()
				if err := f(); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				all = append(all, time.Since(s))
				mu.Unlock()
			}()
		}
		wg.Wait()
		wall += time.Since(start)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	return all, wall / time.Duration(rounds)
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	k := int(float64(len(s)-1) * p)
	return s[k]
}

func report(what string, api, lib []time.Duration) {
	ap50, ap99 := percentile(api, 0.50), percentile(api, 0.99)
	lp50, lp99 := percentile(lib, 0.50), percentile(lib, 0.99)
	fmt.Printf("API %s over %d calls: p50 %v p99 %v; library p50 %v p99 %v; ratio p50 %.1fx p99 %.1fx\n",
		what, len(api), ap50.Round(time.Microsecond), ap99.Round(time.Microsecond), lp50.Round(time.Microsecond), lp99.Round(time.Microsecond),
		float64(ap50)/float64(lp50), float64(ap99)/float64(lp99))
}

func serverCalls() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_SERVER_CALLS")); err == nil && v > 0 {
		return v
	}
	return 30
}
