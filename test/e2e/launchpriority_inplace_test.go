//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const priorityApp = "priority-e2e"

// priorityCloneSet is one pod of an app container and a sidecar with launch priority 10, both
// on image, updated in place.
func priorityCloneSet(image string) string {
	return podWorkload{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", name: priorityApp, replicas: 1, grace: 1, spec: inPlaceCloneSet(""),
		containers: mainContainer(image) + "\n      - name: sidecar\n        image: " + image + "\n        env:\n        - {name: KRUISE_CONTAINER_PRIORITY, value: \"10\"}"}.String()
}

// testLaunchPriorityInPlace updates both containers of a pod in place on the real kubelet and
// checks, over every version of the pod a watch delivers, that the app's image changed only
// once the sidecar's new container ran and was ready, and that the state annotation records the
// sidecar's batch, then the app's.
func testLaunchPriorityInPlace(t *testing.T, cl *cluster) {
	v1, v2 := cl.registry+"/e2e/sample:v1", cl.registry+"/e2e/sample:v2"
	_, err := cl.kubectlRun(t, priorityCloneSet(v1), "apply", "-f", "-")
	require.NoError(t, err, "apply the CloneSet")
	defer func() { _, _ = cl.kubectlRun(t, "", "delete", "clone", priorityApp, "-n", ns, "--wait=true") }()

	var before *corev1.Pod
	framework.Eventually(t, rolloutTimeout, "the pod running main and sidecar, ready", func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, cl.c, ns, priorityApp)
		if err != nil {
			return err
		}
		if len(pods) != 1 || !podReady(&pods[0]) {
			return fmt.Errorf("%d pods, want 1 ready", len(pods))
		}
		before = &pods[0]
		return nil
	})
	oldSidecarID := framework.ContainerStatus(before, "sidecar").ImageID

	// Every version of the pod from here on.
	ctx, cancel := context.WithCancel(context.Background())
	w, err := cl.cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + before.Name, ResourceVersion: before.ResourceVersion})
	require.NoError(t, err, "watch the pod")
	var mu sync.Mutex
	var versions []corev1.Pod
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				versions = append(versions, *p)
				mu.Unlock()
			}
		}
	}()

	digest := cl.registryDigest(t, v2)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":%[1]q},{"name":"sidecar","image":%[1]q,"env":[{"name":"KRUISE_CONTAINER_PRIORITY","value":"10"}]}]}}}}`, v2)
	_, err = cl.kubectlRun(t, "", "patch", "clone", priorityApp, "-n", ns, "--type", "merge", "-p", patch)
	require.NoError(t, err, "patch both images")
	framework.Eventually(t, rolloutTimeout, "both containers restarted in place on v2 and the CloneSet updated and ready", func(ctx context.Context) error {
		cs := &appsv1alpha1.CloneSet{}
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: priorityApp}, cs); err != nil {
			return err
		}
		st := cs.Status
		if st.ObservedGeneration != cs.Generation || st.UpdatedReplicas != 1 || st.UpdatedReadyReplicas != 1 {
			return fmt.Errorf("status %+v", st)
		}
		p := &corev1.Pod{}
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: before.Name}, p); err != nil {
			return err
		}
		for _, c := range []string{"main", "sidecar"} {
			if s := framework.ContainerStatus(p, c); s == nil || !strings.HasSuffix(s.ImageID, "@"+digest) || !s.Ready {
				return fmt.Errorf("container %s %+v", c, s)
			}
		}
		return nil
	})
	cancel()
	<-done

	after := &corev1.Pod{}
	require.NoError(t, cl.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: before.Name}, after))
	require.Equal(t, before.UID, after.UID, "the pod was updated in place")
	sidecarFirst := false
	for _, p := range versions {
		side := framework.ContainerStatus(&p, "sidecar")
		if specImage(&p, "main") == v2 {
			require.True(t, specImage(&p, "sidecar") == v2 && side != nil && side.ImageID != oldSidecarID && side.Ready,
				"pod version %s changed the app's image before the sidecar's new container ran and was ready: sidecar %+v", p.ResourceVersion, side)
			continue
		}
		if specImage(&p, "sidecar") == v2 {
			sidecarFirst = true
		}
	}
	require.True(t, sidecarFirst, "some version had the sidecar on v2 and the app on v1")

	var state appspub.InPlaceUpdateState
	require.NoError(t, json.Unmarshal([]byte(after.Annotations[appspub.InPlaceUpdateStateKey]), &state), "read the state annotation")
	var batches []string
	for _, b := range state.ContainerBatchesRecord {
		batches = append(batches, strings.Join(b.Containers, ","))
	}
	require.Equal(t, []string{"sidecar", "main"}, batches, "containerBatchesRecord")
	require.Empty(t, state.NextContainerImages, "nothing waits once the update finished")
	for _, c := range []string{"main", "sidecar"} {
		require.Equal(t, int32(1), framework.ContainerStatus(after, c).RestartCount, "container %s restarted once", c)
	}
	require.Equal(t, corev1.ConditionTrue, framework.PodCondition(after, appspub.InPlaceUpdateReady), "InPlaceUpdateReady after the last batch")
	t.Logf("launch priority in place: %d pod versions seen; batches %v; both containers on %s", len(versions), batches, digest)
}
