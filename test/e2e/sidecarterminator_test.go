//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// jobSidecarApp labels the Job pods of the SidecarTerminator step.
const jobSidecarApp = "sidecar-job"

// testSidecarTerminator: a SidecarSet injects a sidecar that asks to be stopped when the job
// exits into a batch/v1 Job's pod; the main container exits 0 at once, the SidecarTerminator
// asks kruise-daemon, through a ContainerRecreateRequest, to stop the sidecar, the kubelet
// (restartPolicy Never) leaves it exited, and the Job completes.
func testSidecarTerminator(t *testing.T, cl *cluster) {
	sidecar := sidecarSet{name: "e2e-job-sidecar", app: jobSidecarApp, container: "proxy", image: cl.registry + "/e2e/sample:v1",
		more: []string{"env:", fmt.Sprintf(`- {name: %s, value: "true"}`, appsv1alpha1.KruiseTerminateSidecarEnv)}}
	manifests := sidecar.String() + fmt.Sprintf(`---
apiVersion: batch/v1
kind: Job
metadata: {name: %[3]s, namespace: %[2]s}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: {app: %[3]s}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 5
      containers:
      - name: main
        image: %[1]s/e2e/sample:v1
        args: ["exists", "/etc/image-version"]
`, cl.registry, ns, jobSidecarApp)
	_, err := cl.kubectlRun(t, manifests, "apply", "-f", "-")
	require.NoError(t, err, "apply the SidecarSet and the Job")
	t.Cleanup(func() {
		_, _ = cl.kubectlRun(t, manifests, "delete", "--wait=true", "--cascade=foreground", "-f", "-")
	})

	framework.Eventually(t, rolloutTimeout, "the Job completes once its sidecar is stopped", func(ctx context.Context) error {
		job := &batchv1.Job{}
		if err := cl.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobSidecarApp}, job); err != nil {
			return err
		}
		if job.Status.Failed > 0 {
			return fmt.Errorf("the Job failed: %+v", job.Status)
		}
		return framework.Want(job.Status.Succeeded == 1, fmt.Sprintf("succeeded %d, active %d", job.Status.Succeeded, job.Status.Active))
	})

	pods := &corev1.PodList{}
	require.NoError(t, cl.c.List(context.Background(), pods, client.InNamespace(ns), client.MatchingLabels{"app": jobSidecarApp}))
	require.Len(t, pods.Items, 1, "one pod for the Job")
	pod := &pods.Items[0]
	require.Equal(t, []string{"proxy", "main"}, containerNamesOf(pod), "the SidecarSet injected the sidecar")
	require.Equal(t, corev1.PodSucceeded, pod.Status.Phase)
	for _, st := range pod.Status.ContainerStatuses {
		require.NotNil(t, st.State.Terminated, "container %s ended", st.Name)
		require.Equal(t, int32(0), st.State.Terminated.ExitCode, "container %s exit code", st.Name)
		require.Zero(t, st.RestartCount, "container %s was not started again", st.Name)
	}
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	require.NoError(t, cl.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "sidecar-termination-" + string(pod.UID)}, crr),
		"the SidecarTerminator's request stopped the sidecar")
	require.Equal(t, "proxy", crr.Spec.Containers[0].Name)
}

func containerNamesOf(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.Containers {
		out = append(out, c.Name)
	}
	return out
}
