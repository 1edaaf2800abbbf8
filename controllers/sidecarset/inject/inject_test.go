package inject

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func sidecarSet(name string, containers ...appsv1alpha1.SidecarContainer) *appsv1alpha1.SidecarSet {
	return &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			appsv1alpha1.SidecarSetHashAnnotation:             name + "-hash",
			appsv1alpha1.SidecarSetHashWithoutImageAnnotation: name + "-noimage",
		}},
		Spec: appsv1alpha1.SidecarSetSpec{
			Selector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers: containers,
		},
		Status: appsv1alpha1.SidecarSetStatus{LatestRevision: name + "-rev"},
	}
}

func sidecar(name string, policy appsv1alpha1.PodInjectPolicyType) appsv1alpha1.SidecarContainer {
	return appsv1alpha1.SidecarContainer{
		Container:       corev1.Container{Name: name, Image: name + ":1"},
		PodInjectPolicy: policy,
		UpgradeStrategy: appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerColdUpgrade},
	}
}

func webPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", Labels: map[string]string{"app": "web", "main": "app"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: "app:1",
				Env:          []corev1.EnvVar{{Name: "TZ", Value: "UTC"}, {Name: "POD", Value: "p"}, {Name: "SECRET", Value: "s"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPathExpr: "$(POD)"}},
			}},
			InitContainers: []corev1.Container{{Name: "migrate", Image: "migrate:1"}},
			Volumes:        []corev1.Volume{{Name: "data"}},
		},
	}
}

func names(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func envOf(cs []corev1.Container, name string) map[string]string {
	for _, c := range cs {
		if c.Name == name {
			out := map[string]string{}
			for _, e := range c.Env {
				out[e.Name] = e.Value
				if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
					out[e.Name] = e.ValueFrom.FieldRef.FieldPath
				}
			}
			return out
		}
	}
	return nil
}

func TestInject(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	type tcase struct {
		sets  func() []*appsv1alpha1.SidecarSet
		pod   func(p *corev1.Pod)
		check func(t *testing.T, p *corev1.Pod)
	}
	tests := map[string]tcase{
		"a BeforeAppContainer sidecar goes in front of the app and an AfterAppContainer one at the end": {
			sets: func() []*appsv1alpha1.SidecarSet {
				return []*appsv1alpha1.SidecarSet{sidecarSet("log", sidecar("front", appsv1alpha1.BeforeAppContainerType), sidecar("back", appsv1alpha1.AfterAppContainerType))}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]string{"front", "app", "back"}, names(p.Spec.Containers)); diff != "" {
					t.Error(diff)
				}
			},
		},
		"init containers go after the pod's own, by name": {
			sets: func() []*appsv1alpha1.SidecarSet {
				s := sidecarSet("log")
				s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{sidecar("zz-init", ""), sidecar("aa-init", "")}
				return []*appsv1alpha1.SidecarSet{s}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]string{"migrate", "aa-init", "zz-init"}, names(p.Spec.InitContainers)); diff != "" {
					t.Error(diff)
				}
			},
		},
		"a native sidecar init container with HotUpgrade becomes the pair among the init containers, as in 1.8": {
			sets: func() []*appsv1alpha1.SidecarSet {
				c := sidecar("proxy", appsv1alpha1.AfterAppContainerType)
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
				c.UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
				s := sidecarSet("mesh")
				s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{c}
				return []*appsv1alpha1.SidecarSet{s}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]string{"migrate", "proxy-1", "proxy-2"}, names(p.Spec.InitContainers)); diff != "" {
					t.Error(diff)
				}
				if diff := cmp.Diff([]string{"proxy:1", "empty:1"}, []string{p.Spec.InitContainers[1].Image, p.Spec.InitContainers[2].Image}); diff != "" {
					t.Errorf("images (-want +got):\n%s", diff)
				}
				want := map[string]string{
					appsv1alpha1.SidecarSetVersionAnnotationPrefix + "proxy-1": "1", appsv1alpha1.SidecarSetVersionAltAnnotationPrefix + "proxy-1": "0",
					appsv1alpha1.SidecarSetVersionAnnotationPrefix + "proxy-2": "0", appsv1alpha1.SidecarSetVersionAltAnnotationPrefix + "proxy-2": "1",
					appsv1alpha1.SidecarSetWorkingHotUpgradeContainer: `{"proxy":"proxy-1"}`,
				}
				for k, v := range want {
					if p.Annotations[k] != v {
						t.Errorf("annotation %s = %q, want %q", k, p.Annotations[k], v)
					}
				}
			},
		},
		"an init container with HotUpgrade that is no native sidecar is injected as itself, as in 1.8": {
			sets: func() []*appsv1alpha1.SidecarSet {
				c := sidecar("setup", appsv1alpha1.AfterAppContainerType)
				c.UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
				s := sidecarSet("mesh")
				s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{c}
				return []*appsv1alpha1.SidecarSet{s}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]string{"migrate", "setup"}, names(p.Spec.InitContainers)); diff != "" {
					t.Error(diff)
				}
				if _, ok := p.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer]; ok {
					t.Error("a working hot-upgrade annotation for a container that is no pair")
				}
			},
		},
		"every injected container carries IS_INJECTED=true and the app container does not": {
			sets: func() []*appsv1alpha1.SidecarSet {
				return []*appsv1alpha1.SidecarSet{sidecarSet("log", sidecar("agent", appsv1alpha1.BeforeAppContainerType))}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if envOf(p.Spec.Containers, "agent")["IS_INJECTED"] != "true" {
					t.Errorf("agent env: %v", envOf(p.Spec.Containers, "agent"))
				}
				if _, ok := envOf(p.Spec.Containers, "app")["IS_INJECTED"]; ok {
					t.Error("app container got IS_INJECTED")
				}
			},
		},
		"a sidecar whose name the pod already has replaces that container instead of being added twice": {
			sets: func() []*appsv1alpha1.SidecarSet {
				return []*appsv1alpha1.SidecarSet{sidecarSet("log", sidecar("agent", appsv1alpha1.BeforeAppContainerType))}
			},
			pod: func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "agent", Image: "mine:0"})
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]string{"app", "agent"}, names(p.Spec.Containers)); diff != "" {
					t.Error(diff)
				}
				if p.Spec.Containers[1].Image != "agent:1" {
					t.Errorf("agent image %s, want the sidecar's agent:1", p.Spec.Containers[1].Image)
				}
			},
		},
		"a SidecarSet volume a sidecar mounts is added, and a pod volume of the same name is kept": {
			sets: func() []*appsv1alpha1.SidecarSet {
				c := sidecar("agent", appsv1alpha1.BeforeAppContainerType)
				c.VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}, {Name: "data", MountPath: "/d"}}
				s := sidecarSet("log", c)
				s.Spec.Volumes = []corev1.Volume{
					{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
					{Name: "unused"},
				}
				return []*appsv1alpha1.SidecarSet{s}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				want := []corev1.Volume{{Name: "data"}, {Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				if diff := cmp.Diff(want, p.Spec.Volumes); diff != "" {
					t.Error(diff)
				}
			},
		},
		"with shareVolumePolicy enabled a sidecar gets the app's mounts and the env their subPathExpr reads": {
			sets: func() []*appsv1alpha1.SidecarSet {
				c := sidecar("agent", appsv1alpha1.BeforeAppContainerType)
				c.ShareVolumePolicy.Type = appsv1alpha1.ShareVolumePolicyEnabled
				return []*appsv1alpha1.SidecarSet{sidecarSet("log", c)}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				agent := p.Spec.Containers[0]
				if diff := cmp.Diff([]corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPathExpr: "$(POD)"}}, agent.VolumeMounts); diff != "" {
					t.Error(diff)
				}
				if envOf(p.Spec.Containers, "agent")["POD"] != "p" {
					t.Errorf("agent env %v lacks POD", envOf(p.Spec.Containers, "agent"))
				}
			},
		},
		"with shareVolumePolicy disabled a sidecar gets none of the app's mounts": {
			sets: func() []*appsv1alpha1.SidecarSet {
				return []*appsv1alpha1.SidecarSet{sidecarSet("log", sidecar("agent", appsv1alpha1.BeforeAppContainerType))}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if len(p.Spec.Containers[0].VolumeMounts) != 0 {
					t.Errorf("agent mounts %v", p.Spec.Containers[0].VolumeMounts)
				}
			},
		},
		"transferEnv copies variables from a container named directly or through a label": {
			sets: func() []*appsv1alpha1.SidecarSet {
				c := sidecar("agent", appsv1alpha1.BeforeAppContainerType)
				c.TransferEnv = []appsv1alpha1.TransferEnvVar{
					{SourceContainerName: "app", EnvName: "TZ"},
					{SourceContainerNameFrom: &appsv1alpha1.SourceContainerNameSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['main']"}}, EnvNames: []string{"SECRET", "MISSING"}},
					{SourceContainerName: "nobody", EnvName: "TZ2"},
				}
				return []*appsv1alpha1.SidecarSet{sidecarSet("log", c)}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				want := map[string]string{"IS_INJECTED": "true", "TZ": "UTC", "SECRET": "s"}
				if diff := cmp.Diff(want, envOf(p.Spec.Containers, "agent")); diff != "" {
					t.Error(diff)
				}
			},
		},
		"imagePullSecrets are added once each": {
			sets: func() []*appsv1alpha1.SidecarSet {
				a := sidecarSet("a", sidecar("a", appsv1alpha1.BeforeAppContainerType))
				a.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "reg"}, {Name: "pod-has"}}
				b := sidecarSet("b", sidecar("b", appsv1alpha1.BeforeAppContainerType))
				b.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "reg"}}
				return []*appsv1alpha1.SidecarSet{b, a}
			},
			pod: func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pod-has"}} },
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "pod-has"}, {Name: "reg"}}, p.Spec.ImagePullSecrets); diff != "" {
					t.Error(diff)
				}
			},
		},
		"the pod records each SidecarSet's hashes, revision and sidecars, and the injected list by name": {
			sets: func() []*appsv1alpha1.SidecarSet {
				return []*appsv1alpha1.SidecarSet{sidecarSet("mesh", sidecar("proxy", appsv1alpha1.BeforeAppContainerType)), sidecarSet("log", sidecar("agent", appsv1alpha1.BeforeAppContainerType))}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				specs, err := ReadUpgradeSpecs(p, appsv1alpha1.SidecarSetHashAnnotation)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]UpgradeSpec{
					"log":  {UpdateTimestamp: now, Hash: "log-hash", SidecarSetName: "log", SidecarList: []string{"agent"}, ControllerRevision: "log-rev"},
					"mesh": {UpdateTimestamp: now, Hash: "mesh-hash", SidecarSetName: "mesh", SidecarList: []string{"proxy"}, ControllerRevision: "mesh-rev"},
				}
				if diff := cmp.Diff(want, specs); diff != "" {
					t.Error(diff)
				}
				if got := PodHash(p, "log", appsv1alpha1.SidecarSetHashWithoutImageAnnotation); got != "log-noimage" {
					t.Errorf("hash without image %q", got)
				}
				if got := p.Annotations[appsv1alpha1.SidecarSetListAnnotation]; got != "log,mesh" {
					t.Errorf("injected list %q", got)
				}
				// Sidecars of several SidecarSets keep the SidecarSets' name order.
				if diff := cmp.Diff([]string{"agent", "proxy", "app"}, names(p.Spec.Containers)); diff != "" {
					t.Error(diff)
				}
			},
		},
		"a pod that records another SidecarSet in the old name-to-hash form keeps it beside the new entries": {
			sets: func() []*appsv1alpha1.SidecarSet {
				return []*appsv1alpha1.SidecarSet{sidecarSet("mesh", sidecar("proxy", appsv1alpha1.AfterAppContainerType)), sidecarSet("log", sidecar("agent", appsv1alpha1.AfterAppContainerType))}
			},
			pod: func(p *corev1.Pod) {
				p.Annotations = map[string]string{appsv1alpha1.SidecarSetHashWithoutImageAnnotation: `{"old":"old-noimage"}`}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				want := `{"log":{"updateTimestamp":"2026-01-02T03:04:05Z","hash":"log-noimage","sidecarSetName":"log","sidecarList":["agent"]},` +
					`"mesh":{"updateTimestamp":"2026-01-02T03:04:05Z","hash":"mesh-noimage","sidecarSetName":"mesh","sidecarList":["proxy"]},` +
					`"old":{"updateTimestamp":null,"hash":"old-noimage","sidecarSetName":"old","sidecarList":null}}`
				testkit.Diff(t, "hash-without-image annotation", want, p.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation])
			},
		},
		"patchPodMetadata retains, overwrites and merges JSON by policy": {
			sets: func() []*appsv1alpha1.SidecarSet {
				s := sidecarSet("log", sidecar("agent", appsv1alpha1.BeforeAppContainerType))
				s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{
					{Annotations: map[string]string{"keep": "new", "add": "x"}, PatchPolicy: appsv1alpha1.SidecarSetRetainPatchPolicy},
					{Annotations: map[string]string{"over": "new"}, PatchPolicy: appsv1alpha1.SidecarSetOverwritePatchPolicy},
					{Annotations: map[string]string{"json": `{"b":2}`}, PatchPolicy: appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy},
				}
				return []*appsv1alpha1.SidecarSet{s}
			},
			pod: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"keep": "old", "over": "old", "json": `{"a":1}`}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				got := map[string]string{}
				for _, k := range []string{"keep", "add", "over", "json"} {
					got[k] = p.Annotations[k]
				}
				want := map[string]string{"keep": "old", "add": "x", "over": "new", "json": `{"a":1,"b":2}`}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Error(diff)
				}
			},
		},
		"a HotUpgrade sidecar becomes a serving -1 and an idle -2 with version annotations and env": {
			sets: func() []*appsv1alpha1.SidecarSet {
				c := sidecar("envoy", appsv1alpha1.BeforeAppContainerType)
				c.UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
				return []*appsv1alpha1.SidecarSet{sidecarSet("mesh", c)}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if diff := cmp.Diff([]string{"envoy-1", "envoy-2", "app"}, names(p.Spec.Containers)); diff != "" {
					t.Fatal(diff)
				}
				if p.Spec.Containers[0].Image != "envoy:1" || p.Spec.Containers[1].Image != "empty:1" {
					t.Errorf("images %s, %s", p.Spec.Containers[0].Image, p.Spec.Containers[1].Image)
				}
				var working map[string]string
				_ = json.Unmarshal([]byte(p.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer]), &working)
				if diff := cmp.Diff(map[string]string{"envoy": "envoy-1"}, working); diff != "" {
					t.Error(diff)
				}
				wantAnn := map[string]string{
					"version.sidecarset.kruise.io/envoy-1": "1", "versionalt.sidecarset.kruise.io/envoy-1": "0",
					"version.sidecarset.kruise.io/envoy-2": "0", "versionalt.sidecarset.kruise.io/envoy-2": "1",
				}
				for k, v := range wantAnn {
					if p.Annotations[k] != v {
						t.Errorf("annotation %s = %q, want %q", k, p.Annotations[k], v)
					}
				}
				env := envOf(p.Spec.Containers, "envoy-2")
				if env["SIDECARSET_VERSION"] != "metadata.annotations['version.sidecarset.kruise.io/envoy-2']" ||
					env["SIDECARSET_VERSION_ALT"] != "metadata.annotations['versionalt.sidecarset.kruise.io/envoy-2']" {
					t.Errorf("envoy-2 env %v", env)
				}
				specs, _ := ReadUpgradeSpecs(p, appsv1alpha1.SidecarSetHashAnnotation)
				if diff := cmp.Diff([]string{"envoy"}, specs["mesh"].SidecarList); diff != "" {
					t.Error(diff)
				}
			},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		p := webPod()
		if tt.pod != nil {
			tt.pod(p)
		}
		sets := tt.sets()
		before := make([]*appsv1alpha1.SidecarSet, len(sets))
		for i := range sets {
			before[i] = sets[i].DeepCopy()
		}
		changed, err := Inject(p, sets, now)
		if err != nil {
			t.Fatal(err)
		}
		if !changed {
			t.Fatal("Inject reported no change")
		}
		tt.check(t, p)
		testkit.Diff(t, "Inject changed the SidecarSets (they come from the cache)", before, sets)
	})
}

func TestMatches(t *testing.T) {
	type tcase struct {
		change   func(s *appsv1alpha1.SidecarSet)
		nsLabels labels.Set
		want     bool
	}
	tests := map[string]tcase{
		"a pod the selector matches in any namespace is selected": {change: func(*appsv1alpha1.SidecarSet) {}, want: true},
		"a pod the selector does not match is not selected": {change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Selector.MatchLabels["app"] = "db"
		}},
		"an empty selector selects nothing": {change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Selector = &metav1.LabelSelector{}
		}},
		"a pod of another namespace is not selected": {change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Namespace = "other"
		}},
		"a pod of spec.namespace is selected": {change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Namespace = "ns"
		}, want: true},
		"a pod whose namespace the namespaceSelector matches is selected": {change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}
		}, nsLabels: labels.Set{"mesh": "on"}, want: true},
		"a pod whose namespace the namespaceSelector does not match is not selected": {change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}
		}, nsLabels: labels.Set{"mesh": "off"}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s := sidecarSet("log")
		tt.change(s)
		if got := Matches(webPod(), s, tt.nsLabels, nil); got != tt.want {
			t.Errorf("Matches = %v, want %v", got, tt.want)
		}
	})
}
