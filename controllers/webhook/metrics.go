package webhook

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/internal/promreg"
)

// Metrics measures admission handlers.
type Metrics struct {
	duration *prometheus.HistogramVec
	clock    clock.PassiveClock
}

// MetricsOption changes how NewMetrics measures.
type MetricsOption func(*Metrics)

// WithMetricsClock has the metrics time handlers with c instead of the wall clock.
func WithMetricsClock(c clock.PassiveClock) MetricsOption {
	return func(m *Metrics) { m.clock = c }
}

// durationBuckets are kruise_webhook_duration_seconds' upper bounds. Pod admission is held to a
// p99 of 2 ms with hundreds of SidecarSets and WorkloadSpreads present, so the buckets below
// 5 ms are fine enough to tell 0.25, 0.5, 1, 2 and 3 ms apart; above, they follow the
// apiserver's webhook timeout (at most 30 s, 10 s by default).
var durationBuckets = []float64{0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// NewMetrics registers kruise_webhook_duration_seconds with reg. A second call with the same
// registry (two managers in one process) shares the first one's collector.
func NewMetrics(reg prometheus.Registerer, opts ...MetricsOption) (*Metrics, error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kruise_webhook_duration_seconds",
		Help:    "Time an admission handler took, by canonical path and whether it allowed the request.",
		Buckets: durationBuckets,
	}, []string{"path", "allowed"})
	h, err := promreg.Register(reg, h)
	if err != nil {
		return nil, err
	}
	m := &Metrics{duration: h, clock: clock.RealClock{}}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Instrument wraps h so that each request is observed under path.
func (m *Metrics) Instrument(path string, h admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		start := m.clock.Now()
		resp := h.Handle(ctx, req)
		m.duration.WithLabelValues(path, strconv.FormatBool(resp.Allowed)).Observe(m.clock.Since(start).Seconds())
		return resp
	})
}
