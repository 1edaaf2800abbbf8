package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/certs"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// ManagerNamespace is the namespace the chart installs kruise-manager into; an in-process
// manager keeps its Lease and certificate Secret there.
const ManagerNamespace = "kruise-system"

// Suite says what Main sets up around one package's tests.
type Suite struct {
	// Name names the package in the log file's name and in messages.
	Name string
	// ManagerNamespace creates ManagerNamespace, labelled control-plane=openkruise as the chart
	// labels it, for a suite that starts its managers itself; a suite whose Main starts the
	// manager gets it anyway.
	ManagerNamespace bool
	// Namespaces are created as well, unlabelled.
	Namespaces []string
	// LogVerbosity is the verbosity of the controller-runtime log; 0 logs only what is logged
	// at V(0).
	LogVerbosity int
	// Nodes, when set, start a node simulator with these nodes once the namespaces are there.
	Nodes []*corev1.Node
	// Simulator are the simulator's options (FastPods for the usual timing); the nodes are
	// added to them, and the simulator schedules pods itself unless KubeControllers is set.
	Simulator []framework.SimOption
	// KubeControllers, when set, starts kube-scheduler and kube-controller-manager running these
	// controllers (framework.AllKubeControllers for all of them) after the nodes: the simulator
	// writes their status once without retrying, and the controller manager would race it.
	KubeControllers string
	// Controllers, Webhooks, Workers and Gates, when any of them is set, start one in-process
	// manager named "manager" with LoopbackOptions in the suite's directory, running these
	// controllers with these worker counts, serving these webhooks and with these feature gates
	// turned on; then Main registers both webhook configurations and waits for /readyz and the
	// CA in every webhook the manager kept. Controllers and Webhooks left nil keep
	// manager.NewOptions' defaults, every controller and every webhook.
	Controllers []manager.Component
	Webhooks    []setup.Webhooks
	Workers     map[string]int
	Gates       []featuregate.Feature
	// Manager, when set, starts that manager too, and changes its options after the fields
	// above have set them: what a suite needs beyond them (a fake clock, another setting).
	Manager func(o *manager.Options) error
	// Env and Sim, when set, receive the control plane and the node simulator once they are up,
	// before Setup runs: the package's own variables, which its tests read.
	Env **framework.Env
	Sim **framework.NodeSimulator
	// Setup, when set, runs once everything above is up: it stores what the package shares
	// (Shared's env, simulator and manager) and starts what only this package needs. The
	// returned teardown, when not nil, runs after the tests, before the shared parts stop.
	Setup func(ctx context.Context, s *Shared) (teardown func(), err error)
	// CacheMutationDetector runs the package with client-go's informer cache mutation detector
	// on (KUBE_CACHE_MUTATION_DETECTOR=true): the manager's informers keep a copy of every
	// object they store and compare it with the stored one every second, and the first object
	// found changed panics the test binary. It is for suites whose controllers read cached
	// objects without copying them. client-go reads the variable once, when the binary starts,
	// so Main runs the binary again with the variable set when it is not set already.
	CacheMutationDetector bool
	// WithoutDetector names tests that measure the process's own memory. The detector keeps a
	// second copy of every cached object, so with CacheMutationDetector set these tests run in
	// a pass of their own, without it, after the others ran with it.
	WithoutDetector []string
}

// cacheMutationDetectorEnv is the variable client-go's informers read at start to decide
// whether to watch their cached objects for changes.
const cacheMutationDetectorEnv = "KUBE_CACHE_MUTATION_DETECTOR"

// Main starts the control plane with the add-on's kinds, sends the controller-runtime log to
// a file, creates the Suite's namespaces, runs Setup and then the tests, and stops everything
// in reverse order. The log file lives in the temp dir and is kept, with its path printed,
// only when setup or a test fails. Main returns the exit code for os.Exit.
func Main(m *testing.M, s Suite) int {
	detectorCode := 0
	if on, _ := strconv.ParseBool(os.Getenv(cacheMutationDetectorEnv)); s.CacheMutationDetector && !on {
		detectorCode = rerunWithDetector(s.Name, s.WithoutDetector)
		names, err := selectedTests(s.WithoutDetector)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
			return 1
		}
		if len(names) == 0 {
			return detectorCode
		}
		// This process runs only the memory tests the -run flag selects.
		if err := flag.Set("test.run", "^("+strings.Join(names, "|")+")$"); err != nil {
			fmt.Fprintf(os.Stderr, "%s: select the tests without the detector: %v\n", s.Name, err)
			return 1
		}
	}
	code := run(m, s)
	return max(code, detectorCode)
}

// selectedTests returns those of names that the -run flag selects (all when it is unset). It
// matches the whole name against the flag's first level, as go test does for top-level tests.
func selectedTests(names []string) ([]string, error) {
	if !flag.Parsed() {
		flag.Parse()
	}
	pattern := ""
	if f := flag.Lookup("test.run"); f != nil {
		pattern = strings.Split(f.Value.String(), "/")[0]
	}
	if pattern == "" {
		return names, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("the -run flag %q: %w", pattern, err)
	}
	var out []string
	for _, n := range names {
		if re.MatchString(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// run starts what the Suite says, runs the tests and stops everything; see Main.
func run(m *testing.M, s Suite) int {
	logFile, err := os.CreateTemp("", s.Name+"-manager-*.log")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: create the log file: %v\n", s.Name, err)
		return 1
	}
	defer logFile.Close()
	keepLog := false
	defer func() {
		if keepLog {
			fmt.Fprintf(os.Stderr, "%s: manager log: %s\n", s.Name, logFile.Name())
			return
		}
		_ = os.Remove(logFile.Name())
	}()
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(s.LogVerbosity))))

	env, err := framework.Start(framework.WithSchemeAdder(apis.AddToScheme))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: starting the control plane: %v\n", s.Name, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping the control plane: %v\n", s.Name, err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var namespaces []string
	if s.ManagerNamespace || s.runsManager() {
		namespaces = append(namespaces, ManagerNamespace)
	}
	for _, name := range append(namespaces, s.Namespaces...) {
		ns := builder.Namespace(name).Obj()
		if name == ManagerNamespace {
			ns.Labels = map[string]string{"control-plane": "openkruise"}
		}
		if err := env.Client.Create(ctx, ns); err != nil {
			fmt.Fprintf(os.Stderr, "%s: create namespace %s: %v\n", s.Name, name, err)
			return 1
		}
	}
	shared := &Shared{Env: env, Log: logFile.Name()}
	stop, err := startShared(ctx, s, shared)
	defer stop()
	if s.Env != nil {
		*s.Env = shared.Env
	}
	if s.Sim != nil {
		*s.Sim = shared.Sim
	}
	if err == nil && s.Setup != nil {
		var teardown func()
		teardown, err = s.Setup(ctx, shared)
		if teardown != nil {
			defer teardown()
		}
	}
	if err != nil {
		keepLog = true
		fmt.Fprintf(os.Stderr, "%s: setup: %v (manager log: %s)\n", s.Name, err, logFile.Name())
		return 1
	}
	code := m.Run()
	keepLog = code != 0
	return code
}

// rerunWithDetector runs this test binary again, with the same arguments and the cache mutation
// detector on, skipping the tests named in skip, and returns its exit code.
func rerunWithDetector(name string, skip []string) int {
	args := os.Args[1:]
	if len(skip) > 0 {
		args = append(args, "-test.skip=^("+strings.Join(skip, "|")+")$")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cacheMutationDetectorEnv+"=true")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "%s: run the tests again with %s=true: %v\n", name, cacheMutationDetectorEnv, err)
		return 1
	}
}

// WriteServingCert writes tls.crt and tls.key for a webhook server at 127.0.0.1 into dir, from
// a new CA made by the manager's own certificate code, and returns that CA in PEM for the
// configurations' caBundle.
func WriteServingCert(dir string) ([]byte, error) {
	b, err := certs.NewBundle([]string{"127.0.0.1"}, time.Now(), 24*time.Hour, 24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("make the serving certificate: %w", err)
	}
	for name, data := range map[string][]byte{certs.TLSCertKey: b.Cert, certs.TLSKeyKey: b.Key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
	}
	return b.CACert, nil
}
