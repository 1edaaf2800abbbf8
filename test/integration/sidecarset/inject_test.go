package sidecarset

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// e2e: "pods don't have matched sidecarSet"
func TestPodsDontHaveMatchedSidecarSet(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("nomatch-log", ns))
	pod := builder.Pod("db", ns).Label("app", "db").Obj()
	framework.Create(t, env.Client, pod)
	got := getPod(t, ns, "db")
	if diff := cmp.Diff([]string{"main"}, containerNames(got.Spec.Containers)); diff != "" {
		t.Errorf("a pod the selector does not match got sidecars (-want +got):\n%s", diff)
	}
	if _, ok := got.Annotations[appsv1alpha1.SidecarSetHashAnnotation]; ok {
		t.Errorf("a pod the selector does not match records a SidecarSet hash")
	}
}

// e2e: "sidecarSet inject pod sidecar container"
func TestSidecarSetInjectPodSidecarContainer(t *testing.T) {
	ns := newNamespace(t)
	s := sidecarSetIn("inject-log", ns, corev1.Container{Name: "agent", Image: "agent:1"}, corev1.Container{Name: "tail", Image: "tail:1"})
	s.Spec.Containers[1].PodInjectPolicy = appsv1alpha1.AfterAppContainerType
	s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "setup", Image: "setup:1"}}}
	s.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	createSidecarSet(t, s)
	framework.Create(t, env.Client, webPod("web", ns))

	got := getPod(t, ns, "web")
	if diff := cmp.Diff([]string{"agent", "main", "tail"}, containerNames(got.Spec.Containers)); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"setup"}, containerNames(got.Spec.InitContainers)); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if envValue(container(got, "agent"), appsv1alpha1.SidecarEnvKey) != "true" || envValue(container(got, "main"), appsv1alpha1.SidecarEnvKey) != "" {
		t.Errorf("IS_INJECTED must mark the sidecars only")
	}
	if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "registry"}}, got.Spec.ImagePullSecrets); diff != "" {
		t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
	}
	cur, err := getSidecarSet(context.Background(), "inject-log")
	if err != nil {
		t.Fatal(err)
	}
	if h := inject.PodHash(got, "inject-log", appsv1alpha1.SidecarSetHashAnnotation); h == "" || h != cur.Annotations[appsv1alpha1.SidecarSetHashAnnotation] {
		t.Errorf("pod hash %q, SidecarSet hash %q", h, cur.Annotations[appsv1alpha1.SidecarSetHashAnnotation])
	}
	if h := inject.PodHash(got, "inject-log", appsv1alpha1.SidecarSetHashWithoutImageAnnotation); h == "" {
		t.Error("pod has no hash without image")
	}
	if got.Annotations[appsv1alpha1.SidecarSetListAnnotation] != "inject-log" {
		t.Errorf("injected list %q", got.Annotations[appsv1alpha1.SidecarSetListAnnotation])
	}
	waitReady(t, ns, "web")
	framework.Eventually(t, framework.Medium, "status counts the pod", func(ctx context.Context) error {
		s, err := getSidecarSet(ctx, "inject-log")
		if err != nil {
			return err
		}
		st := s.Status
		return framework.Want(st.MatchedPods == 1 && st.UpdatedPods == 1 && st.ReadyPods == 1 && st.UpdatedReadyPods == 1 &&
			st.ObservedGeneration == s.Generation && st.LatestRevision != "", "status "+toJSON(st))
	})
}

// e2e: "sidecarSet inject pod sidecar container volumeMounts" (shareVolumePolicy)
func TestSidecarSetInjectPodSidecarContainerVolumeMounts(t *testing.T) {
	ns := newNamespace(t)
	s := sidecarSetIn("mounts-log", ns, corev1.Container{Name: "agent", Image: "agent:1",
		VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}}})
	s.Spec.Containers[0].ShareVolumePolicy.Type = appsv1alpha1.ShareVolumePolicyEnabled
	s.Spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	createSidecarSet(t, s)
	pod := webPod("web", ns)
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	framework.Create(t, env.Client, pod)

	got := getPod(t, ns, "web")
	var mounts []string
	for _, m := range container(got, "agent").VolumeMounts {
		if !strings.HasPrefix(m.MountPath, "/var/run/secrets") {
			mounts = append(mounts, m.Name+":"+m.MountPath)
		}
	}
	if diff := cmp.Diff([]string{"logs:/logs", "data:/data"}, mounts); diff != "" {
		t.Errorf("sidecar mounts (-want +got):\n%s", diff)
	}
	var vols []string
	for _, v := range got.Spec.Volumes {
		if !strings.HasPrefix(v.Name, "kube-api-access") {
			vols = append(vols, v.Name)
		}
	}
	if diff := cmp.Diff([]string{"data", "logs"}, vols); diff != "" {
		t.Errorf("pod volumes (-want +got):\n%s", diff)
	}
}

// e2e: "sidecarSet inject pod sidecar container transfer Envs" and "... with downward API by
// metadata.labels"
func TestSidecarSetInjectPodSidecarContainerTransferEnvs(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("env-log", ns)
	s.Spec.Containers[0].TransferEnv = []appsv1alpha1.TransferEnvVar{
		{SourceContainerName: "main", EnvName: "TZ"},
		{SourceContainerNameFrom: &appsv1alpha1.SourceContainerNameSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['main']"}}, EnvNames: []string{"REGION"}},
	}
	createSidecarSet(t, s)
	pod := webPod("web", ns)
	pod.Labels["main"] = "main"
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TZ", Value: "UTC"}, {Name: "REGION", Value: "eu"}, {Name: "OTHER", Value: "x"}}
	framework.Create(t, env.Client, pod)
	agent := container(getPod(t, ns, "web"), "agent")
	got := map[string]string{}
	for _, e := range agent.Env {
		got[e.Name] = e.Value
	}
	if diff := cmp.Diff(map[string]string{"IS_INJECTED": "true", "TZ": "UTC", "REGION": "eu"}, got); diff != "" {
		t.Errorf("sidecar env (-want +got):\n%s", diff)
	}
}

// e2e: "sidecarSet patch pod metadata"
func TestSidecarSetPatchPodMetadata(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("meta-log", ns)
	s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{
		{Annotations: map[string]string{"example.com/keep": "sidecar"}, PatchPolicy: appsv1alpha1.SidecarSetRetainPatchPolicy},
		{Annotations: map[string]string{"example.com/json": `{"log":"on"}`}, PatchPolicy: appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy},
	}
	createSidecarSet(t, s)
	pod := webPod("web", ns)
	pod.Annotations = map[string]string{"example.com/keep": "mine", "example.com/json": `{"app":"on"}`}
	framework.Create(t, env.Client, pod)
	got := getPod(t, ns, "web").Annotations
	if got["example.com/keep"] != "mine" || got["example.com/json"] != `{"app":"on","log":"on"}` {
		t.Errorf("annotations keep=%q json=%q; want mine and the merged object", got["example.com/keep"], got["example.com/json"])
	}
}

// A pod that already has a container of a sidecar's name is not injected twice.
func TestSidecarSetDoesNotInjectAContainerNameTwice(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("twice-log", ns))
	pod := webPod("web", ns)
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "agent", Image: "agent:0"})
	framework.Create(t, env.Client, pod)
	if diff := cmp.Diff([]string{"main", "agent"}, containerNames(getPod(t, ns, "web").Spec.Containers)); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
}

// e2e: "sidecarSet inject pod hot upgrade sidecar container"
func TestSidecarSetInjectPodHotUpgradeSidecarContainer(t *testing.T) {
	ns := newNamespace(t)
	s := sidecarSetIn("hot-mesh", ns, corev1.Container{Name: "envoy", Image: "envoy:1"})
	s.Spec.Containers[0].UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	s.Spec.UpdateStrategy.Type = appsv1alpha1.NotUpdateSidecarSetStrategyType
	createSidecarSet(t, s)
	framework.Create(t, env.Client, webPod("web", ns))
	got := getPod(t, ns, "web")
	if diff := cmp.Diff([]string{"envoy-1", "envoy-2", "main"}, containerNames(got.Spec.Containers)); diff != "" {
		t.Fatalf("containers (-want +got):\n%s", diff)
	}
	if container(got, "envoy-1").Image != "envoy:1" || container(got, "envoy-2").Image != "empty:1" {
		t.Errorf("images %s and %s; want envoy:1 and empty:1", container(got, "envoy-1").Image, container(got, "envoy-2").Image)
	}
	if got.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer] != `{"envoy":"envoy-1"}` {
		t.Errorf("working container annotation %q", got.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer])
	}
	if got.Annotations["version.sidecarset.kruise.io/envoy-1"] != "1" || got.Annotations["version.sidecarset.kruise.io/envoy-2"] != "0" {
		t.Errorf("version annotations %v", got.Annotations)
	}
}

// The SidecarSet validating webhook refuses a container name another SidecarSet selecting the
// same pods injects, naming both SidecarSets; and the defaulting webhook stamps the hashes.
func TestSidecarSetWebhooks(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("first-log", ns))
	cur, err := getSidecarSet(context.Background(), "first-log")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Annotations[appsv1alpha1.SidecarSetHashAnnotation] == "" || cur.Spec.UpdateStrategy.MaxUnavailable.String() != "1" ||
		cur.Spec.Containers[0].PodInjectPolicy != appsv1alpha1.BeforeAppContainerType {
		t.Errorf("defaults not set: annotations %v, strategy %+v", cur.Annotations, cur.Spec.UpdateStrategy)
	}
	err = env.Client.Create(context.Background(), sidecarSetIn("second-log", ns, corev1.Container{Name: "agent", Image: "agent:2"}))
	if err == nil || !strings.Contains(err.Error(), `vsidecarset.kb.io`) || !strings.Contains(err.Error(), `"second-log"`) ||
		!strings.Contains(err.Error(), `"first-log"`) || !strings.Contains(err.Error(), "spec.containers[0].name") {
		t.Errorf("create: %v; want a denial by vsidecarset.kb.io naming both SidecarSets and spec.containers[0].name", err)
	}
	bad := sidecarSetIn("bad-log", ns, corev1.Container{Name: "agent2", Image: "agent:1"})
	bad.Spec.Containers[0].UpgradeStrategy.UpgradeType = appsv1alpha1.SidecarContainerHotUpgrade
	err = env.Client.Create(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage") {
		t.Errorf("create: %v; want a denial naming spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage", err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
