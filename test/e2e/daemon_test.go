//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// testDaemonRuntime: the daemon on the node found containerd through the socket it was given.
func testDaemonRuntime(t *testing.T, cl *cluster) {
	out, err := cl.run(t, kubectlDeadline, "", cl.addon, "status")
	require.NoError(t, err, "status")
	require.Contains(t, out, fmt.Sprintf("daemon on %s: ready=true", cl.nodeName), "status reports the daemon Ready on the node")
	framework.Eventually(t, podTimeout, "the daemon to log the CRI runtime it found", func(context.Context) error {
		logs, err := cl.kubectlOut("logs", "-n", addonNS, "daemonset/kruise-daemon")
		if err != nil {
			return errors.New(logs)
		}
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, "CRI runtime found") && strings.Contains(l, `runtimeName="containerd"`) {
				t.Logf("daemon: %s", strings.TrimSpace(l))
				return nil
			}
		}
		return errors.New("no `CRI runtime found ... runtimeName=\"containerd\"` line yet")
	})
}

// testContainerRecreate: a ContainerRecreateRequest restarts one pod's container through the daemon.
func testContainerRecreate(t *testing.T, cl *cluster) {
	pods := cl.podStates(t, "sample")
	require.NotEmpty(t, pods)
	var pod string
	for n := range pods {
		pod = n
		break
	}
	before := pods[pod]
	crr := fmt.Sprintf(`apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata: {name: e2e-restart, namespace: %s}
spec:
  podName: %s
  containers:
  - name: main
  strategy: {failurePolicy: Fail, terminationGracePeriodSeconds: 1}
  activeDeadlineSeconds: 120
`, ns, pod)
	_, err := cl.kubectlRun(t, crr, "create", "-f", "-")
	require.NoError(t, err, "create the ContainerRecreateRequest")
	got := framework.WaitFor(t, cl.c, client.ObjectKey{Namespace: ns, Name: "e2e-restart"}, rolloutTimeout, "the ContainerRecreateRequest Completed", func(got *appsv1alpha1.ContainerRecreateRequest) error {
		return framework.Want(got.Status.Phase == appsv1alpha1.ContainerRecreateRequestCompleted, fmt.Sprintf("phase %q message %q", got.Status.Phase, got.Status.Message))
	})
	require.Len(t, got.Status.ContainerRecreateStates, 1)
	require.Equal(t, appsv1alpha1.ContainerRecreateRequestSucceeded, got.Status.ContainerRecreateStates[0].Phase, "the container's recreation Succeeded")
	framework.Eventually(t, podTimeout, "the container restarted and Ready", func(context.Context) error {
		p := &corev1.Pod{}
		if err := cl.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: pod}, p); err != nil {
			return err
		}
		st := p.Status.ContainerStatuses[0]
		return framework.Want(st.RestartCount > before.restarts && st.Ready && string(p.UID) == before.uid,
			fmt.Sprintf("restartCount %d (was %d) ready %v", st.RestartCount, before.restarts, st.Ready))
	})
	_, err = cl.kubectlRun(t, "", "delete", "containerrecreaterequest", "e2e-restart", "-n", ns, "--wait=true")
	require.NoError(t, err, "delete the ContainerRecreateRequest")
	t.Logf("ContainerRecreateRequest: pod %s container main restarted (restartCount %d -> more), request Completed, container Succeeded", pod, before.restarts)
}

func (cl *cluster) nodeHasImage(t *testing.T, ref string) bool {
	t.Helper()
	out, err := cl.quiet("ctr", "--address", cl.env["CONTAINERD_SOCK"], "-n", "k8s.io", "images", "ls", "-q")
	require.NoError(t, err, out)
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == ref {
			return true
		}
	}
	return false
}

// testImagePullJob: an ImagePullJob pre-pulls an image the node does not have.
func testImagePullJob(t *testing.T, cl *cluster) {
	ref := cl.registry + "/e2e/sample:v3"
	require.False(t, cl.nodeHasImage(t, ref), "the node lacks %s before the job", ref)
	job := fmt.Sprintf(`apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: e2e-prepull, namespace: %s}
spec:
  image: %s
  parallelism: 1
  completionPolicy: {type: Always, activeDeadlineSeconds: 120}
  pullPolicy: {timeoutSeconds: 60, backoffLimit: 2}
`, ns, ref)
	_, err := cl.kubectlRun(t, job, "create", "-f", "-")
	require.NoError(t, err, "create the ImagePullJob")
	got := framework.WaitFor(t, cl.c, client.ObjectKey{Namespace: ns, Name: "e2e-prepull"}, rolloutTimeout, "the ImagePullJob to finish", func(got *appsv1alpha1.ImagePullJob) error {
		s := got.Status
		return framework.Want(s.CompletionTime != nil, fmt.Sprintf("desired %d active %d succeeded %d failed %d %q", s.Desired, s.Active, s.Succeeded, s.Failed, s.Message))
	})
	require.Equal(t, int32(1), got.Status.Desired, "desired")
	require.Equal(t, int32(1), got.Status.Succeeded, "1 of 1 succeeded")
	require.Equal(t, int32(0), got.Status.Failed, "failed")
	require.True(t, cl.nodeHasImage(t, ref), "%s is in containerd after the job", ref)
	out, err := cl.kubectlOut("get", "imagepulljob", "-n", ns, "e2e-prepull")
	require.NoError(t, err, out)
	t.Logf("kubectl get imagepulljob:\n%s", strings.TrimSpace(out))
	_, err = cl.kubectlRun(t, "", "delete", "imagepulljob", "e2e-prepull", "-n", ns, "--wait=true")
	require.NoError(t, err, "delete the ImagePullJob")
}

// saveAddonLogs writes the manager's and daemon's logs next to the cluster's before uninstall
// removes their pods (the kubelet deletes a gone pod's log files).
func (cl *cluster) saveAddonLogs(t *testing.T) {
	t.Helper()
	for file, target := range map[string]string{"manager.log": "deployment/kruise-controller-manager", "daemon.log": "daemonset/kruise-daemon"} {
		out, err := cl.kubectlOut("logs", "-n", addonNS, target, "--tail=-1")
		if err != nil {
			continue
		}
		if werr := os.WriteFile(filepath.Join(cl.logs, file), []byte(out), 0o644); werr != nil {
			t.Logf("save %s: %v", file, werr)
		}
	}
}
