package sidecarset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// validSidecarSet is a defaulted SidecarSet every rule accepts.
func validSidecarSet(name string) *appsv1alpha1.SidecarSet {
	s := &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1alpha1.SidecarSetSpec{
			Selector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers: []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: name + "-agent", Image: "agent:1"}}},
		},
	}
	if err := setDefaults(s); err != nil {
		panic(err)
	}
	return s
}

var allowAll = rules{patchMetadata: true}

func TestValidateSidecarSet(t *testing.T) {
	tests := []struct {
		name   string
		rules  *rules
		change func(s *appsv1alpha1.SidecarSet)
		// wantField is the field the one error names, "" for a valid SidecarSet; wantMsg is
		// part of its message.
		wantField, wantMsg string
	}{
		{name: "a defaulted SidecarSet is valid", change: func(*appsv1alpha1.SidecarSet) {}},
		{name: "a missing selector is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Selector = nil
		}, wantField: "spec.selector", wantMsg: "Required value"},
		{name: "an empty selector is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Selector = &metav1.LabelSelector{}
		}, wantField: "spec.selector", wantMsg: "must not be empty"},
		{name: "namespace with namespaceSelector is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Namespace = "ns"
			s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		}, wantField: "spec.namespaceSelector", wantMsg: "use one of the two"},
		{name: "no container at all is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers = nil
		}, wantField: "spec.containers", wantMsg: "at least one container"},
		{name: "a container without image is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].Image = ""
		}, wantField: "spec.containers[0].image", wantMsg: "Required value"},
		{name: "a container name used twice is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{s.Spec.Containers[0]}
		}, wantField: "spec.containers[0].name", wantMsg: "Duplicate value"},
		{name: "an unknown podInjectPolicy is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].PodInjectPolicy = "Middle"
		}, wantField: "spec.containers[0].podInjectPolicy", wantMsg: `supported values: "BeforeAppContainer", "AfterAppContainer"`},
		{name: "HotUpgrade without an empty image is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].UpgradeStrategy.UpgradeType = appsv1alpha1.SidecarContainerHotUpgrade
		}, wantField: "spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage", wantMsg: "Required value"},
		{name: "HotUpgrade with the sidecar's own image as empty image is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "agent:1"}
		}, wantField: "spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage", wantMsg: "must differ"},
		{name: "a mount of a volume the SidecarSet lacks is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}}
		}, wantField: "spec.containers[0].volumeMounts[0].name", wantMsg: "Not found"},
		{name: "a mount of a pod volume is allowed when volumes are shared", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}}
			s.Spec.Containers[0].ShareVolumePolicy.Type = appsv1alpha1.ShareVolumePolicyEnabled
		}},
		{name: "a transferEnv without source is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].TransferEnv = []appsv1alpha1.TransferEnvVar{{EnvName: "TZ"}}
		}, wantField: "spec.containers[0].transferEnv[0].sourceContainerName", wantMsg: "sourceContainerNameFrom"},
		{name: "a transferEnv reading the source from a pod spec field is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].TransferEnv = []appsv1alpha1.TransferEnvVar{{EnvName: "TZ", SourceContainerNameFrom: &appsv1alpha1.SourceContainerNameSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}}}
		}, wantField: "spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.fieldPath", wantMsg: "metadata.labels['<key>']"},
		{name: "a transferEnv from a label is allowed", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].TransferEnv = []appsv1alpha1.TransferEnvVar{{EnvName: "TZ", SourceContainerNameFrom: &appsv1alpha1.SourceContainerNameSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['main']"}}}}
		}},
		{name: "partition with an update selector is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
			s.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(2))
		}, wantField: "spec.updateStrategy.partition", wantMsg: "use one of the two"},
		{name: "a maxUnavailable that is no number or percentage is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("half"))
		}, wantField: "spec.updateStrategy.maxUnavailable", wantMsg: "percentage"},
		{name: "a native sidecar init container with RollingUpdate is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "proxy", Image: "p:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
				PodInjectPolicy: appsv1alpha1.AfterAppContainerType, ShareVolumePolicy: appsv1alpha1.ShareVolumePolicy{Type: appsv1alpha1.ShareVolumePolicyDisabled},
				UpgradeStrategy: appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerColdUpgrade}}}
		}, wantField: "spec.updateStrategy.type", wantMsg: "must be NotUpdate"},
		{name: "a native sidecar init container with HotUpgrade and NotUpdate is allowed, as in 1.8", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.UpdateStrategy.Type = appsv1alpha1.NotUpdateSidecarSetStrategyType
			s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "proxy", Image: "p:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
				PodInjectPolicy: appsv1alpha1.AfterAppContainerType, ShareVolumePolicy: appsv1alpha1.ShareVolumePolicy{Type: appsv1alpha1.ShareVolumePolicyDisabled},
				UpgradeStrategy: appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}}}
		}},
		{name: "an injection revision without name or version is refused", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.InjectionStrategy.Revision = &appsv1alpha1.SidecarSetInjectRevision{Policy: appsv1alpha1.AlwaysSidecarSetInjectRevisionPolicy}
		}, wantField: "spec.injectionStrategy.revision.revisionName", wantMsg: "customVersion"},
		{name: "patchPodMetadata without its gate is refused", rules: &rules{}, change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"a": "b"}, PatchPolicy: appsv1alpha1.SidecarSetRetainPatchPolicy}}
		}, wantField: "spec.patchPodMetadata", wantMsg: "SidecarSetPatchPodMetadataDefaultsAllowed"},
		{name: "patchPodMetadata with its gate is allowed", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"a": "b"}, PatchPolicy: appsv1alpha1.SidecarSetRetainPatchPolicy}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSidecarSet("log")
			tt.change(s)
			r := allowAll
			if tt.rules != nil {
				r = *tt.rules
			}
			webhooktest.AssertOneError(t, validateSidecarSet(s, nil, nil, r), tt.wantField, tt.wantMsg)
		})
	}
}

func TestValidateSidecarSetUpdate(t *testing.T) {
	old := validSidecarSet("log")
	s := old.DeepCopy()
	s.Spec.Containers[0].UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	webhooktest.AssertOneError(t, validateSidecarSet(s, old, nil, allowAll), "spec.containers[0].upgradeStrategy.upgradeType", "cannot change from ColdUpgrade")
}

func TestValidateSidecarSetConflicts(t *testing.T) {
	other := func(change func(o *appsv1alpha1.SidecarSet)) *appsv1alpha1.SidecarSet {
		o := validSidecarSet("mesh")
		o.Spec.Containers[0].Name = "log-agent"
		change(o)
		return o
	}
	nsLabels := func(name string) (labels.Set, bool) {
		return map[string]labels.Set{"prod": {"env": "prod"}, "dev": {"env": "dev"}}[name], name == "prod" || name == "dev"
	}
	tests := []struct {
		name               string
		change             func(s *appsv1alpha1.SidecarSet)
		other              *appsv1alpha1.SidecarSet
		wantField, wantMsg string
	}{
		{name: "a container name another SidecarSet injects into the same pods is refused naming both",
			change: func(*appsv1alpha1.SidecarSet) {}, other: other(func(*appsv1alpha1.SidecarSet) {}),
			wantField: "spec.containers[0].name", wantMsg: `SidecarSet "log" and SidecarSet "mesh" both inject a container named "log-agent"`},
		{name: "an init container name another SidecarSet injects is refused",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.InitContainers = []appsv1alpha1.SidecarContainer{s.Spec.Containers[0]}
				s.Spec.InitContainers[0].Name = "init"
			},
			other:     other(func(o *appsv1alpha1.SidecarSet) { o.Spec.Containers[0].Name = "init" }),
			wantField: "spec.initContainers[0].name", wantMsg: `SidecarSet "mesh"`},
		{name: "the same name is allowed when matchLabels exclude each other",
			change: func(*appsv1alpha1.SidecarSet) {},
			other:  other(func(o *appsv1alpha1.SidecarSet) { o.Spec.Selector.MatchLabels["app"] = "db" })},
		{name: "the same name is allowed when an expression excludes the other's labels",
			change: func(*appsv1alpha1.SidecarSet) {},
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web"}}}}
			})},
		{name: "the same name is allowed in other namespaces",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.Namespace = "prod" },
			other:  other(func(o *appsv1alpha1.SidecarSet) { o.Spec.Namespace = "dev" })},
		{name: "the same name is allowed when the other's namespaceSelector skips the namespace",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.Namespace = "prod" },
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}
			})},
		{name: "the same name is refused when the other's namespaceSelector selects the namespace",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.Namespace = "prod" },
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			}),
			wantField: "spec.containers[0].name", wantMsg: `SidecarSet "mesh"`},
		{name: "the same name is allowed when the two namespaceSelectors cannot both match, as in 1.8",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			},
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}
			})},
		{name: "the same name is refused when the two namespaceSelectors may both match",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			},
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
			}),
			wantField: "spec.containers[0].name", wantMsg: `SidecarSet "mesh"`},
		{name: "the same name is allowed when the other is bound to a namespace that does not exist",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			},
			other: other(func(o *appsv1alpha1.SidecarSet) { o.Spec.Namespace = "gone" })},
		{name: "the same name is allowed in a namespace that does not exist when the other selects by label",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.Namespace = "gone" },
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			})},
		{name: "a volume of the same name and definition is allowed",
			change: func(s *appsv1alpha1.SidecarSet) { s.Spec.Volumes = []corev1.Volume{{Name: "logs"}} },
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.Containers[0].Name = "mesh-agent"
				o.Spec.Volumes = []corev1.Volume{{Name: "logs"}}
			})},
		{name: "a volume of the same name and another definition is refused",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.Containers[0].Name = "mesh-agent"
				o.Spec.Volumes = []corev1.Volume{{Name: "logs"}}
			}),
			wantField: "spec.volumes[0].name", wantMsg: `differently from SidecarSet "mesh"`},
		{name: "an annotation both overwrite is refused",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"k": "1"}, PatchPolicy: appsv1alpha1.SidecarSetOverwritePatchPolicy}}
			},
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.Containers[0].Name = "mesh-agent"
				o.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"k": "2"}, PatchPolicy: appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy}}
			}),
			wantField: "spec.patchPodMetadata[0].annotations[k]", wantMsg: "one overwrites it"},
		{name: "an annotation both merge is allowed",
			change: func(s *appsv1alpha1.SidecarSet) {
				s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"k": `{"a":1}`}, PatchPolicy: appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy}}
			},
			other: other(func(o *appsv1alpha1.SidecarSet) {
				o.Spec.Containers[0].Name = "mesh-agent"
				o.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"k": `{"b":1}`}, PatchPolicy: appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy}}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSidecarSet("log")
			tt.change(s)
			r := rules{patchMetadata: true, namespaceLabels: nsLabels}
			// The SidecarSet itself is in the list too, as it is on update; it never conflicts
			// with itself.
			webhooktest.AssertOneError(t, validateSidecarSet(s, nil, []*appsv1alpha1.SidecarSet{s, tt.other}, r), tt.wantField, tt.wantMsg)
		})
	}
}

func bareSidecarSet() *appsv1alpha1.SidecarSet {
	return &appsv1alpha1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: "log"},
		Spec: appsv1alpha1.SidecarSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers:     []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "agent", Image: "agent:1"}}},
			InitContainers: []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "setup", Image: "setup:1"}}},
		},
	}
}

func TestSetDefaults(t *testing.T) {
	s := bareSidecarSet()
	s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"a": "b"}}}
	s.Spec.InjectionStrategy.Revision = &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1")}
	if err := setDefaults(s); err != nil {
		t.Fatal(err)
	}
	want := appsv1alpha1.SidecarSetUpdateStrategy{
		Type:           appsv1alpha1.RollingUpdateSidecarSetStrategyType,
		MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		Partition:      ptr.To(intstr.FromInt32(0)),
	}
	if diff := cmp.Diff(want, s.Spec.UpdateStrategy); diff != "" {
		t.Errorf("update strategy (-want +got):\n%s", diff)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"a container goes before the app containers", s.Spec.Containers[0].PodInjectPolicy, appsv1alpha1.BeforeAppContainerType},
		{"an init container goes after the pod's own", s.Spec.InitContainers[0].PodInjectPolicy, appsv1alpha1.AfterAppContainerType},
		{"a sidecar is cold upgraded", s.Spec.Containers[0].UpgradeStrategy.UpgradeType, appsv1alpha1.SidecarContainerColdUpgrade},
		{"volume sharing is disabled", s.Spec.Containers[0].ShareVolumePolicy.Type, appsv1alpha1.ShareVolumePolicyDisabled},
		{"a container gets the core defaults", s.Spec.Containers[0].TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		{"a tagged image is pulled if not present", s.Spec.Containers[0].ImagePullPolicy, corev1.PullIfNotPresent},
		{"ten revisions are kept", *s.Spec.RevisionHistoryLimit, int32(10)},
		{"a metadata patch retains the pod's value", s.Spec.PatchPodMetadata[0].PatchPolicy, appsv1alpha1.SidecarSetRetainPatchPolicy},
		{"an injection revision is always injected", s.Spec.InjectionStrategy.Revision.Policy, appsv1alpha1.AlwaysSidecarSetInjectRevisionPolicy},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Annotations[appsv1alpha1.SidecarSetHashAnnotation] == "" || s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation] == "" {
		t.Errorf("the hashes are stamped on the SidecarSet: got annotations %v", s.Annotations)
	}
}

func TestSetDefaultsHashes(t *testing.T) {
	hashes := func(change func(s *appsv1alpha1.SidecarSet)) (string, string) {
		s := bareSidecarSet()
		change(s)
		if err := setDefaults(s); err != nil {
			t.Fatal(err)
		}
		return s.Annotations[appsv1alpha1.SidecarSetHashAnnotation], s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation]
	}
	baseHash, baseNoImage := hashes(func(*appsv1alpha1.SidecarSet) {})
	tests := []struct {
		name                     string
		change                   func(s *appsv1alpha1.SidecarSet)
		wantHash, wantNoImageChg bool
	}{
		{name: "an image change moves the hash but not the hash without image", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].Image = "agent:2"
		}, wantHash: true},
		{name: "a command change moves both hashes", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Containers[0].Command = []string{"run"}
		}, wantHash: true, wantNoImageChg: true},
		{name: "a plain init container does not count in the hash", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.InitContainers[0].Image = "setup:2"
		}},
		{name: "a selector change does not count in the hash", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.Selector.MatchLabels["tier"] = "front"
		}},
		{name: "a native sidecar init container counts in the hash", change: func(s *appsv1alpha1.SidecarSet) {
			s.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}, wantHash: true, wantNoImageChg: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, n := hashes(tt.change)
			if (h != baseHash) != tt.wantHash {
				t.Errorf("hash changed = %v, want %v", h != baseHash, tt.wantHash)
			}
			if (n != baseNoImage) != tt.wantNoImageChg {
				t.Errorf("hash without image changed = %v, want %v", n != baseNoImage, tt.wantNoImageChg)
			}
		})
	}
}
