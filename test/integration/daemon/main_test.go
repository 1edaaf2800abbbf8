package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/apis"
	kdaemon "github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// realNode is the node the in-process daemon serves on the real containerd.
const realNode = "node-real"

// The suite's shared world, set once in TestMain and only read afterwards.
var (
	env      *framework.Env
	ctrd     *containerd
	plainReg *testRegistry // no auth; also serves the sandbox image
	authReg  *testRegistry // basic auth
	images   struct {
		sleeper, private, privateNoSecret string
	}
	// crt is a CRI client of the real containerd, for the test's own kubelet-like calls.
	crt        *cri.Runtime
	daemonAddr net.Addr
	workDir    string
	// daemonConfig acts as the chart's kruise-daemon ServiceAccount; daemonGets counts the
	// GET requests made through it.
	daemonConfig *rest.Config
	daemonGets   = &requestCounter{}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		teardown()
		return 1
	}
	code := m.Run()
	if !teardown() && code == 0 {
		code = 1
	}
	return code
}

// stopDaemon ends the suite's daemon; teardown waits for it before stopping containerd.
var stopDaemon func() error

func setup() error {
	var err error
	workDir, err = os.MkdirTemp("", "kruise-daemon-it-")
	if err != nil {
		return err
	}
	bin, err := buildSleeper(workDir)
	if err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	plainReg = startRegistry("", "")
	authReg = startRegistry("robot", "hunter2")
	sleeper, err := sleeperImage(binary, "sleeper")
	if err != nil {
		return fmt.Errorf("build image: %w", err)
	}
	if _, err := plainReg.push(sleeper, "pause:latest"); err != nil {
		return err
	}
	if images.sleeper, err = plainReg.push(sleeper, "sleeper:v1"); err != nil {
		return err
	}
	private, err := sleeperImage(binary, "private")
	if err != nil {
		return err
	}
	if images.private, err = authReg.push(private, "private:v1"); err != nil {
		return err
	}
	if images.privateNoSecret, err = authReg.push(private, "private-nosecret:v1"); err != nil {
		return err
	}

	if ctrd, err = startContainerd(plainReg.host()); err != nil {
		return err
	}
	ctx := context.Background()
	if crt, err = cri.Dial(ctx, "containerd", ctrd.socket); err != nil {
		return fmt.Errorf("dial containerd: %w", err)
	}

	if env, err = framework.Start(framework.WithSchemeAdder(apis.AddToScheme)); err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	if err := env.Client.Create(ctx, builder.Namespace(kdaemon.ConfigNamespace).Obj()); err != nil {
		return fmt.Errorf("create %s: %w", kdaemon.ConfigNamespace, err)
	}
	if daemonConfig, err = chartDaemonConfig(ctx); err != nil {
		return err
	}
	daemonConfig.Wrap(daemonGets.wrap)

	logFile, err := os.Create(filepath.Join(workDir, "daemon.log"))
	if err != nil {
		return err
	}
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(4))))
	daemonAddr, stopDaemon, err = startDaemon(realNode, ctrd.base)
	return err
}

// startDaemon runs a daemon in-process for node on the runtime found under hostVarRun, as the
// chart's ServiceAccount; stop ends it and returns what Run returned (nil for a clean shutdown).
func startDaemon(node, hostVarRun string) (net.Addr, func() error, error) {
	return startDaemonAs(node, hostVarRun, daemonConfig)
}

// startDaemonAs is startDaemon with the identity and transport of cfg.
func startDaemonAs(node, hostVarRun string, cfg *rest.Config) (net.Addr, func() error, error) {
	o := kdaemon.NewOptions()
	o.NodeName = node
	o.HostVarRun = hostVarRun
	o.Addr = "127.0.0.1:0"
	// Several daemons run in this process; profiles are for real nodes.
	o.EnablePprof = false
	o.PullRetryDelay = 100 * time.Millisecond
	o.MetaResync = time.Second
	logger := ctrl.Log.WithName("daemon").WithValues("node", node)
	dctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- kdaemon.Run(dctx, cfg, o, func(_ *cri.Runtime, a net.Addr) { ready <- a })
	}()
	stop := func() error {
		cancel()
		return <-done
	}
	select {
	case a := <-ready:
		return a, stop, nil
	case err := <-done:
		cancel()
		return nil, nil, fmt.Errorf("daemon %s did not start: %w", node, err)
	case <-time.After(daemonStartTimeout):
		_ = stop()
		return nil, nil, fmt.Errorf("daemon %s did not start within %v", node, daemonStartTimeout)
	}
}

const daemonStartTimeout = time.Minute

// teardown stops everything setup started; it reports whether the daemon shut down cleanly.
func teardown() bool {
	clean := true
	if stopDaemon != nil {
		if err := stopDaemon(); err != nil {
			fmt.Fprintf(os.Stderr, "daemon did not shut down cleanly: %v\n", err)
			clean = false
		}
	}
	if crt != nil {
		_ = crt.Close()
	}
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}
	if ctrd != nil {
		if err := ctrd.stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	for _, r := range []*testRegistry{plainReg, authReg} {
		if r != nil {
			r.srv.Close()
		}
	}
	if workDir != "" && os.Getenv("KEEP_DAEMON_IT") == "" {
		_ = os.RemoveAll(workDir)
	}
	return clean
}
