package webhook

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// ConvertPath serves CRD conversion.
const ConvertPath = "/convert"

// CertSource provides the serving certificates: Run keeps them in the cert dir, Ready is
// closed once they are there.
type CertSource interface {
	Run(ctx context.Context) error
	Ready() <-chan struct{}
}

// Server is a webhook server that runs its CertSource and listens only once the certificates
// are ready. It runs on every replica, leader or not.
type Server struct {
	webhook.Server
	certs CertSource
}

// NewServer returns a server with the given options and certificates.
func NewServer(o webhook.Options, certs CertSource) *Server {
	return &Server{Server: webhook.NewServer(o), certs: certs}
}

// Start runs the CertSource and, once it is ready, the server, until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.certs.Run(ctx)
	}()
	select {
	case <-ctx.Done():
		return nil
	case <-s.certs.Ready():
	}
	return s.Server.Start(ctx)
}

// NeedLeaderElection is false: every replica serves admission requests.
func (s *Server) NeedLeaderElection() bool { return false }

// ReadyCheck passes once the server accepts TLS connections on its port, which it does only
// after the certificates are in place.
func (s *Server) ReadyCheck() healthz.Checker {
	return s.StartedChecker()
}

// RegisterAdmission serves every handler under each of its PathForms, measured by m under its
// canonical path. Two handlers claiming one path is an error, not a panic.
func RegisterAdmission(srv webhook.Server, handlers map[string]admission.Handler, m *Metrics) error {
	paths := make([]string, 0, len(handlers))
	for p := range handlers {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	taken := map[string]string{}
	for _, canonical := range paths {
		for _, form := range PathForms(canonical) {
			if other, ok := taken[form]; ok {
				return fmt.Errorf("webhook path %s is claimed by %s and %s", form, other, canonical)
			}
			taken[form] = canonical
		}
	}
	for _, canonical := range paths {
		h := m.Instrument(canonical, handlers[canonical])
		for _, form := range PathForms(canonical) {
			srv.Register(form, &webhook.Admission{Handler: h})
		}
	}
	return nil
}

// RegisterConversion serves ConvertPath with controller-runtime's conversion handler.
func RegisterConversion(srv webhook.Server, scheme *runtime.Scheme, reg conversion.Registry) {
	srv.Register(ConvertPath, conversion.NewWebhookHandler(scheme, reg))
}
