package server

import (
	"fmt"
	"net"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits bound what one client, or all of them, can take from the server: time, connections,
// bytes and requests without a known caller. They are the limits: section of the --config
// file; a field left out (or 0) takes its default.
//
//	limits:
//	  readTimeout: 30s
//	  maxConnectionsPerClient: 64
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers, and a new connection's TLS
	// handshake. Default 10s.
	ReadHeaderTimeout metav1.Duration `json:"readHeaderTimeout,omitempty"`
	// ReadTimeout bounds reading a whole request, headers and body: a body that has not come
	// in full by then is answered 408 and its connection closed. Default 30s.
	ReadTimeout metav1.Duration `json:"readTimeout,omitempty"`
	// WriteTimeout bounds writing a response. An event stream extends it before every event
	// and heartbeat, so only a client that stops reading is cut. Default 2m.
	WriteTimeout metav1.Duration `json:"writeTimeout,omitempty"`
	// IdleTimeout closes a keep-alive connection that waits longer for its next request.
	// Default 1m.
	IdleTimeout metav1.Duration `json:"idleTimeout,omitempty"`
	// MaxConnections caps the connections open at once. At the cap a new connection takes the
	// place of the one that has waited longest for a request (new, or idle between requests);
	// when every connection serves a request, the new one is closed as soon as it is accepted,
	// before TLS. Default 1024.
	MaxConnections int `json:"maxConnections,omitempty"`
	// MaxConnectionsPerClient caps the connections open at once from one client address (an
	// IPv6 client's /64); one more is closed as soon as it is accepted. Behind a proxy every
	// caller is the proxy's address. Default 64.
	MaxConnectionsPerClient int `json:"maxConnectionsPerClient,omitempty"`
	// MaxHeaderBytes bounds a request's headers, in bytes. Default 65536.
	MaxHeaderBytes int `json:"maxHeaderBytes,omitempty"`
	// MaxBodyBytes bounds a request's body, in bytes; a larger one is answered 413.
	// Default 1048576.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// UnauthenticatedPerMinute is how many requests without a known token or certificate one
	// client address may make per minute, after its burst; the others are answered 429 with
	// Retry-After. Default 60.
	UnauthenticatedPerMinute int `json:"unauthenticatedPerMinute,omitempty"`
	// UnauthenticatedBurst is how many such requests a client address may make at once.
	// Default 20.
	UnauthenticatedBurst int `json:"unauthenticatedBurst,omitempty"`
	// AuditSummaryInterval is how often the audit log gets one line counting the requests
	// without a known caller refused since the last one (they get no line each). Default 1m.
	AuditSummaryInterval metav1.Duration `json:"auditSummaryInterval,omitempty"`
}

// DefaultLimits are the limits of a --config file without a limits: section.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout:        metav1.Duration{Duration: 10 * time.Second},
		ReadTimeout:              metav1.Duration{Duration: 30 * time.Second},
		WriteTimeout:             metav1.Duration{Duration: 2 * time.Minute},
		IdleTimeout:              metav1.Duration{Duration: time.Minute},
		MaxConnections:           1024,
		MaxConnectionsPerClient:  64,
		MaxHeaderBytes:           64 << 10,
		MaxBodyBytes:             1 << 20,
		UnauthenticatedPerMinute: 60,
		UnauthenticatedBurst:     20,
		AuditSummaryInterval:     metav1.Duration{Duration: time.Minute},
	}
}

// withDefaults fills every field left 0 with its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *metav1.Duration }{
		{&l.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&l.ReadTimeout, &d.ReadTimeout}, {&l.WriteTimeout, &d.WriteTimeout},
		{&l.IdleTimeout, &d.IdleTimeout}, {&l.AuditSummaryInterval, &d.AuditSummaryInterval},
	} {
		if f.v.Duration == 0 {
			*f.v = *f.def
		}
	}
	for _, f := range []struct{ v, def *int }{
		{&l.MaxConnections, &d.MaxConnections}, {&l.MaxConnectionsPerClient, &d.MaxConnectionsPerClient},
		{&l.MaxHeaderBytes, &d.MaxHeaderBytes}, {&l.UnauthenticatedPerMinute, &d.UnauthenticatedPerMinute},
		{&l.UnauthenticatedBurst, &d.UnauthenticatedBurst},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	return l
}

// validate reports every limit that is negative, or a per-client cap above the total, naming
// the field under p.
func (l Limits) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    metav1.Duration
	}{
		{"readHeaderTimeout", l.ReadHeaderTimeout}, {"readTimeout", l.ReadTimeout}, {"writeTimeout", l.WriteTimeout},
		{"idleTimeout", l.IdleTimeout}, {"auditSummaryInterval", l.AuditSummaryInterval},
	} {
		if f.v.Duration < 0 {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v.Duration.String(), "must be a positive duration such as 30s, or left out for the default"))
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxConnections", int64(l.MaxConnections)}, {"maxConnectionsPerClient", int64(l.MaxConnectionsPerClient)},
		{"maxHeaderBytes", int64(l.MaxHeaderBytes)}, {"maxBodyBytes", l.MaxBodyBytes},
		{"unauthenticatedPerMinute", int64(l.UnauthenticatedPerMinute)}, {"unauthenticatedBurst", int64(l.UnauthenticatedBurst)},
	} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v, "must be a positive number, or left out for the default"))
		}
	}
	if d := l.withDefaults(); len(errs) == 0 && d.MaxConnectionsPerClient > d.MaxConnections {
		errs = append(errs, field.Invalid(p.Child("maxConnectionsPerClient"), d.MaxConnectionsPerClient,
			fmt.Sprintf("must not exceed maxConnections (%d)", d.MaxConnections)))
	}
	return errs
}

// clientKey is the address a client's connections and unauthenticated requests are counted
// under: its IPv4 address, or its IPv6 address's /64, which one host usually holds whole.
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}
