//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const (
	envMetaName     = "envmeta"
	envMetaReplicas = 2
)

// envMetaCloneSet is a CloneSet whose container reads the pod label track through env; the
// sample image prints SAMPLE_ENV to its log when it starts.
func envMetaCloneSet(image, track string) string {
	return podWorkload{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", name: envMetaName, replicas: envMetaReplicas,
		labels: ", track: " + track, grace: 1, spec: inPlaceCloneSet("1"),
		containers: mainContainer(image, "env:", "- name: SAMPLE_ENV", "  valueFrom:", `    fieldRef: {fieldPath: "metadata.labels['track']"}`)}.String()
}

// envMetaPods lists the CloneSet's live pods by name.
func (cl *cluster) envMetaPods(t *testing.T) map[string]*corev1.Pod {
	t.Helper()
	pods, err := cl.livePods(context.Background(), envMetaName)
	require.NoError(t, err)
	return pods
}

// envMetaSettled reports whether the CloneSet is at its generation with every replica updated
// and ready.
func (cl *cluster) envMetaSettled(t *testing.T) error {
	t.Helper()
	cs := &appsv1alpha1.CloneSet{}
	if err := cl.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: envMetaName}, cs); err != nil {
		return err
	}
	s := cs.Status
	return framework.Want(s.ObservedGeneration == cs.Generation && s.Replicas == envMetaReplicas &&
		s.UpdatedReplicas == envMetaReplicas && s.UpdatedReadyReplicas == envMetaReplicas && s.ReadyReplicas == envMetaReplicas,
		fmt.Sprintf("generation %d observed %d, replicas %d updated %d updatedReady %d ready %d",
			cs.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.UpdatedReadyReplicas, s.ReadyReplicas))
}

// testEnvFromMetadata: a label the container reads through env changes in the CloneSet's
// template; the pods are updated in place, kruise-daemon restarts each container once on the
// real node, and the container's log shows the new value.
func testEnvFromMetadata(t *testing.T, cl *cluster) {
	image := cl.registry + "/e2e/sample:v1"
	_, err := cl.kubectlRun(t, envMetaCloneSet(image, "stable"), "apply", "-f", "-")
	require.NoError(t, err, "apply the env-from-metadata CloneSet")
	framework.Eventually(t, rolloutTimeout, "the CloneSet Ready", func(context.Context) error { return cl.envMetaSettled(t) })
	before := cl.envMetaPods(t)
	require.Len(t, before, envMetaReplicas)
	for n := range before {
		framework.Eventually(t, podTimeout, "pod "+n+" logs the first value", func(context.Context) error {
			out, err := cl.kubectlOut("logs", "-n", ns, n)
			return framework.Want(err == nil && strings.Contains(out, "SAMPLE_ENV stable"), out)
		})
	}

	patch := `{"spec":{"template":{"metadata":{"labels":{"track":"canary"}}}}}`
	_, err = cl.kubectlRun(t, "", "patch", "clone", envMetaName, "-n", ns, "--type", "merge", "-p", patch)
	require.NoError(t, err, "patch the label the env reads")
	framework.Eventually(t, rolloutTimeout, "every pod updated in place with its container restarted once", func(context.Context) error {
		if err := cl.envMetaSettled(t); err != nil {
			return err
		}
		for n, p := range cl.envMetaPods(t) {
			if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].RestartCount != 1 {
				return fmt.Errorf("pod %s container statuses %+v", n, p.Status.ContainerStatuses)
			}
		}
		return nil
	})
	after := cl.envMetaPods(t)
	require.Len(t, after, envMetaReplicas)
	for n, b := range before {
		a, ok := after[n]
		require.True(t, ok, "pod %s kept its name", n)
		require.Equal(t, b.UID, a.UID, "pod %s kept its UID", n)
		require.Equal(t, "canary", a.Labels["track"], "pod %s carries the new label", n)
		require.Equal(t, int32(1), a.Status.ContainerStatuses[0].RestartCount, "pod %s restarted its container once", n)
		require.NotEqual(t, b.Status.ContainerStatuses[0].ContainerID, a.Status.ContainerStatuses[0].ContainerID, "pod %s runs a new container", n)
		var ready corev1.ConditionStatus
		for _, c := range a.Status.Conditions {
			if c.Type == appspub.InPlaceUpdateReady {
				ready = c.Status
			}
		}
		require.Equal(t, corev1.ConditionTrue, ready, "pod %s has InPlaceUpdateReady True again", n)
		out, err := cl.kubectlOut("logs", "-n", ns, n)
		require.NoError(t, err, out)
		require.Contains(t, out, "SAMPLE_ENV canary", "pod %s's container runs with the new label value", n)
		prev, err := cl.kubectlOut("logs", "-n", ns, n, "--previous")
		require.NoError(t, err, prev)
		require.Contains(t, prev, "SAMPLE_ENV stable", "pod %s's previous container ran with the old value", n)
		t.Logf("env from metadata: pod %s kept name and UID, restartCount 1, log %q (previous %q)", n, strings.TrimSpace(out), strings.TrimSpace(prev))
	}

	_, err = cl.kubectlRun(t, "", "delete", "clone", envMetaName, "-n", ns, "--wait=true")
	require.NoError(t, err, "delete the env-from-metadata CloneSet")
	framework.Eventually(t, podTimeout, "the env-from-metadata pods gone", func(context.Context) error {
		n := len(cl.envMetaPods(t))
		return framework.Want(n == 0, fmt.Sprintf("%d pods", n))
	})
}
