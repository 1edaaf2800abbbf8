package sidecarset

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	return framework.NewNamespace(t, env.Client, "sidecarset-", nil)
}

// sidecarSetIn is a SidecarSet bound to namespace ns, selecting app=web pods, with the given
// sidecars (each at BeforeAppContainer unless the caller changes it).
func sidecarSetIn(name, ns string, sidecars ...corev1.Container) *appsv1alpha1.SidecarSet {
	s := &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1alpha1.SidecarSetSpec{
			Namespace: ns,
			Selector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	for _, c := range sidecars {
		s.Spec.Containers = append(s.Spec.Containers, appsv1alpha1.SidecarContainer{Container: c})
	}
	return s
}

// createSidecarSet creates s and deletes it when the test ends (SidecarSets have no namespace).
// agentSet is the SidecarSet name injecting one sidecar, agent at agent:1, into the pods of ns.
func agentSet(name, ns string) *appsv1alpha1.SidecarSet {
	return sidecarSetIn(name, ns, corev1.Container{Name: "agent", Image: "agent:1"})
}

// createWithRevision creates s and returns its first revision once the status names it.
func createWithRevision(t *testing.T, s *appsv1alpha1.SidecarSet) string {
	t.Helper()
	createSidecarSet(t, s)
	var latest string
	waitStatus(t, s.Name, "a revision", func(st appsv1alpha1.SidecarSetStatus) bool {
		latest = st.LatestRevision
		return latest != ""
	})
	return latest
}

// createWithPods creates s and n pods in ns, waits until the status counts them all matched,
// updated and ready, and returns the pods' names.
func createWithPods(t *testing.T, s *appsv1alpha1.SidecarSet, ns string, n int32) []string {
	t.Helper()
	createSidecarSet(t, s)
	names := createPods(t, ns, int(n))
	waitStatus(t, s.Name, fmt.Sprintf("%d pods matched, updated and ready", n), func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == n && st.UpdatedPods == n && st.ReadyPods == n
	})
	return names
}

// createHotUpgrade creates the SidecarSet name hot-upgrading envoy, at envoy:1, with empty:1
// as the empty image, and n pods in ns, waits until all n are updated and ready, and returns the
// pods' names.
func createHotUpgrade(t *testing.T, name, ns string, n int32) []string {
	t.Helper()
	s := sidecarSetIn(name, ns, corev1.Container{Name: "envoy", Image: "envoy:1"})
	s.Spec.Containers[0].UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	createSidecarSet(t, s)
	names := createPods(t, ns, int(n))
	waitStatus(t, name, fmt.Sprintf("%d pods updated and ready", n), func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.UpdatedReadyPods == n
	})
	return names
}

func createSidecarSet(t *testing.T, s *appsv1alpha1.SidecarSet) {
	t.Helper()
	framework.CreateForTest(t, env.Client, s)
}

// webPod is an app=web pod with one app container, "main".
func webPod(name, ns string) *corev1.Pod {
	return builder.Pod(name, ns).Label("app", "web").Image("app:1").Obj()
}

func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func container(p *corev1.Pod, name string) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// waitReady waits until every named pod is Ready.
func waitReady(t *testing.T, ns string, names ...string) {
	t.Helper()
	framework.WaitPodsReady(t, env.Client, ns, framework.Medium, names...)
}

// updateSidecarSet changes the SidecarSet, retrying on conflicts.
func updateSidecarSet(t *testing.T, name string, change func(s *appsv1alpha1.SidecarSet)) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Name: name}, change)
}

func getSidecarSet(ctx context.Context, name string) (*appsv1alpha1.SidecarSet, error) {
	s := &appsv1alpha1.SidecarSet{}
	return s, env.Client.Get(ctx, client.ObjectKey{Name: name}, s)
}

// createPods creates n app=web pods named web-0... and waits for them to be ready.
func createPods(t *testing.T, ns string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("web-%d", i)
		framework.Create(t, env.Client, webPod(name, ns))
		names = append(names, name)
	}
	waitReady(t, ns, names...)
	return names
}

// sampleDuring calls look with the namespace's pods every 20 ms, from another goroutine, until
// the returned stop is called; stop waits for the last look and returns how many there were.
func sampleDuring(ns string, look func(pods map[string]*corev1.Pod)) (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	looks := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pods, err := listPods(context.Background(), ns)
			if err != nil {
				continue
			}
			looks++
			look(pods)
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		return looks
	}
}
