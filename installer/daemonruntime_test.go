package installer

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// exposition is what a daemon that detected rt serves on /metrics: the daemon's own metric,
// beside another, served by Prometheus' handler as text.
func exposition(t *testing.T, rt *cri.Runtime) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kruise_daemon_other", Help: "another metric"})
	reg.MustRegister(other)
	if rt != nil {
		reg.MustRegister(cri.InfoMetric(rt))
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

func TestParseRuntimeInfo(t *testing.T) {
	cases := map[string]struct {
		rt      *cri.Runtime
		want    DaemonRuntime
		wantErr bool
	}{
		"containerd as the daemon publishes it": {
			rt:   &cri.Runtime{Name: "containerd", RuntimeName: "containerd", RuntimeVersion: "v1.6.20", Endpoint: "unix:///hostvarrun/containerd/containerd.sock"},
			want: DaemonRuntime{Name: "containerd", RuntimeName: "containerd", RuntimeVersion: "v1.6.20", Endpoint: "unix:///hostvarrun/containerd/containerd.sock"},
		},
		"label values with quotes and backslashes are unescaped": {
			rt:   &cri.Runtime{Name: "cri-o", RuntimeName: `cri "o"`, RuntimeVersion: `1.30\beta`, Endpoint: "unix:///hostvarrun/crio.sock"},
			want: DaemonRuntime{Name: "cri-o", RuntimeName: `cri "o"`, RuntimeVersion: `1.30\beta`, Endpoint: "unix:///hostvarrun/crio.sock"},
		},
		"metrics without the runtime gauge say the daemon detected none": {wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseRuntimeInfo(exposition(t, tc.rt))
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Fatalf("error %v (-want +got):\n%s", err, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runtime (-want +got):\n%s", diff)
			}
		})
	}
}
