package chart

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// devUpTimeout covers `make dev-up` with the test binaries already built: certificates, etcd,
// the apiserver's start and the CRDs.
const devUpTimeout = 3 * time.Minute

// TestDevUpBypassesTheProxyAndLetsPlainHelmInstall runs scripts/controlplane/up.sh (what `make
// dev-up` runs) from a shell that has HTTPS_PROXY set, as a developer behind a proxy has: the
// apiserver must reach loopback and the service range directly (its webhook calls would otherwise
// go to the proxy), and the chart README's plain helm command must install over the CRDs dev-up
// put there, without --take-ownership.
func TestDevUpBypassesTheProxyAndLetsPlainHelmInstall(t *testing.T) {
	h := newHelmCLI(t)
	dir := filepath.Join(t.TempDir(), "dev")
	script := func(name string, env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), devUpTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "controlplane", name), dir)
		cmd.Env = append(os.Environ(), env...)
		cmd.WaitDelay = 10 * time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("scripts/controlplane/%s: %v\n%s", name, err, stderr.String())
		}
		return stdout.String()
	}
	script("up.sh", "HTTPS_PROXY=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "NO_PROXY=", "no_proxy=")
	t.Cleanup(func() { script("down.sh") })

	pid, err := strconv.Atoi(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "kas.pid")))))
	if err != nil {
		t.Fatalf("kas.pid: %v", err)
	}
	environ := map[string]string{}
	for _, kv := range strings.Split(string(readFile(t, filepath.Join("/proc", strconv.Itoa(pid), "environ"))), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			environ[k] = v
		}
	}
	for _, key := range []string{"NO_PROXY", "no_proxy"} {
		got := strings.Split(environ[key], ",")
		for _, want := range []string{"127.0.0.1", "localhost", "10.0.0.0/24", ".svc"} {
			if !slices.Contains(got, want) {
				t.Errorf("the apiserver's %s is %q: it lacks %s, so its webhook calls there go to HTTPS_PROXY", key, environ[key], want)
			}
		}
	}

	// The README's command, pasted, against dev-up's kubeconfig.
	h.env = append(h.env, "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
	h.mustRun(t, "upgrade", "--install", "kruise", chartDir(t), "-n", "kruise-system", "--create-namespace",
		"--set", "imageRegistry=registry.internal:5000/kruise")
	assertRelease(t, h, 1, "deployed")
}
