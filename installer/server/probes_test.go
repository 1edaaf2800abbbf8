package server

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestHealthzAndReadyzNeedNoCallerAndReadyzFailsOnceTheServerStops(t *testing.T) {
	cases := []struct {
		name       string
		configure  []func(*Options)
		path       string
		wantStatus int
	}{
		{"healthz answers while the server serves", nil, "/healthz", http.StatusOK},
		{"readyz answers while the server takes operations", nil, "/readyz", http.StatusOK},
		{"healthz still answers while the server stops", []func(*Options){stopped}, "/healthz", http.StatusOK},
		{"readyz is 503 once the server stops", []func(*Options){stopped}, "/readyz", http.StatusServiceUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, defaultAccess(), nil, tc.configure...)
			req, err := http.NewRequest("GET", f.ts.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp := f.send(t, req, "")
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != retryAfterUnavailable {
				t.Errorf("Retry-After %q, want %s", resp.Header.Get("Retry-After"), retryAfterUnavailable)
			}
		})
	}
}

func TestMetricsCountAndTimeRequestsByRouteTemplateAndCode(t *testing.T) {
	f := newFixture(t, defaultAccess(), nil)
	for _, id := range []string{"op-first", "op-second"} {
		if status, body := f.call(t, nil, "GET", "/v1/operations/"+id, readerToken, nil); status != http.StatusNotFound {
			t.Fatalf("GET %s: status %d: %s", id, status, body)
		}
	}
	if status, _ := f.call(t, nil, "GET", "/v1/clusters", readerToken, nil); status != http.StatusOK {
		t.Fatalf("GET /v1/clusters: status %d", status)
	}
	if status, _ := f.call(t, nil, "GET", "/v1/clusters", "not-a-token-of-the-file", nil); status != http.StatusUnauthorized {
		t.Fatalf("GET /v1/clusters without a known token: status %d", status)
	}
	if status, _ := f.call(t, nil, "GET", "/no/such/path/op-first", readerToken, nil); status != http.StatusNotFound {
		t.Fatalf("GET an unknown path: status %d", status)
	}
	status, body := f.call(t, nil, "GET", "/metrics", readerToken, nil)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus's text format: %v", err)
	}
	want := map[string]float64{
		"/v1/operations/{id} get 404": 2,
		"/v1/clusters get 200":        1,
		"/v1/clusters get 401":        1,
		"other get 404":               1,
	}
	counted := series(fams["kruise_addon_serve_requests_total"], func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
	timed := series(fams["kruise_addon_serve_request_duration_seconds"], func(m *dto.Metric) float64 { return float64(m.GetHistogram().GetSampleCount()) })
	if diff := cmp.Diff(want, counted); diff != "" {
		t.Errorf("requests counted by route, method and code (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, timed); diff != "" {
		t.Errorf("requests timed by route, method and code (-want +got):\n%s", diff)
	}
	if strings.Contains(string(body), "op-first") {
		t.Errorf("a raw path is a label value:\n%s", body)
	}
}

// series reads a family's values by "route method code", leaving out /metrics' own request.
func series(f *dto.MetricFamily, value func(*dto.Metric) float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["route"] == "/metrics" {
			continue
		}
		out[fmt.Sprintf("%s %s %s", l["route"], l["method"], l["code"])] = value(m)
	}
	return out
}
