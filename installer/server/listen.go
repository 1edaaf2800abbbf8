package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ListenOptions say how the server listens. It serves only over TLS, except on a loopback
// address given as InsecureListen (for local tests and a sidecar proxy that terminates TLS).
type ListenOptions struct {
	// Listen is the TLS address, e.g. :8443.
	Listen string
	// CertFile and KeyFile are the serving certificate; both are required with Listen.
	CertFile, KeyFile string
	// ClientCAFile, when set, lets callers authenticate with a client certificate it signed
	// (the tokens file maps the certificate's common name to a role).
	ClientCAFile string
	// InsecureListen is a loopback address served over plain HTTP instead of TLS.
	InsecureListen string
}

// Validate reports every problem at once, naming the flag.
func (o ListenOptions) Validate() error {
	var errs field.ErrorList
	switch {
	case o.Listen == "" && o.InsecureListen == "":
		errs = append(errs, field.Required(field.NewPath("--listen"), "an address such as :8443 (with --tls-cert and --tls-key)"))
	case o.Listen != "" && o.InsecureListen != "":
		errs = append(errs, field.Forbidden(field.NewPath("--insecure-listen"), "give --listen (TLS) or --insecure-listen (loopback, plain HTTP), not both"))
	}
	if o.Listen != "" {
		if o.CertFile == "" {
			errs = append(errs, field.Required(field.NewPath("--tls-cert"), "the serving certificate: the server serves only over TLS"))
		}
		if o.KeyFile == "" {
			errs = append(errs, field.Required(field.NewPath("--tls-key"), "the serving certificate's key"))
		}
	}
	if o.InsecureListen != "" {
		if !isLoopback(o.InsecureListen) {
			errs = append(errs, field.Invalid(field.NewPath("--insecure-listen"), o.InsecureListen, "must be a loopback address such as 127.0.0.1:8080; anything else is served only over TLS (--listen)"))
		}
		if o.ClientCAFile != "" {
			errs = append(errs, field.Forbidden(field.NewPath("--client-ca"), "client certificates need TLS (--listen)"))
		}
	}
	if len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// TLSConfig is the serving TLS configuration: TLS 1.2 or later, and client certificates
// verified against clientCAs when given (a caller may still use a token instead).
func TLSConfig(clientCAs *x509.CertPool) *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if clientCAs != nil {
		c.ClientCAs, c.ClientAuth = clientCAs, tls.VerifyClientCertIfGiven
	}
	return c
}

// shutdownGrace is how long open requests (event streams) get when the server stops.
const shutdownGrace = 10 * time.Second

// ListenAndServe serves s until ctx ends, then stops listening and waits for the running
// operations, which the end of Options.Context cancels and undoes. ready, when set, receives
// the address once the server listens. The server's limits apply: its timeouts, its caps on
// connections (counted before TLS), and the audit summary of refused requests, written every
// interval and once more when it stops.
func ListenAndServe(ctx context.Context, s *Server, o ListenOptions, ready func(addr string)) error {
	if err := o.Validate(); err != nil {
		return err
	}
	lim := s.limits
	srv := &http.Server{Handler: s,
		ReadHeaderTimeout: lim.ReadHeaderTimeout.Duration, ReadTimeout: lim.ReadTimeout.Duration,
		WriteTimeout: lim.WriteTimeout.Duration, IdleTimeout: lim.IdleTimeout.Duration, MaxHeaderBytes: lim.MaxHeaderBytes}
	addr := o.Listen
	if o.InsecureListen != "" {
		addr = o.InsecureListen
	} else {
		var pool *x509.CertPool
		if o.ClientCAFile != "" {
			pem, err := os.ReadFile(o.ClientCAFile)
			if err != nil {
				return fmt.Errorf("--client-ca: %w", err)
			}
			pool = x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("--client-ca %s: no PEM certificate in it", o.ClientCAFile)
			}
		}
		cert, err := certificateFiles(o.CertFile, o.KeyFile, s.log)
		if err != nil {
			return err
		}
		srv.TLSConfig = TLSConfig(pool)
		// Read at every handshake, so a renewed certificate is served without a restart.
		srv.TLSConfig.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert.current(), nil }
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	limiter := newConnLimiter(tcp, lim, s.metrics)
	srv.ConnState = limiter.connState
	var ln net.Listener = limiter
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	summaryCtx, stopSummaries := context.WithCancel(context.WithoutCancel(ctx))
	summariesDone := make(chan struct{})
	go func() {
		defer close(summariesDone)
		s.auditUnauthenticated(summaryCtx)
	}()
	defer func() {
		stopSummaries()
		<-summariesDone
	}()
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	s.Wait()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
