//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis"
)

// Named timeouts of the waits; the cluster is one 2-core machine.
const (
	installTimeout  = 5 * time.Minute
	rolloutTimeout  = 3 * time.Minute
	podTimeout      = 2 * time.Minute
	uninstallWait   = 3 * time.Minute
	kubectlDeadline = time.Minute
)

// cluster is what up.sh wrote into its env file plus clients built from it.
type cluster struct {
	env        map[string]string
	kubeconfig string
	registry   string
	nodeName   string
	nodeIP     string
	kubectl    string
	addon      string
	logs       string
	daemon     bool
	// bundle is the air-gap bundle e2e.sh created and pushed to the registry; install uses it.
	bundle string
	c      client.Client
	cs     kubernetes.Interface
}

func loadCluster(t *testing.T) *cluster {
	t.Helper()
	path := os.Getenv("E2E_ENV")
	if path == "" {
		t.Fatal("E2E_ENV is not set: run the suite with `make e2e` (or point E2E_ENV at the env file scripts/e2e-cluster/up.sh wrote)")
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "read the cluster env file")
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	cl := &cluster{
		env:        env,
		kubeconfig: env["KUBECONFIG"],
		registry:   env["REGISTRY"],
		nodeName:   env["NODE_NAME"],
		nodeIP:     env["NODE_IP"],
		kubectl:    filepath.Join(env["K8S_BIN"], "kubectl"),
		addon:      os.Getenv("KRUISE_ADDON"),
		logs:       env["E2E_LOGS"],
		daemon:     os.Getenv("E2E_DAEMON") == "1",
		bundle:     os.Getenv("E2E_BUNDLE"),
	}
	require.NotEmpty(t, cl.addon, "KRUISE_ADDON names the kruise-addon binary")
	for k, v := range map[string]string{"KUBECONFIG": cl.kubeconfig, "REGISTRY": cl.registry, "NODE_NAME": cl.nodeName, "NODE_IP": cl.nodeIP} {
		require.NotEmpty(t, v, "%s in %s", k, path)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.kubeconfig)
	require.NoError(t, err, "kubeconfig")
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	require.NoError(t, apis.AddToScheme(s))
	require.NoError(t, apiextensionsv1.AddToScheme(s))
	cl.c, err = client.New(cfg, client.Options{Scheme: s})
	require.NoError(t, err, "client")
	cl.cs, err = kubernetes.NewForConfig(cfg)
	require.NoError(t, err, "clientset")
	return cl
}

// run executes a binary with the cluster's kubeconfig, streaming its output into the test log
// line by line (so progress shows while it runs), and returns the output and the error.
func (cl *cluster) run(t *testing.T, timeout time.Duration, stdin string, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cl.kubeconfig)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			t.Logf("  %s| %s", filepath.Base(bin), sc.Text())
		}
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		err = fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return out.String(), err
}

func (cl *cluster) kubectlRun(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	return cl.run(t, kubectlDeadline, stdin, cl.kubectl, args...)
}

// kubectlOut runs kubectl without echoing its output (for polled reads).
func (cl *cluster) kubectlOut(args ...string) (string, error) {
	return cl.quiet(cl.kubectl, args...)
}

// addonOut runs kruise-addon without echoing its output (for polled reads).
func (cl *cluster) addonOut(args ...string) (string, error) {
	return cl.quiet(cl.addon, args...)
}

func (cl *cluster) quiet(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kubectlDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cl.kubeconfig)
	b, err := cmd.CombinedOutput()
	return string(b), err
}
