package server

import (
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/installer/server"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env, sim and validator are set once in TestMain, then only read.
var (
	env       *framework.Env
	sim       *framework.NodeSimulator
	validator *servertest.Validator
)

func testNodes() []*corev1.Node {
	return []*corev1.Node{
		builder.Node("a1").Zone("zone-a").Obj(), builder.Node("b1").Zone("zone-b").Obj(),
		builder.Node("c1").Zone("zone-c").Runtime("docker://24.0.7").Obj(),
	}
}

func TestMain(m *testing.M) {
	var err error
	if validator, err = servertest.New(server.OpenAPIDocument()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := harness.Main(m, harness.Suite{
		Name: "server",
		// Deployments and DaemonSets get real, scheduled pods, so an install's readiness wait is real.
		Nodes:           testNodes(),
		KubeControllers: framework.AllKubeControllers,
		Env:             &env,
		Sim:             &sim,
	})
	if f := validator.Failures(); len(f) > 0 {
		fmt.Fprintf(os.Stderr, "responses that do not match openapi.yaml:\n%s\n", strings.Join(f, "\n"))
		code = 1
	}
	os.Exit(code)
}
