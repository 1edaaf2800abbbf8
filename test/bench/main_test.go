package bench

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// env is the package's control plane, set once in TestMain.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// A plain `go test ./...` runs no benchmark here; it need not pay for a control plane.
	flag.Parse()
	defer removeBuilt()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run()
	}
	// The bench's own clients log nothing worth reading beside the figures (API warnings of
	// deleted objects); without a logger controller-runtime prints a warning with a stack.
	ctrl.SetLogger(logr.Discard())
	var err error
	env, err = framework.Start(framework.WithSchemeAdder(apis.AddToScheme))
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	return m.Run()
}

// envInt reads a positive integer from the environment variable name, or returns def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// largeScale says whether the run is `make bench-large` (BENCH_SCALE=large): the platform-scale
// benchmarks then take their large sizes.
func largeScale() bool { return os.Getenv("BENCH_SCALE") == "large" }

// scaled is a benchmark's size: the environment variable name when set, else large under
// `make bench-large`, else small, the size `make bench` (and CI) runs.
func scaled(name string, small, large int) int {
	if largeScale() {
		return envInt(name, large)
	}
	return envInt(name, small)
}
