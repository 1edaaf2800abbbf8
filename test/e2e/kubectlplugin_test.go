//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kubectlKruise builds the kubectl plugin for this run (or takes $KUBECTL_KRUISE).
func kubectlKruise(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("KUBECTL_KRUISE"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "kubectl-kruise")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/kruise-addon/kruise-addon/cmd/kubectl-kruise").CombinedOutput()
	require.NoError(t, err, "build kubectl-kruise: %s", out)
	return bin
}

// testKubectlPluginRolloutStatus changes the sample CloneSet's image with kubectl-kruise and
// follows the in-place update on the real kubelet with kubectl-kruise rollout status, which
// must print its progress and return only once every pod runs the new image.
func testKubectlPluginRolloutStatus(t *testing.T, cl *cluster) {
	plugin := kubectlKruise(t)
	before := cl.podStates(t, "sample")
	require.Len(t, before, 5)
	image := cl.registry + "/e2e/sample:v1"
	digest := cl.registryDigest(t, image)
	out, err := cl.run(t, kubectlDeadline, "", plugin, "set", "image", "-n", ns, "cloneset/"+sampleName, "main="+image)
	require.NoError(t, err)
	require.Equal(t, "cloneset.apps.kruise.io/"+sampleName+" image updated\n", out)

	out, err = cl.run(t, rolloutTimeout, "", plugin, "rollout", "status", "-n", ns, "cloneset/"+sampleName, "--timeout", rolloutTimeout.String())
	require.NoError(t, err, "rollout status exits 0 once the update is done")
	require.Contains(t, out, `Waiting for cloneset "sample" rollout to finish: `, "rollout status prints its progress")
	require.True(t, strings.HasSuffix(out, "cloneset \"sample\" successfully rolled out\n"), "rollout status ends with the finished line:\n%s", out)

	// When it returned, the update was done: no waiting here.
	ok, msg := settled(cl.cloneSet(t))
	require.True(t, ok, "the CloneSet is rolled out when rollout status returns: %s", msg)
	after := cl.podStates(t, "sample")
	require.Len(t, after, 5)
	for n, b := range before {
		a, found := after[n]
		require.True(t, found, "pod %s kept its name", n)
		require.Equal(t, b.uid, a.uid, "pod %s was updated in place", n)
		require.Equal(t, b.restarts+1, a.restarts, "pod %s restarted its container once", n)
		require.Equal(t, cl.registry+"/e2e/sample@"+digest, a.imageID, "pod %s runs the v1 digest", n)
	}
	t.Logf("kubectl-kruise rollout status followed the in-place update:\n%s", out)
}
