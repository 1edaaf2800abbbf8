package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/containermeta"
	"github.com/kruise-addon/kruise-addon/daemon/containerrecreate"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
	"github.com/kruise-addon/kruise-addon/daemon/imagepuller"
	"github.com/kruise-addon/kruise-addon/daemon/podprobe"
	"github.com/kruise-addon/kruise-addon/features"
)

// Run detects the runtime, starts the node-scoped controllers and serves metrics and health
// until ctx ends. ready, when not nil, receives the detected runtime once serving has begun.
func Run(ctx context.Context, cfg *rest.Config, o *Options, ready func(*cri.Runtime, net.Addr)) error {
	log := klog.FromContext(ctx).WithValues("node", o.NodeName)
	ctx = klog.NewContext(ctx, log)
	rt, err := cri.Detect(ctx, o.HostVarRun, o.SocketFile)
	if err != nil {
		return fmt.Errorf("detect runtime: %w", err)
	}
	defer rt.Close()
	log.Info("CRI runtime found", "runtime", rt.Name, "runtimeName", rt.RuntimeName, "runtimeVersion", rt.RuntimeVersion, "endpoint", rt.Endpoint)

	// client-go's default of 5 QPS would make status writes, not pulls, the bottleneck.
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 20, 40
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), cri.InfoMetric(rt))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	if err := apis.AddToScheme(scheme); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	events, err := typedcorev1.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("events client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.Events("")})
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		PprofBindAddress:       o.pprofAddr(),
		LeaderElection:         false,
		Cache:                  nodeScopedCache(o.NodeName, o.ConfigNamespace),
		// One daemon runs per process in a cluster; tests run several, one per simulated node.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return fmt.Errorf("new manager: %w", err)
	}
	watchPods := o.Gates.Enabled(features.DaemonWatchingPod)
	// cached are the kinds the daemon reads from its cache; it is ready once each is synced.
	cached := []client.Object{&appsv1alpha1.NodeImage{}, &appsv1alpha1.ContainerRecreateRequest{}, &corev1.Secret{}}
	// As in 1.8 the puller always runs: the manager's gates decide whether NodeImages get tags.
	p := imagepuller.New(mgr.GetClient(), mgr.GetAPIReader(), rt.Images, imagepuller.Options{
		NodeName: o.NodeName, Workers: o.MaxWorkersForPullImage, RetryDelay: o.PullRetryDelay, Registerer: reg,
		ConfigNamespace: o.ConfigNamespace, Secrets: mgr.GetCache(),
		Recorder: broadcaster.NewRecorder(scheme, corev1.EventSource{Component: imagepuller.EventSource, Host: o.NodeName}),
	})
	if err := p.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("image puller: %w", err)
	}
	var podReader client.Reader = mgr.GetAPIReader()
	if watchPods {
		podReader = mgr.GetClient()
		cached = append(cached, &corev1.Pod{})
	}
	if err := containerrecreate.New(mgr.GetClient(), mgr.GetAPIReader(), podReader, rt, containerrecreate.Options{NodeName: o.NodeName, WatchPods: watchPods}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("container recreate: %w", err)
	}
	// 1.8 probes with PodProbeMarkerGate; it is off whenever KruiseDaemon is.
	if o.Gates.Enabled(features.PodProbeMarkerGate) {
		if err := podprobe.New(mgr.GetClient(), rt, podprobe.Options{NodeName: o.NodeName}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("pod probes: %w", err)
		}
		cached = append(cached, &appsv1alpha1.NodePodProbe{})
	}
	if watchPods {
		if err := containermeta.New(mgr.GetClient(), rt, containermeta.Options{
			NodeName: o.NodeName, Resync: o.MetaResync, EnvFromMetadata: o.Gates.Enabled(features.InPlaceUpdateEnvFromMetadata),
		}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("containers meta: %w", err)
		}
	}

	if err := watchCached(ctx, mgr.GetCache(), cached); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// Liveness asks only the runtime: a daemon still filling its cache from a slow apiserver is
	// not stuck, and restarting it would only start the lists over. Readiness also waits for
	// the cache (controllers that cannot sync end the process on their own).
	mux.Handle("/healthz", healthHandler(func(ctx context.Context) error { return runtimeAnswers(ctx, rt) }))
	mux.Handle("/readyz", healthHandler(func(ctx context.Context) error {
		if err := runtimeAnswers(ctx, rt); err != nil {
			return err
		}
		return cacheSynced(ctx, mgr.GetCache(), cached)
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if ready != nil {
		ready(rt, ln.Addr())
	}

	mgrErr := mgr.Start(ctx)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", o.Addr, err)
	}
	if mgrErr != nil {
		return fmt.Errorf("run controllers: %w", mgrErr)
	}
	log.Info("kruise-daemon stopped")
	return nil
}

// nodeScopedCache watches only this node's NodeImage, CRRs, pods and NodePodProbe, and the pull
// secrets of the config namespace.
func nodeScopedCache(node, configNamespace string) cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}:          {Namespaces: map[string]cache.Config{configNamespace: {}}},
		&appsv1alpha1.NodeImage{}: {Field: fields.OneTermEqualSelector("metadata.name", node)},
		&appsv1alpha1.ContainerRecreateRequest{}: {Label: labels.SelectorFromSet(labels.Set{
			appsv1alpha1.ContainerRecreateRequestNodeNameKey: node,
		})},
		&corev1.Pod{}:                {Field: fields.OneTermEqualSelector("spec.nodeName", node)},
		&appsv1alpha1.NodePodProbe{}: {Field: fields.OneTermEqualSelector("metadata.name", node)},
	}}
}
