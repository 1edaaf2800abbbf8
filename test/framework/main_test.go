package framework_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// env is the package's shared control plane, set once in TestMain and only read afterwards.
var env *framework.Env

// holdEnvVar turns the test binary into a helper that starts a control plane, prints its work
// dir and waits to be killed; TestControlPlaneDiesWithAKilledTestBinary runs it.
const holdEnvVar = "FRAMEWORK_TEST_HOLD_CONTROL_PLANE"

func TestMain(m *testing.M) {
	if os.Getenv(holdEnvVar) == "1" {
		os.Exit(holdControlPlane())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = framework.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}()
	return m.Run()
}

// holdControlPlane blocks on stdin, which the parent never writes: the parent kills this
// process, or closes the pipe by dying itself.
func holdControlPlane() int {
	e, err := framework.Start()
	if err != nil {
		fmt.Printf("error=%v\n", err)
		return 1
	}
	fmt.Printf("dir=%s\n", e.Dir)
	_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	_ = e.Stop()
	return 0
}
