package integration

import (
	"os"
	"testing"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is the package's control plane; it is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name: "integration",
		Env:  &env,
	}))
}
