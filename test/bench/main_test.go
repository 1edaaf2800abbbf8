package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// env is the package's control plane, set once in TestMain.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = framework.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	return m.Run()
}
