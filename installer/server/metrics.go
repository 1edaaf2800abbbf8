package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's own, served at /metrics from a registry of this server (so two
// servers in one process never share one), with the process's and Go's: open file
// descriptors and resident memory are what a flood of connections exhausts first.
type metrics struct {
	registry *prometheus.Registry
	// unauthenticated counts requests without a known caller by result: denied (401) or
	// rate_limited (429).
	unauthenticated *prometheus.CounterVec
	// connectionsRefused counts connections closed as soon as accepted, by limit: total or
	// per_client.
	connectionsRefused *prometheus.CounterVec
	// connectionsEvicted counts connections waiting for a request that were closed at the
	// total cap to make room for a new one.
	connectionsEvicted prometheus.Counter
	connections        prometheus.Gauge
	// bodiesRefused counts request bodies refused, by reason: too_large (413) or timeout (408).
	bodiesRefused *prometheus.CounterVec
	// requests counts answered requests, and duration times them, by route template, method
	// and status code.
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// otherRoute is the route label of a request no route matches (404, or 405 on a known path).
const otherRoute = "other"

// instrument counts and times the requests of one route.
func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	labels := prometheus.Labels{"route": route}
	return promhttp.InstrumentHandlerDuration(m.duration.MustCurryWith(labels),
		promhttp.InstrumentHandlerCounter(m.requests.MustCurryWith(labels), h))
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		unauthenticated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kruise_addon_serve_unauthenticated_requests_total",
			Help: "Requests without a known token or client certificate, by result: denied (401) or rate_limited (429).",
		}, []string{"result"}),
		connectionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kruise_addon_serve_connections_refused_total",
			Help: "Connections closed as soon as accepted, by the limit they were over: total or per_client.",
		}, []string{"limit"}),
		connectionsEvicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kruise_addon_serve_connections_evicted_total",
			Help: "Connections waiting for a request (new, or idle between requests) closed at the total cap to make room for a new one.",
		}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kruise_addon_serve_connections",
			Help: "Connections open now.",
		}),
		bodiesRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kruise_addon_serve_request_bodies_refused_total",
			Help: "Request bodies refused, by reason: too_large (413) or timeout (408).",
		}, []string{"reason"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kruise_addon_serve_requests_total",
			Help: "Requests answered, by route template (other for no route), method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kruise_addon_serve_request_duration_seconds",
			Help:    "Time to answer a request, by route template (other for no route), method and status code; an event stream's is its whole length.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "code"}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.unauthenticated, m.connectionsRefused, m.connectionsEvicted, m.connections, m.bodiesRefused,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	// Every label value is there from the start, so a scraper sees 0 rather than nothing.
	for _, v := range []string{"denied", "rate_limited"} {
		m.unauthenticated.WithLabelValues(v)
	}
	for _, v := range []string{"total", "per_client"} {
		m.connectionsRefused.WithLabelValues(v)
	}
	for _, v := range []string{"too_large", "timeout"} {
		m.bodiesRefused.WithLabelValues(v)
	}
	return m
}

// getMetrics serves the registry in Prometheus's text format.
func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request, _ Caller) {
	promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
