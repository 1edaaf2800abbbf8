package manager

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/certs"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/features"
)

// LeaseName is the leader-election Lease.
const LeaseName = "kruise-manager"

// Run runs kruise-manager against cfg until ctx ends, then stops gracefully: the leader gives
// up the Lease at once, the webhook server drains.
func Run(ctx context.Context, cfg *rest.Config, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	log := klog.FromContext(ctx).WithName("kruise-manager")
	changed, err := features.ApplyDependencies(o.Gates)
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		log.Info("feature gates follow their dependencies", "changed", changed)
	}

	cfg = o.restConfig(cfg)
	scheme := apis.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	// The certificates are read rarely and only by name; an uncached client keeps every other
	// Secret out of the manager's memory and RBAC.
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}

	caChanged := make(chan event.GenericEvent, 1)
	rotator := &certs.Rotator{
		Client:    direct,
		Namespace: o.PodNamespace,
		Hosts:     append(certs.ServiceHosts(configuration.ServiceName, o.PodNamespace), o.WebhookHost),
		Policy:    o.CertPolicy,
		Clock:     o.Clock,
		CertDir:   o.WebhookCertDir,
		OnCAChange: func([]byte) {
			select {
			case caChanged <- event.GenericEvent{}:
			default: // a pass is already queued; it reads the newest CA
			}
		},
		Log:      log.WithName("certs"),
		External: o.Gates.Enabled(features.EnableExternalCerts),
	}
	srv := webhook.NewServer(ctrlwebhook.Options{
		Host: o.WebhookBindAddress, Port: o.WebhookPort, CertDir: o.WebhookCertDir,
	}, rotator)

	cacheOpts := o.cacheOptions()
	var lock resourcelock.Interface
	if o.EnableLeaderElection {
		var events record.EventBroadcaster
		if lock, events, err = o.leaderLock(cfg, scheme); err != nil {
			return err
		}
		defer events.Shutdown()
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                              scheme,
		Logger:                              log,
		Cache:                               cacheOpts,
		Controller:                          o.controllerConfig(),
		Metrics:                             metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:              o.HealthProbeAddr,
		PprofBindAddress:                    o.pprofAddr(),
		WebhookServer:                       srv,
		LeaderElection:                      o.EnableLeaderElection,
		LeaderElectionID:                    LeaseName,
		LeaderElectionNamespace:             o.leaderElectionNamespace(),
		LeaderElectionReleaseOnCancel:       true,
		LeaderElectionResourceLockInterface: lock,
		LeaseDuration:                       ptr.To(o.LeaseDuration),
		RenewDeadline:                       ptr.To(o.RenewDeadline),
		RetryPeriod:                         ptr.To(o.RetryPeriod),
		GracefulShutdownTimeout:             ptr.To(o.GracefulShutdown),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", srv.ReadyCheck()); err != nil {
		return fmt.Errorf("add readyz check: %w", err)
	}

	deps := o.deps()
	served, err := registerWebhooks(mgr, scheme, deps, o.Webhooks)
	if err != nil {
		return err
	}
	patcher := &configuration.Patcher{
		Client:   mgr.GetClient(),
		CABundle: rotator.CABundle,
		Target:   configuration.Target{Namespace: o.PodNamespace, Host: o.WebhookHost, Port: o.WebhookPort, Gates: o.Gates},
		Served:   func(path string) bool { return served[path] },
		External: o.Gates.Enabled(features.EnableExternalCerts),
	}
	if err := patcher.SetupWithManager(mgr, caChanged); err != nil {
		return err
	}
	// As 1.8: the manager is ready only once the apiserver can verify its certificate, i.e. the
	// webhook configurations carry its CA (written by the leader's patcher, or with an issuer's
	// certificate by the issuer's CA injector), so that `helm install --wait` returns when the
	// add-on's objects can be created, not a moment before.
	if err := mgr.AddReadyzCheck("webhook-ca-injected", func(req *http.Request) error { return patcher.CheckInjected(req.Context()) }); err != nil {
		return fmt.Errorf("add readyz check: %w", err)
	}
	for _, c := range o.Controllers {
		if on, gate := c.enabled(o.Gates); !on {
			log.Info("controller not started: its feature gate is off", "controller", c.Name, "gate", gate)
			continue
		}
		if err := c.Setup(mgr, deps); err != nil {
			return fmt.Errorf("set up %s controller: %w", c.Name, err)
		}
	}
	log.Info("starting", "namespace", o.PodNamespace, "leaderElection", o.EnableLeaderElection,
		"webhookPort", o.WebhookPort, "webhookHost", o.WebhookHost)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// controllerConfig is every controller's configuration. With warm-up a standby starts its
// controllers' watches, not their workers, so that when it takes the Lease over its caches are
// already full and its first reconcile does not wait for every list.
func (o *Options) controllerConfig() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(o.SkipControllerNameValidation), EnableWarmup: ptr.To(true)}
}

// registerWebhooks collects every handler set, refuses two sets claiming a path, and serves
// them with latency metrics, plus /convert. It returns every path served.
func registerWebhooks(mgr ctrl.Manager, scheme *runtime.Scheme, deps setup.Deps, sets []setup.Webhooks) (map[string]bool, error) {
	all := map[string]admission.Handler{}
	for _, set := range sets {
		handlers := set(mgr, deps)
		paths := make([]string, 0, len(handlers))
		for p := range handlers {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if _, dup := all[p]; dup {
				return nil, fmt.Errorf("two webhook handler sets serve %s", p)
			}
			all[p] = handlers[p]
		}
	}
	m, err := webhook.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return nil, fmt.Errorf("register webhook metrics: %w", err)
	}
	srv := mgr.GetWebhookServer()
	if err := webhook.RegisterAdmission(srv, all, m); err != nil {
		return nil, err
	}
	webhook.RegisterConversion(srv, scheme, mgr.GetConverterRegistry())
	served := map[string]bool{webhook.ConvertPath: true}
	for p := range all {
		for _, form := range webhook.PathForms(p) {
			served[form] = true
		}
	}
	return served, nil
}
