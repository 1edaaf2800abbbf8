package sidecarset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

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
