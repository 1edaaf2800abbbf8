package chart

import (
	"fmt"
	"os"
	"testing"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// env is the package's control plane; it is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = framework.Start(framework.WithSchemeAdder(apis.AddToScheme))
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
