package sidecarset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
)

const defaultRevisionHistoryLimit = 10

// setDefaults fills what a SidecarSet leaves out, as 1.8 does: a RollingUpdate strategy with
// maxUnavailable 1 and partition 0; containers go before the app containers and init containers
// after the pod's own; ColdUpgrade; volume sharing disabled; the core container and volume defaults;
// revisionHistoryLimit 10; patch policy Retain; an injection revision's policy Always. It then
// stamps the SidecarSet with its two revision hashes (kruise.io/sidecarset-hash and
// kruise.io/sidecarset-hash-without-image), which pods and the controller compare against.
func setDefaults(s *appsv1alpha1.SidecarSet) error {
	us := &s.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1alpha1.RollingUpdateSidecarSetStrategyType
	}
	if us.MaxUnavailable == nil {
		us.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	}
	if us.Partition == nil {
		us.Partition = ptr.To(intstr.FromInt32(0))
	}
	for i := range s.Spec.InitContainers {
		setSidecarDefaults(&s.Spec.InitContainers[i], appsv1alpha1.AfterAppContainerType)
	}
	for i := range s.Spec.Containers {
		setSidecarDefaults(&s.Spec.Containers[i], appsv1alpha1.BeforeAppContainerType)
	}
	for i := range s.Spec.Volumes {
		coredefaults.Volume(&s.Spec.Volumes[i])
	}
	if s.Spec.RevisionHistoryLimit == nil {
		s.Spec.RevisionHistoryLimit = ptr.To[int32](defaultRevisionHistoryLimit)
	}
	for i := range s.Spec.PatchPodMetadata {
		if s.Spec.PatchPodMetadata[i].PatchPolicy == "" {
			s.Spec.PatchPodMetadata[i].PatchPolicy = appsv1alpha1.SidecarSetRetainPatchPolicy
		}
	}
	if r := s.Spec.InjectionStrategy.Revision; r != nil && r.Policy == "" {
		r.Policy = appsv1alpha1.AlwaysSidecarSetInjectRevisionPolicy
	}

	hash, err := inject.Hash(s)
	if err != nil {
		return fmt.Errorf("hash sidecarset: %w", err)
	}
	withoutImage, err := inject.HashWithoutImage(s)
	if err != nil {
		return fmt.Errorf("hash sidecarset without images: %w", err)
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[appsv1alpha1.SidecarSetHashAnnotation] = hash
	s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation] = withoutImage
	return nil
}

func setSidecarDefaults(c *appsv1alpha1.SidecarContainer, policy appsv1alpha1.PodInjectPolicyType) {
	if c.PodInjectPolicy == "" {
		c.PodInjectPolicy = policy
	}
	if c.UpgradeStrategy.UpgradeType == "" {
		c.UpgradeStrategy.UpgradeType = appsv1alpha1.SidecarContainerColdUpgrade
	}
	if c.ShareVolumePolicy.Type == "" {
		c.ShareVolumePolicy.Type = appsv1alpha1.ShareVolumePolicyDisabled
	}
	for i := range c.TransferEnv {
		if f := c.TransferEnv[i].SourceContainerNameFrom; f != nil && f.FieldRef != nil && f.FieldRef.APIVersion == "" {
			f.FieldRef.APIVersion = "v1"
		}
	}
	// The core defaults the apiserver gives the container once injected, so that the hash a
	// pod records matches what the pod runs.
	coredefaults.Container(&c.Container, false)
}
