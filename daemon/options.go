package daemon

import (
	"errors"
	goflag "flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"

	"github.com/kruise-addon/kruise-addon/features"
)

// ConfigNamespace is --daemon-config-namespace's default: where the manager copies the pull
// secrets the daemon reads.
const ConfigNamespace = "kruise-daemon-config"

// DefaultPprofAddr is --pprof-addr's default: 1.8's port, on the node's loopback.
const DefaultPprofAddr = "127.0.0.1:10222"

// Options are kruise-daemon's flags and environment.
type Options struct {
	// SocketFile is the CRI socket, a name under HostVarRun or an absolute path; empty probes.
	SocketFile string
	// HostVarRun is where the host's run dir is mounted.
	HostVarRun string
	// Addr serves /metrics, /healthz and /readyz.
	Addr string
	// EnablePprof serves Go's profiles under /debug/pprof/ on PprofAddr.
	EnablePprof bool
	// PprofAddr is where the profiles are served: the node's loopback by default, since the
	// daemon shares the host's network and profiles reveal memory.
	PprofAddr string
	// Gates are the feature gates; --feature-gates sets them.
	Gates featuregate.MutableFeatureGate
	// MaxWorkersForPullImage is how many image pulls run at once.
	MaxWorkersForPullImage int
	// Kubeconfig is for running outside a pod; empty uses the in-cluster config.
	Kubeconfig string
	// NodeName is the node this daemon serves (env NODE_NAME).
	NodeName string
	// PullRetryDelay is the pause before the first retry of a failed pull (then n times it).
	PullRetryDelay time.Duration
	// MetaResync is how often runtime-containers-meta is compared with the runtime.
	MetaResync time.Duration
	// ConfigNamespace is the only namespace the daemon reads pull secrets from; the chart
	// passes daemon.configNamespace, as it does to the manager.
	ConfigNamespace string
}

// NewOptions returns the defaults, with NodeName from the environment.
func NewOptions() *Options {
	return &Options{
		HostVarRun:             "/hostvarrun",
		Addr:                   ":10221",
		EnablePprof:            true,
		PprofAddr:              DefaultPprofAddr,
		Gates:                  features.NewGate(),
		MaxWorkersForPullImage: 2,
		NodeName:               os.Getenv("NODE_NAME"),
		PullRetryDelay:         time.Second,
		MetaResync:             10 * time.Second,
		ConfigNamespace:        ConfigNamespace,
	}
}

// AddFlags binds the options, and klog's flags, to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SocketFile, "socket-file", o.SocketFile, "CRI socket: a file name under --hostvarrun or an absolute path; empty probes the known runtimes.")
	fs.StringVar(&o.HostVarRun, "hostvarrun", o.HostVarRun, "Where the host's /var/run is mounted.")
	fs.StringVar(&o.Addr, "addr", o.Addr, "Address serving /metrics, /healthz and /readyz.")
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof, "Serve Go profiles under /debug/pprof/ on --pprof-addr.")
	fs.StringVar(&o.PprofAddr, "pprof-addr", o.PprofAddr, "Address of the profiles; the default is the node's loopback.")
	o.Gates.AddFlag(fs)
	fs.IntVar(&o.MaxWorkersForPullImage, "max-workers-for-pull-image", o.MaxWorkersForPullImage, "How many image pulls run at once.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig file; empty uses the in-cluster config.")
	fs.StringVar(&o.ConfigNamespace, "daemon-config-namespace", o.ConfigNamespace, "The only namespace pull secrets are read from; the same as the manager's --daemon-config-namespace.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Node this daemon serves; defaults to env NODE_NAME.")
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
}

// pprofAddr is the profiles' address for controller-runtime, "0" when they are off.
func (o *Options) pprofAddr() string {
	if !o.EnablePprof {
		return "0"
	}
	return o.PprofAddr
}

// Validate reports options the daemon cannot run with.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("node name is empty: set env NODE_NAME"))
	}
	if o.MaxWorkersForPullImage < 1 {
		errs = append(errs, fmt.Errorf("--max-workers-for-pull-image must be at least 1, got %d", o.MaxWorkersForPullImage))
	}
	if bad := validation.IsDNS1123Label(o.ConfigNamespace); len(bad) > 0 {
		errs = append(errs, fmt.Errorf("--daemon-config-namespace %q must be a namespace name: %s", o.ConfigNamespace, strings.Join(bad, "; ")))
	}
	if o.EnablePprof {
		if _, _, err := net.SplitHostPort(o.PprofAddr); err != nil {
			errs = append(errs, fmt.Errorf("--pprof-addr %q is not host:port", o.PprofAddr))
		}
	}
	if o.HostVarRun == "" && o.SocketFile == "" {
		errs = append(errs, errors.New("--hostvarrun and --socket-file are both empty"))
	}
	return errors.Join(errs...)
}
