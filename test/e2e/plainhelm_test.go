//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// testPlainHelmUninstallGate: a CI pipeline installs the chart with plain helm (from the mirror
// when the run has a bundle, as the README's CI commands do), and the chart's pre-delete hook,
// run by the real kubelet, refuses `helm uninstall` while a CloneSet remains, naming it; once the
// CloneSet is deleted, `helm uninstall` goes through and leaves no pod or Job behind.
func testPlainHelmUninstallGate(t *testing.T, cl *cluster) {
	helm := os.Getenv("HELM")
	require.NotEmpty(t, helm, "HELM names the helm binary (scripts/e2e-cluster/e2e.sh sets it)")
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		t.Helper()
		cmd := append([]string{"--kubeconfig", cl.kubeconfig, "--registry-config", filepath.Join(home, "registry.json"),
			"--repository-cache", filepath.Join(home, "cache"), "--repository-config", filepath.Join(home, "repos.yaml")}, args...)
		return cl.run(t, installTimeout+kubectlDeadline, "", helm, cmd...)
	}
	version := chartVersion(t)
	install := []string{"upgrade", "--install", "kruise-addon"}
	if cl.bundle != "" {
		install = append(install, "oci://"+cl.registry+"/charts/kruise", "--version", version, "--plain-http")
	} else {
		install = append(install, filepath.Join("..", "..", "charts", "kruise"))
	}
	install = append(install, "-n", addonNS, "--create-namespace", "--wait", "--timeout", installTimeout.String(),
		"--set", "imageRegistry="+cl.registry, "--set", "manager.hostNetwork=true",
		"--set", "webhookConfiguration.host="+cl.nodeIP, "--set", "daemon.enabled=false")
	out, err := run(install...)
	require.NoError(t, err, "helm upgrade --install:\n%s", out)

	const name = "plain-helm"
	cs := strings.Replace(strings.Replace(sampleCloneSet(cl.registry+"/e2e/sample:v1"), "name: "+sampleName, "name: "+name, 1), "replicas: 5", "replicas: 0", 1)
	// With hostNetwork the chart's rollout allows one unavailable replica, and helm's --wait
	// counts the Deployment ready at its replicas minus that, so it has not waited for the
	// manager: its webhooks answer once it serves and the configurations carry its CA.
	framework.Eventually(t, podTimeout, "the CloneSet to be admitted by the chart's webhooks", func(context.Context) error {
		_, err := cl.kubectlRun(t, cs, "apply", "-f", "-")
		return err
	})

	out, err = run("uninstall", "kruise-addon", "-n", addonNS, "--timeout", uninstallWait.String())
	require.Error(t, err, "helm uninstall goes through while a CloneSet remains:\n%s", out)
	require.Contains(t, out, "job kruise-uninstall-check failed", "the refusal comes from the pre-delete hook")
	logs, err := cl.kubectlOut("logs", "-n", addonNS, "job/kruise-uninstall-check")
	require.NoError(t, err, logs)
	require.Contains(t, logs, "CloneSet: 1 in namespace(s) "+ns, "the hook names the remaining CloneSet")

	_, err = cl.kubectlRun(t, "", "delete", "clone", name, "-n", ns, "--wait=true")
	require.NoError(t, err, "delete the CloneSet")
	out, err = run("uninstall", "kruise-addon", "-n", addonNS, "--wait", "--timeout", uninstallWait.String())
	require.NoError(t, err, "helm uninstall once the CloneSet is gone:\n%s", out)
	status, err := run("status", "kruise-addon", "-n", addonNS)
	require.Error(t, err, "the release is gone: %s", status)
	framework.Eventually(t, uninstallWait, "no pod or Job of the chart left", func(ctx context.Context) error {
		pods := &corev1.PodList{}
		if err := cl.c.List(ctx, pods, client.InNamespace(addonNS)); err != nil {
			return err
		}
		jobs, err := cl.kubectlOut("get", "jobs", "-n", addonNS, "-o", "name")
		if err != nil {
			return fmt.Errorf("%v: %s", err, jobs)
		}
		return framework.Want(len(pods.Items) == 0 && strings.TrimSpace(jobs) == "", fmt.Sprintf("%d pods, jobs %q", len(pods.Items), jobs))
	})
}

// chartVersion is the chart's version, as bundle push tags the chart in the mirror.
func chartVersion(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "charts", "kruise", "Chart.yaml"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^version:\s*"?([^"\s]+)"?`).FindSubmatch(b)
	require.NotNil(t, m, "no version in Chart.yaml")
	return string(m[1])
}
