package sidecarset

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// nativeSet is a NotUpdate SidecarSet for the app=web pods of ns whose init containers are the
// native sidecar proxy (restartPolicy Always) at image and the plain init container setup.
func nativeSet(name, ns, image string) *appsv1alpha1.SidecarSet {
	s := sidecarSetIn(name, ns)
	s.Spec.UpdateStrategy.Type = appsv1alpha1.NotUpdateSidecarSetStrategyType
	s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{
		{Container: corev1.Container{Name: "setup", Image: "setup:1"}},
		{Container: corev1.Container{Name: "proxy", Image: image, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
	}
	return s
}

// initContainer is the pod's init container called name; the test fails on a missing one when
// it reads its fields.
func initContainer(p *corev1.Pod, name string) *corev1.Container {
	i := slices.IndexFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return &corev1.Container{Name: name + " (missing)"}
	}
	return &p.Spec.InitContainers[i]
}

// e2e: "sidecarSet inject initContainer with restartPolicy=Always" — the native sidecar goes
// among the init containers, after the pod's own and in order of name with the SidecarSet's
// other init containers, keeps restartPolicy Always and is marked injected; the pod records it,
// not the plain init container, as the SidecarSet's sidecar; the simulated kubelet runs it
// beside the app and the status counts the pod.
func TestNativeSidecarIsInjectedAmongTheInitContainers(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, nativeSet("native-mesh", ns, "proxy:1"))
	pod := builder.Pod("web", ns).Label("app", "web").Image("app:1").InitContainer("migrate", "migrate:1").Obj()
	framework.Create(t, env.Client, pod)

	got := getPod(t, ns, "web")
	if diff := cmp.Diff([]string{"migrate", "proxy", "setup"}, containerNames(got.Spec.InitContainers)); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"main"}, containerNames(got.Spec.Containers)); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	proxy := initContainer(got, "proxy")
	if proxy.RestartPolicy == nil || *proxy.RestartPolicy != corev1.ContainerRestartPolicyAlways || envValue(proxy, appsv1alpha1.SidecarEnvKey) != "true" {
		t.Errorf("proxy restartPolicy %v, env %v: want Always and IS_INJECTED=true", proxy.RestartPolicy, proxy.Env)
	}
	specs, err := inject.ReadUpgradeSpecs(got, appsv1alpha1.SidecarSetHashAnnotation)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"proxy"}, specs["native-mesh"].SidecarList); diff != "" {
		t.Errorf("the pod's sidecar list (-want +got):\n%s", diff)
	}
	waitReady(t, ns, "web")
	waitStatus(t, "native-mesh", "the pod matched, updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 1 && st.UpdatedPods == 1 && st.ReadyPods == 1 && st.UpdatedReadyPods == 1
	})
}

// A native sidecar cannot be updated in place, so a SidecarSet with one must be NotUpdate, as
// in 1.8 (whose default updateStrategy, RollingUpdate, is refused).
func TestNativeSidecarSetWithRollingUpdateIsRefused(t *testing.T) {
	s := nativeSet("native-rolling", "default", "proxy:1")
	s.Spec.UpdateStrategy.Type = ""
	framework.CreateRefused(t, env.Client, s, "spec.updateStrategy.type", "must be NotUpdate")
}

// e2e: "sidecarSet update init sidecar container, and don't upgrade" — a new native sidecar
// image changes the SidecarSet's hash (a native sidecar counts in it), so the pod is no longer
// counted updated, and it keeps its image: NotUpdate updates nothing.
func TestNativeSidecarImageChangeLeavesPodsAlone(t *testing.T) {
	ns := newNamespace(t)
	createWithPods(t, nativeSet("native-keep", ns, "proxy:1"), ns, 1)
	before, err := getSidecarSet(context.Background(), "native-keep")
	if err != nil {
		t.Fatal(err)
	}
	updateSidecarSet(t, "native-keep", func(s *appsv1alpha1.SidecarSet) { s.Spec.InitContainers[1].Image = "proxy:2" })
	waitStatus(t, "native-keep", "the pod no longer counted updated", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 1 && st.UpdatedPods == 0
	})
	after, err := getSidecarSet(context.Background(), "native-keep")
	if err != nil {
		t.Fatal(err)
	}
	if before.Annotations[appsv1alpha1.SidecarSetHashAnnotation] == after.Annotations[appsv1alpha1.SidecarSetHashAnnotation] {
		t.Error("a new native sidecar image left the SidecarSet's hash as it was")
	}
	framework.Consistently(t, 3*time.Second, "the pod keeps proxy:1", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		if img := initContainer(pods["web-0"], "proxy").Image; img != "proxy:1" {
			return fmt.Errorf("proxy image %s", img)
		}
		return nil
	})
}

// A plain init container does not count in the hash: changing its image leaves the
// SidecarSet's hash, and its pods updated, as 1.8 does.
func TestPlainInitContainerImageChangeKeepsTheHash(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("plain-init", ns)
	s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "setup", Image: "setup:1"}}}
	createWithPods(t, s, ns, 1)
	before, err := getSidecarSet(context.Background(), "plain-init")
	if err != nil {
		t.Fatal(err)
	}
	updateSidecarSet(t, "plain-init", func(s *appsv1alpha1.SidecarSet) { s.Spec.InitContainers[0].Image = "setup:2" })
	framework.Eventually(t, framework.Medium, "the change observed with the hash kept", func(ctx context.Context) error {
		cur, err := getSidecarSet(ctx, "plain-init")
		if err != nil {
			return err
		}
		return framework.Want(cur.Status.ObservedGeneration == cur.Generation && cur.Status.UpdatedPods == 1 &&
			cur.Annotations[appsv1alpha1.SidecarSetHashAnnotation] == before.Annotations[appsv1alpha1.SidecarSetHashAnnotation],
			"status "+toJSON(cur.Status))
	})
}

// As in 1.8, a native sidecar with HotUpgrade is admitted and injected as the pair proxy-1
// (serving) and proxy-2 (the empty image) among the init containers.
func TestNativeHotUpgradeSidecarIsInjectedAsAPair(t *testing.T) {
	ns := newNamespace(t)
	s := nativeSet("native-hot", ns, "proxy:1")
	s.Spec.InitContainers[1].UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	createSidecarSet(t, s)
	framework.Create(t, env.Client, webPod("web", ns))
	got := getPod(t, ns, "web")
	if diff := cmp.Diff([]string{"proxy-1", "proxy-2", "setup"}, containerNames(got.Spec.InitContainers)); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"proxy:1", "empty:1"}, []string{initContainer(got, "proxy-1").Image, initContainer(got, "proxy-2").Image}); diff != "" {
		t.Errorf("pair images (-want +got):\n%s", diff)
	}
	if w := inject.WorkingHotUpgrade(got)["proxy"]; w != "proxy-1" {
		t.Errorf("working container of proxy %q, want proxy-1", w)
	}
	waitReady(t, ns, "web")
}
