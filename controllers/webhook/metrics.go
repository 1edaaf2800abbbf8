package webhook

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/internal/promreg"
)

// Metrics measures admission handlers.
type Metrics struct {
	duration *prometheus.HistogramVec
}

// NewMetrics registers kruise_webhook_duration_seconds with reg. A second call with the same
// registry (two managers in one process) shares the first one's collector.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kruise_webhook_duration_seconds",
		Help:    "Time an admission handler took, by canonical path and whether it allowed the request.",
		Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"path", "allowed"})
	h, err := promreg.Register(reg, h)
	if err != nil {
		return nil, err
	}
	return &Metrics{duration: h}, nil
}

// Instrument wraps h so that each request is observed under path.
func (m *Metrics) Instrument(path string, h admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		start := time.Now()
		resp := h.Handle(ctx, req)
		m.duration.WithLabelValues(path, strconv.FormatBool(resp.Allowed)).Observe(time.Since(start).Seconds())
		return resp
	})
}
