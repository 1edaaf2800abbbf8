//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const sidecarApp = "sidecar-e2e"

// sidecarManifests are two SidecarSets for app=sidecar-e2e pods (a cold-upgraded agent and a
// hot-upgraded proxy whose idle container runs v3) and a CloneSet of two such pods.
func sidecarManifests(registry string) string {
	return sidecarSet{name: "e2e-log", app: sidecarApp, image: registry + "/e2e/sample:v1"}.String() + "---\n" +
		sidecarSet{name: "e2e-mesh", app: sidecarApp, container: "proxy", image: registry + "/e2e/sample:v1", more: []string{
			"upgradeStrategy:", "  upgradeType: HotUpgrade", "  hotUpgradeEmptyImage: " + registry + "/e2e/sample:v3"}}.String() +
		"---\n" + podWorkload{apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet", name: sidecarApp, replicas: 2, grace: 1,
		containers: mainContainer(registry + "/e2e/sample:v1")}.String()
}

func (cl *cluster) sidecarPods(ctx context.Context) (map[string]*corev1.Pod, error) {
	return cl.livePods(ctx, sidecarApp)
}

func specImage(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// testSidecarSet injects SidecarSets into a CloneSet's pods on the real node, updates the cold
// sidecar in place (same pod, only the sidecar restarts) and the hot one (one proxy container
// serves at every look).
func testSidecarSet(t *testing.T, cl *cluster) {
	_, err := cl.kubectlRun(t, sidecarManifests(cl.registry), "apply", "-f", "-")
	require.NoError(t, err, "apply the SidecarSets and the CloneSet")
	defer func() {
		_, _ = cl.kubectlRun(t, "", "delete", "clone", sidecarApp, "-n", ns, "--wait=true")
		_, _ = cl.kubectlRun(t, "", "delete", "sidecarset", "e2e-log", "e2e-mesh")
	}()

	var before map[string]*corev1.Pod
	framework.Eventually(t, rolloutTimeout, "two pods running main, agent and the proxy pair, all ready", func(ctx context.Context) error {
		pods, err := cl.sidecarPods(ctx)
		if err != nil {
			return err
		}
		if len(pods) != 2 {
			return fmt.Errorf("%d pods", len(pods))
		}
		for n, p := range pods {
			var names []string
			for _, c := range p.Spec.Containers {
				names = append(names, c.Name)
			}
			sort.Strings(names)
			if strings.Join(names, ",") != "agent,main,proxy-1,proxy-2" {
				return fmt.Errorf("pod %s containers %v", n, names)
			}
			if !podReady(p) {
				return fmt.Errorf("pod %s not ready", n)
			}
		}
		before = pods
		return nil
	})

	// Cold upgrade of the agent.
	v2 := cl.registry + "/e2e/sample:v2"
	digest := cl.registryDigest(t, v2)
	_, err = cl.kubectlRun(t, "", "patch", "sidecarset", "e2e-log", "--type", "json", "-p",
		fmt.Sprintf(`[{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, v2))
	require.NoError(t, err, "patch the agent image")
	framework.Eventually(t, rolloutTimeout, "every agent restarted in place on v2", func(ctx context.Context) error {
		pods, err := cl.sidecarPods(ctx)
		if err != nil {
			return err
		}
		for n, p := range pods {
			cs := framework.ContainerStatus(p, "agent")
			if cs == nil || !strings.HasSuffix(cs.ImageID, "@"+digest) || !cs.Ready {
				return fmt.Errorf("pod %s agent %+v", n, cs)
			}
		}
		s := &appsv1alpha1.SidecarSet{}
		if err := cl.c.Get(ctx, types.NamespacedName{Name: "e2e-log"}, s); err != nil {
			return err
		}
		return framework.Want(s.Status.UpdatedReadyPods == 2 && s.Status.ObservedGeneration == s.Generation, fmt.Sprintf("status %+v", s.Status))
	})
	after, err := cl.sidecarPods(context.Background())
	require.NoError(t, err)
	for n, b := range before {
		a, ok := after[n]
		require.True(t, ok, "pod %s kept its name", n)
		require.Equal(t, b.UID, a.UID, "pod %s kept its UID", n)
		require.Greater(t, framework.ContainerStatus(a, "agent").RestartCount, framework.ContainerStatus(b, "agent").RestartCount, "pod %s agent restarted", n)
		require.Equal(t, int32(0), framework.ContainerStatus(a, "main").RestartCount, "pod %s app container never restarted", n)
	}
	t.Logf("cold sidecar upgrade: 2 pods kept UID, agent on %s, main restartCount 0", digest)

	// Hot upgrade of the proxy, sampled: one container of the pair serves at every look.
	empty := cl.registry + "/e2e/sample:v3"
	var mu sync.Mutex
	var gaps []string
	looks := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			pods, err := cl.sidecarPods(ctx)
			cancel()
			if err != nil {
				continue
			}
			mu.Lock()
			looks++
			for n, p := range pods {
				serving := false
				for _, c := range []string{"proxy-1", "proxy-2"} {
					if cs := framework.ContainerStatus(p, c); cs != nil && cs.Ready && cs.State.Running != nil && specImage(p, c) != empty {
						serving = true
					}
				}
				if !serving {
					gaps = append(gaps, fmt.Sprintf("%s at look %d", n, looks))
				}
			}
			mu.Unlock()
		}
	}()
	_, err = cl.kubectlRun(t, "", "patch", "sidecarset", "e2e-mesh", "--type", "json", "-p",
		fmt.Sprintf(`[{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, v2))
	require.NoError(t, err, "patch the proxy image")
	framework.Eventually(t, rolloutTimeout, "proxy-2 serves v2 and proxy-1 idles on the empty image", func(ctx context.Context) error {
		pods, err := cl.sidecarPods(ctx)
		if err != nil {
			return err
		}
		for n, p := range pods {
			c1, c2 := framework.ContainerStatus(p, "proxy-1"), framework.ContainerStatus(p, "proxy-2")
			if c1 == nil || c2 == nil || !strings.HasSuffix(c2.ImageID, "@"+digest) || !c2.Ready ||
				specImage(p, "proxy-1") != empty || !c1.Ready || p.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer] != `{"proxy":"proxy-2"}` {
				return errors.New("pod " + n + " not switched yet")
			}
		}
		return nil
	})
	close(stop)
	wg.Wait()
	require.Empty(t, gaps, "a proxy container served at every look (%d looks)", looks)
	final, err := cl.sidecarPods(context.Background())
	require.NoError(t, err)
	for n, p := range final {
		require.Equal(t, before[n].UID, p.UID, "pod %s kept its UID", n)
		require.Equal(t, int32(0), framework.ContainerStatus(p, "main").RestartCount, "pod %s app container never restarted", n)
	}
	t.Logf("hot sidecar upgrade: a proxy served at each of %d looks", looks)
}

// testLaunchPriority starts a pod annotated Ordered on the real kubelet: its containers start
// one after the other, in the order listed, as their barrier keys appear.
func testLaunchPriority(t *testing.T, cl *cluster) {
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: ordered-e2e
  namespace: %[2]s
  annotations: {apps.kruise.io/container-launch-priority: Ordered}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: first, image: %[1]s/e2e/sample:v1}
  - {name: second, image: %[1]s/e2e/sample:v2}
  - {name: third, image: %[1]s/e2e/sample:v3}
`, cl.registry, ns)
	_, err := cl.kubectlRun(t, manifest, "apply", "-f", "-")
	require.NoError(t, err, "create the ordered pod")
	defer func() { _, _ = cl.kubectlRun(t, "", "delete", "pod", "ordered-e2e", "-n", ns, "--wait=true") }()
	var p *corev1.Pod
	framework.Eventually(t, rolloutTimeout, "every container running", func(ctx context.Context) error {
		p = &corev1.Pod{}
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ordered-e2e"}, p); err != nil {
			return err
		}
		for _, n := range []string{"first", "second", "third"} {
			if cs := framework.ContainerStatus(p, n); cs == nil || cs.State.Running == nil {
				return fmt.Errorf("container %s not running", n)
			}
		}
		return nil
	})
	started := func(n string) time.Time { return framework.ContainerStatus(p, n).State.Running.StartedAt.Time }
	t.Logf("startedAt: first %s, second %s, third %s", started("first"), started("second"), started("third"))
	// startedAt has a resolution of one second, and each container waits for the one before
	// to be ready, so the times never go backwards and the last starts after the first.
	require.False(t, started("second").Before(started("first")), "second started before first")
	require.False(t, started("third").Before(started("second")), "third started before second")
	require.True(t, started("first").Before(started("third")), "first started before third")
}
