package manager

import (
	goflag "flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/certs"
	"github.com/kruise-addon/kruise-addon/features"
)

// DefaultNamespace is the manager's namespace when POD_NAMESPACE is unset.
const DefaultNamespace = "kruise-system"

// DefaultDaemonConfigNamespace is --daemon-config-namespace's default, the chart's
// daemon.configNamespace default.
const DefaultDaemonConfigNamespace = "kruise-daemon-config"

// DefaultPprofAddr is --pprof-addr's default: 1.8's port, on the loopback.
const DefaultPprofAddr = "127.0.0.1:8090"

// DefaultWorkers is a controller's default --<kind>-workers unless its Component says otherwise.
const DefaultWorkers = 3

// Component is a controller and the name its --<name>-workers flag uses.
type Component struct {
	Name  string
	Setup setup.Controller
	// Gates must all be on for the controller to run; with one off the manager does not set it
	// up at all, and says so in its log.
	Gates []featuregate.Feature
	// Workers is the default of --<name>-workers; 0 means DefaultWorkers.
	Workers int
}

// enabled reports whether every gate of c is on, and names the first that is off.
func (c Component) enabled(gates featuregate.FeatureGate) (bool, featuregate.Feature) {
	for _, g := range c.Gates {
		if !gates.Enabled(g) {
			return false, g
		}
	}
	return true, ""
}

// Options is everything kruise-manager is configured by.
type Options struct {
	// Kubeconfig is the kubeconfig file cmd/ builds the rest.Config from; empty means
	// $KUBECONFIG, then in-cluster.
	Kubeconfig string
	// EnableLeaderElection makes only the holder of Lease kruise-manager run controllers.
	EnableLeaderElection bool
	// LeaderElectionNamespace holds the Lease; empty means PodNamespace.
	LeaderElectionNamespace string
	// LeaseDuration is how long a standby waits after the leader's last renewal before it takes
	// the Lease (the failover time after a crash); RenewDeadline how long the leader tries to
	// renew before it gives up and exits; RetryPeriod how often both try. A graceful stop releases
	// the Lease, so a standby then leads within one RetryPeriod. Defaults 15 s, 10 s and 2 s, as
	// 1.8's --leader-election-* flags.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Namespace restricts the controllers' watches; empty means every namespace.
	Namespace string
	// PodNamespace is the manager's own namespace (env POD_NAMESPACE): the Secret, the
	// Service the webhooks are reached through, the default Lease namespace.
	PodNamespace string
	// PodName is the manager's pod (env POD_NAME): its identity in the leader-election Lease.
	PodName string
	// MetricsAddr serves /metrics; "0" turns it off.
	MetricsAddr string
	// EnablePprof serves Go's profiles under /debug/pprof/ on PprofAddr.
	EnablePprof bool
	// PprofAddr is where the profiles are served. The default listens on the pod's loopback only:
	// profiles reveal memory, so they are reached with kubectl port-forward, not over the network.
	PprofAddr string
	// HealthProbeAddr serves /healthz and /readyz.
	HealthProbeAddr string
	// Gates are the feature gates; --feature-gates sets them.
	Gates featuregate.MutableFeatureGate
	// SyncPeriod is how often every watched object is reconciled again; 0 is
	// controller-runtime's default.
	SyncPeriod time.Duration
	// QPS and Burst limit the manager's API client.
	QPS   float32
	Burst int
	// Workers is each controller's concurrent reconciles, by component name.
	Workers map[string]int
	// WebhookPort is the webhook server's port.
	WebhookPort int
	// WebhookHost, when set, makes the webhook configurations use https://<host>:<port>
	// instead of Service kruise-webhook-service, and the serving certificate cover it.
	WebhookHost string
	// WebhookCertDir receives the serving certificate for the server.
	WebhookCertDir string
	// DaemonConfigNamespace is where ImagePullJob pull secrets are copied for kruise-daemon,
	// which reads secrets only there; the chart passes daemon.configNamespace.
	DaemonConfigNamespace string
	// AssignBroadcastJobPodsByScheduler gives each BroadcastJob pod a required node affinity to
	// its node and lets the scheduler bind it; false sets spec.nodeName (1.8's
	// --assign-bcj-pods-by-scheduler, default true).
	AssignBroadcastJobPodsByScheduler bool
	// CloneSetScalingExcludePreparingDelete makes every CloneSet leave PreparingDelete pods out
	// of its replica count, so their replacements are created at once (1.8's
	// --cloneset-scaling-exclude-preparing-delete, default false).
	CloneSetScalingExcludePreparingDelete bool
	// DistributionCheckAuthorRights makes the ResourceDistribution webhook ask the apiserver
	// (SubjectAccessReview) whether the user who creates or changes a spec may create and update
	// the resource's kind in every namespace the targets name, or cluster-wide for allNamespaces
	// and a namespace selector. Off, as in 1.8, the copies are written with the manager's own
	// rights.
	DistributionCheckAuthorRights bool
	// DistributionExcludedNamespaces are namespaces no ResourceDistribution copies into: the
	// controller leaves them out of every spec's targets, and the webhook refuses a new or changed
	// spec that names one in includedNamespaces. Empty, as in 1.8.
	DistributionExcludedNamespaces []string
	// DeletionAllowedInTerminatingNamespace lets the deletion of an object labelled
	// policy.kruise.io/delete-protection through once its namespace is being deleted, so that the
	// namespace's deletion can finish. Off, as in 1.8, such an object keeps its namespace
	// Terminating until the label is removed.
	DeletionAllowedInTerminatingNamespace bool

	// Test and tuning knobs: hidden flags or fields only.

	// WebhookBindAddress is the address the webhook server listens on; empty is all.
	WebhookBindAddress string
	// CertPolicy is the certificates' lifetimes, renewal margin and check interval.
	CertPolicy certs.Policy
	// GracefulShutdown bounds how long runnables may take to stop.
	GracefulShutdown time.Duration
	// SkipControllerNameValidation lets several managers in one process (tests) register
	// controllers of the same name.
	SkipControllerNameValidation bool
	// Clock is passed to controllers and the certificate rotator.
	Clock clock.WithTicker
	// Controllers run on the leader; NewOptions fills them from components.go.
	Controllers []Component
	// Webhooks are the handler sets served on every replica; NewOptions fills them from
	// webhooks.go.
	Webhooks []setup.Webhooks

	// workerFlags holds the parsed --<kind>-workers until Workers is read.
	workerFlags map[string]*int
}

// NewOptions returns the defaults, with POD_NAMESPACE read from the environment.
func NewOptions() *Options {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = DefaultNamespace
	}
	o := &Options{
		EnableLeaderElection:              true,
		PodNamespace:                      ns,
		PodName:                           os.Getenv("POD_NAME"),
		MetricsAddr:                       ":8080",
		EnablePprof:                       true,
		PprofAddr:                         DefaultPprofAddr,
		HealthProbeAddr:                   ":8000",
		Gates:                             features.NewGate(),
		QPS:                               30,
		Burst:                             50,
		Workers:                           map[string]int{},
		WebhookPort:                       9876,
		WebhookCertDir:                    "/tmp/kruise-webhook-certs",
		DaemonConfigNamespace:             DefaultDaemonConfigNamespace,
		AssignBroadcastJobPodsByScheduler: true,
		CertPolicy:                        certs.DefaultPolicy(),
		LeaseDuration:                     15 * time.Second,
		RenewDeadline:                     10 * time.Second,
		RetryPeriod:                       2 * time.Second,
		GracefulShutdown:                  30 * time.Second,
		Clock:                             clock.RealClock{},
		Controllers:                       Controllers(),
		Webhooks:                          WebhookSets(),
	}
	for _, c := range o.Controllers {
		o.Workers[c.Name] = DefaultWorkers
		if c.Workers > 0 {
			o.Workers[c.Name] = c.Workers
		}
	}
	return o
}

// AddFlags binds the options, and klog's flags, to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	for _, f := range o.flags() {
		f.bind(fs)
	}
	o.Gates.AddFlag(fs)
	o.workerFlags = map[string]*int{}
	names := make([]string, 0, len(o.Workers))
	for name := range o.Workers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := o.Workers[name]
		o.workerFlags[name] = &n
		fs.IntVar(o.workerFlags[name], name+"-workers", n, fmt.Sprintf("Concurrent reconciles of the %s controller.", name))
	}
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
}

// flags is the table of the manager's flags but --feature-gates and --<kind>-workers, which
// are built from the gates and the controllers.
func (o *Options) flags() []flagRow {
	return []flagRow{
		{"kubeconfig", &o.Kubeconfig, "Path to a kubeconfig; empty uses $KUBECONFIG, then the in-cluster config.", false},
		{"enable-leader-election", &o.EnableLeaderElection, "Run controllers only on the replica holding Lease kruise-manager.", false},
		{"leader-election-namespace", &o.LeaderElectionNamespace, "Namespace of the leader-election Lease; empty is the manager's own namespace.", false},
		{"leader-election-lease-duration", &o.LeaseDuration, "How long a standby waits, after it last saw the leader renew the Lease, before it takes the Lease over: the failover time after a crash.", false},
		{"leader-election-renew-deadline", &o.RenewDeadline, "How long the leader keeps trying to renew the Lease before it gives up and exits; keep it well above the apiserver's worst write latency.", false},
		{"leader-election-retry-period", &o.RetryPeriod, "How often the leader renews and a standby tries to take the Lease: after a graceful stop, which releases the Lease, a standby leads within one period.", false},
		{"namespace", &o.Namespace, "Restrict the controllers' watches to this namespace; empty watches all.", false},
		{"metrics-addr", &o.MetricsAddr, "Address of the /metrics endpoint; \"0\" turns it off.", false},
		{"enable-pprof", &o.EnablePprof, "Serve Go profiles under /debug/pprof/ on --pprof-addr.", false},
		{"pprof-addr", &o.PprofAddr, "Address of the profiles; the default is the pod's loopback, reached with kubectl port-forward.", false},
		{"health-probe-addr", &o.HealthProbeAddr, "Address of /healthz and /readyz (ready once the webhook serves).", false},
		{"sync-period", &o.SyncPeriod, "How often every watched object is reconciled again; 0 is the library default.", false},
		{"rest-config-qps", &o.QPS, "Queries per second to the apiserver.", false},
		{"rest-config-burst", &o.Burst, "Burst of queries to the apiserver.", false},
		{"webhook-port", &o.WebhookPort, "Port of the webhook server.", false},
		{"webhook-host", &o.WebhookHost, "When set, webhook configurations use https://<host>:<port><path> instead of Service kruise-webhook-service.", false},
		{"webhook-cert-dir", &o.WebhookCertDir, "Directory the serving certificate is written to.", false},
		{"daemon-config-namespace", &o.DaemonConfigNamespace, "Namespace ImagePullJob pull secrets are copied to for kruise-daemon; the same as the daemon's --daemon-config-namespace.", false},
		{"assign-bcj-pods-by-scheduler", &o.AssignBroadcastJobPodsByScheduler, "Bind BroadcastJob pods through the scheduler, by a node affinity to their node; false sets spec.nodeName directly.", false},
		{"cloneset-scaling-exclude-preparing-delete", &o.CloneSetScalingExcludePreparingDelete, "Leave PreparingDelete pods out of every CloneSet's replica count, as the CloneSet label apps.kruise.io/cloneset-scaling-exclude-preparing-delete does for one.", false},
		{"resourcedistribution-check-author-rights", &o.DistributionCheckAuthorRights, "Admit a ResourceDistribution only from a user who may create and update its resource's kind in every namespace it targets (cluster-wide for allNamespaces or a namespace selector).", false},
		{"resourcedistribution-excluded-namespaces", &o.DistributionExcludedNamespaces, "Namespaces no ResourceDistribution copies into, e.g. kube-system,kube-public,kube-node-lease; a spec naming one in includedNamespaces is refused.", false},
		{"deletion-protection-allow-in-terminating-namespace", &o.DeletionAllowedInTerminatingNamespace, "Let the deletion of an object labelled policy.kruise.io/delete-protection through once its namespace is being deleted.", false},
		{"webhook-bind-address", &o.WebhookBindAddress, "Address the webhook server listens on; empty is all.", true},
		{"webhook-cert-validity", &o.CertPolicy.Validity, "Lifetime of the serving certificate.", true},
		{"webhook-cert-renew-before", &o.CertPolicy.RenewBefore, "Renew certificates this long before they expire.", true},
	}
}

// deps is what every controller and webhook set gets: complete, so that no kind package
// defaults anything.
func (o *Options) deps() setup.Deps {
	return setup.Deps{
		Gates: o.Gates, Workers: o.workers, Namespace: o.Namespace, DaemonConfigNamespace: o.DaemonConfigNamespace,
		ManagerNamespace: o.PodNamespace, Clock: o.Clock,
		AssignBroadcastJobPodsByScheduler:     o.AssignBroadcastJobPodsByScheduler,
		DistributionCheckAuthorRights:         o.DistributionCheckAuthorRights,
		DistributionExcludedNamespaces:        o.DistributionExcludedNamespaces,
		DeletionAllowedInTerminatingNamespace: o.DeletionAllowedInTerminatingNamespace,
		CloneSetScalingExcludePreparingDelete: o.CloneSetScalingExcludePreparingDelete,
	}
}

// workers returns the effective worker count of a component, flags applied.
func (o *Options) workers(name string) int {
	if p, ok := o.workerFlags[name]; ok {
		return *p
	}
	if n, ok := o.Workers[name]; ok {
		return n
	}
	return DefaultWorkers
}

// Validate reports every option that cannot work, together.
func (o *Options) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if o.PodNamespace == "" {
		add("the manager's namespace (POD_NAMESPACE) must not be empty")
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		add("--webhook-port %d is not a port (1-65535)", o.WebhookPort)
	}
	if o.WebhookHost != "" && (strings.ContainsAny(o.WebhookHost, "/:") && net.ParseIP(o.WebhookHost) == nil) {
		add("--webhook-host %q must be a host name or IP address, without scheme or port", o.WebhookHost)
	}
	if o.WebhookCertDir == "" {
		add("--webhook-cert-dir must not be empty")
	}
	if errs := validation.IsDNS1123Label(o.DaemonConfigNamespace); len(errs) > 0 {
		add("--daemon-config-namespace %q must be a namespace name: %s", o.DaemonConfigNamespace, strings.Join(errs, "; "))
	}
	for _, ns := range o.DistributionExcludedNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			add("--resourcedistribution-excluded-namespaces %q must be a namespace name: %s", ns, strings.Join(errs, "; "))
		}
	}
	if o.QPS <= 0 {
		add("--rest-config-qps %v must be positive", o.QPS)
	}
	if o.Burst <= 0 {
		add("--rest-config-burst %d must be positive", o.Burst)
	}
	if o.SyncPeriod < 0 {
		add("--sync-period %s must not be negative", o.SyncPeriod)
	}
	names := make([]string, 0, len(o.Workers))
	for name := range o.Workers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := o.workers(name); n < 1 {
			add("--%s-workers %d must be at least 1", name, n)
		}
	}
	addrs := []struct{ flag, addr string }{{"--metrics-addr", o.MetricsAddr}, {"--health-probe-addr", o.HealthProbeAddr}}
	if o.EnablePprof {
		addrs = append(addrs, struct{ flag, addr string }{"--pprof-addr", o.PprofAddr})
	}
	for _, a := range addrs {
		if a.addr == "0" || a.addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			add("%s %q is not host:port", a.flag, a.addr)
		}
	}
	if err := o.CertPolicy.Validate(); err != nil {
		add("webhook certificates: %v", err)
	}
	if o.EnableLeaderElection && !(o.LeaseDuration > o.RenewDeadline && o.RenewDeadline > o.RetryPeriod && o.RetryPeriod > 0) {
		add("leader election needs --leader-election-lease-duration (%s) > --leader-election-renew-deadline (%s) > --leader-election-retry-period (%s) > 0",
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	}
	if o.Gates == nil {
		add("feature gates must be set")
	}
	if o.Clock == nil {
		add("the clock must be set")
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid options: %s", strings.Join(errs, "; "))
	}
	return nil
}

// pprofAddr is the profiles' address for controller-runtime, "0" when they are off.
func (o *Options) pprofAddr() string {
	if !o.EnablePprof || o.PprofAddr == "" {
		return "0"
	}
	return o.PprofAddr
}

// leaderElectionNamespace is the Lease's namespace.
func (o *Options) leaderElectionNamespace() string {
	if o.LeaderElectionNamespace != "" {
		return o.LeaderElectionNamespace
	}
	return o.PodNamespace
}
