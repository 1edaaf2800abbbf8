package webhook

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func allow() admission.Handler {
	return admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})
}

func deny() admission.Handler {
	return admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Denied("no")
	})
}

func TestInstrumentCountsByPathAndVerdict(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("a second NewMetrics on the same registry: %v", err)
	}
	ctx := context.Background()
	m.Instrument("/mutate-pod", allow()).Handle(ctx, admission.Request{})
	again.Instrument("/mutate-pod", allow()).Handle(ctx, admission.Request{})
	m.Instrument("/validate-pod", deny()).Handle(ctx, admission.Request{})

	counts := map[string]uint64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kruise_webhook_duration_seconds" {
			continue
		}
		for _, metric := range mf.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			counts[strings.Join(labels, ",")] = metric.GetHistogram().GetSampleCount()
		}
	}
	wantCounts := map[string]uint64{"allowed=true,path=/mutate-pod": 2, "allowed=false,path=/validate-pod": 1}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

type recordingServer struct {
	webhook.Server
	paths []string
}

func (r *recordingServer) Register(path string, _ http.Handler) { r.paths = append(r.paths, path) }

func TestRegisterAdmission(t *testing.T) {
	cases := map[string]struct {
		handlers  map[string]admission.Handler
		wantPaths []string
		wantErr   string
	}{
		"each handler is served under every form of its path": {
			handlers: map[string]admission.Handler{
				"/mutate-apps-kruise-io-v1alpha1-cloneset": allow(),
				"/mutate-pod": allow(),
			},
			wantPaths: []string{"/mutate-apps-kruise-io-cloneset", "/mutate-apps-kruise-io-v1alpha1-cloneset", "/mutate-pod"},
		},
		"two handlers for one served path are refused": {
			handlers: map[string]admission.Handler{
				"/mutate-apps-kruise-io-v1alpha1-cloneset": allow(),
				"/mutate-apps-kruise-io-cloneset":          allow(),
			},
			wantErr: "webhook path /mutate-apps-kruise-io-cloneset is claimed by",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			srv := &recordingServer{}
			err = RegisterAdmission(srv, tc.handlers, m)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if !strings.HasPrefix(gotErr, tc.wantErr) || (tc.wantErr == "") != (gotErr == "") {
				t.Fatalf("error = %q, want prefix %q", gotErr, tc.wantErr)
			}
			sort.Strings(srv.paths)
			if diff := cmp.Diff(tc.wantPaths, srv.paths); diff != "" {
				t.Errorf("registered paths (-want +got):\n%s", diff)
			}
		})
	}
}

// spend is a handler that takes d on c and allows the request.
func spend(c *clocktesting.FakePassiveClock, d time.Duration) admission.Handler {
	return admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		c.SetTime(c.Now().Add(d))
		return admission.Allowed("")
	})
}

func TestDurationIsRecordedUnderItsPathInBucketsFineEnoughForTwoMilliseconds(t *testing.T) {
	cases := map[string]struct {
		took time.Duration
		// wantBound is the smallest bucket bound that counts the request.
		wantBound float64
	}{
		"a request of 0.2 ms falls under 0.25 ms":                 {took: 200 * time.Microsecond, wantBound: 0.00025},
		"a request of 0.4 ms falls under 0.5 ms, not with 0.2 ms": {took: 400 * time.Microsecond, wantBound: 0.0005},
		"a request of 1.5 ms is within the 2 ms target":           {took: 1500 * time.Microsecond, wantBound: 0.002},
		"a request of 2.5 ms is over the 2 ms target":             {took: 2500 * time.Microsecond, wantBound: 0.003},
		"a request of 20 ms still has a bucket of its own":        {took: 20 * time.Millisecond, wantBound: 0.025},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			c := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			m, err := NewMetrics(reg, WithMetricsClock(c))
			if err != nil {
				t.Fatal(err)
			}
			m.Instrument("/mutate-pod", spend(c, tc.took)).Handle(context.Background(), admission.Request{})
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, mf := range mfs {
				for _, metric := range mf.GetMetric() {
					path := ""
					for _, l := range metric.GetLabel() {
						if l.GetName() == "path" {
							path = l.GetValue()
						}
					}
					for _, b := range metric.GetHistogram().GetBucket() {
						if b.GetCumulativeCount() > 0 {
							got[path] = b.GetUpperBound()
							break
						}
					}
				}
			}
			if diff := cmp.Diff(map[string]float64{"/mutate-pod": tc.wantBound}, got); diff != "" {
				t.Errorf("smallest bucket counting the request, by path (-want +got):\n%s", diff)
			}
		})
	}
}
