package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ControllersOption configures StartKubeControllers.
type ControllersOption func(*controllersOptions)

// AllKubeControllers is kube-controller-manager's --controllers value that runs every
// controller but the node lifecycle controller, the default of StartKubeControllers.
const AllKubeControllers = "*,-node-lifecycle-controller"

type controllersOptions struct {
	scheduler          bool
	controllerManager  bool
	controllers        string
	timeout            time.Duration
	controllerMgrFlags map[string]string
}

// WithoutKubeScheduler runs only kube-controller-manager.
func WithoutKubeScheduler() ControllersOption {
	return func(o *controllersOptions) { o.scheduler = false }
}

// WithoutKubeControllerManager runs only kube-scheduler.
func WithoutKubeControllerManager() ControllersOption {
	return func(o *controllersOptions) { o.controllerManager = false }
}

// WithControllers sets kube-controller-manager's --controllers list.
func WithControllers(list string) ControllersOption {
	return func(o *controllersOptions) { o.controllers = list }
}

// WithControllersTimeout bounds the wait for both to report healthy.
func WithControllersTimeout(d time.Duration) ControllersOption {
	return func(o *controllersOptions) { o.timeout = d }
}

// StartKubeControllers runs kube-controller-manager and kube-scheduler from the same assets
// folder as the apiserver, so that native Deployments, ReplicaSets, DaemonSets and scheduling
// behave as in a cluster. Start the node simulator WithoutScheduler next to them. Both processes
// stop with Env.Stop and die with the test binary (parent-death signal).
//
// The node lifecycle controller is off by default: simulated nodes post no heartbeats, and it
// would taint them unreachable and evict their pods.
func (e *Env) StartKubeControllers(ctx context.Context, opts ...ControllersOption) error {
	o := controllersOptions{
		scheduler: true, controllerManager: true,
		controllers: AllKubeControllers,
		timeout:     time.Minute,
	}
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	pkiDir := filepath.Join(e.Dir, "pki")
	type component struct {
		name string
		args []string
	}
	var comps []component
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	if o.controllerManager {
		comps = append(comps, component{"kube-controller-manager", append(e.componentArgs(ports[0]),
			"--service-account-private-key-file="+filepath.Join(pkiDir, "sa.key"),
			"--root-ca-file="+filepath.Join(pkiDir, "ca.crt"),
			"--controllers="+o.controllers,
			// Throw-away clusters: react at once rather than at production pacing.
			"--concurrent-deployment-syncs=5", "--concurrent-replicaset-syncs=5",
		)})
	}
	if o.scheduler {
		comps = append(comps, component{"kube-scheduler", e.componentArgs(ports[1])})
	}
	for i, c := range comps {
		bin := filepath.Join(e.assets.dir, c.name)
		if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
			return fmt.Errorf("%w: %s missing from %s; build it with EXTRA_K8S=1 scripts/testbin/build.sh", ErrAssetsMissing, c.name, e.assets.dir)
		}
		p, err := e.startProcess(c.name, bin, c.args)
		if err != nil {
			return err
		}
		port := ports[0]
		if c.name == "kube-scheduler" {
			port = ports[1]
		}
		if err := waitHealthy(ctx, p, port); err != nil {
			return err
		}
		e.logger.Info("started", "component", c.name, "pid", p.pid(), "index", i)
	}
	return nil
}

// StopKubeControllers ends the kube-controller-manager and kube-scheduler StartKubeControllers
// started, and waits until they have exited, so that what runs next (a benchmark timing the
// node simulator's scheduling, say) has the control plane to itself.
func (e *Env) StopKubeControllers() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	kept := e.procs[:0]
	for _, p := range e.procs {
		if p.name != "kube-controller-manager" && p.name != "kube-scheduler" {
			kept = append(kept, p)
			continue
		}
		if err := p.stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	e.procs = kept
	return errors.Join(errs...)
}

// componentArgs are the flags kube-controller-manager and kube-scheduler share: the admin
// kubeconfig for everything, serving on loopback at port, and no leader election.
func (e *Env) componentArgs(port int) []string {
	return []string{
		"--kubeconfig=" + e.Kubeconfig,
		"--authentication-kubeconfig=" + e.Kubeconfig,
		"--authorization-kubeconfig=" + e.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
	}
}

// waitHealthy polls a component's /healthz, which its default authorization always allows.
func waitHealthy(ctx context.Context, p *process, port int) error {
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		// Their serving certificates are self-signed; only liveness is asked here.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe
	}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	if err := pollHealth(ctx, p, hc, url); err != nil {
		return fmt.Errorf("wait for %s: %w; last lines of %s:\n%s", p.name, err, p.logPath, p.logTail(20))
	}
	return nil
}
