package cloneset

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

const (
	defaultReplicas                      int32 = 1
	defaultRevisionHistoryLimit          int32 = 10
	defaultTerminationGracePeriodSeconds int64 = 30
	defaultVolumeMode                    int32 = 0o644
)

// setDefaults fills what a CloneSet leaves out. withTemplate also applies the core pod defaults
// to the template and the volume claim templates, so that the template hashes the same as the
// pods the apiserver will store; the caller decides when (on create, and on an update that
// changes the template, unless TemplateNoDefaults is on).
func setDefaults(cs *appsv1alpha1.CloneSet, withTemplate bool) {
	spec := &cs.Spec
	if spec.Replicas == nil {
		spec.Replicas = ptr.To(defaultReplicas)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To(defaultRevisionHistoryLimit)
	}
	if withTemplate {
		setPodSpecDefaults(&spec.Template.Spec)
		for i := range spec.VolumeClaimTemplates {
			setPVCDefaults(&spec.VolumeClaimTemplates[i])
		}
	}

	us := &spec.UpdateStrategy
	switch us.Type {
	case "":
		us.Type = appsv1alpha1.RecreateCloneSetUpdateStrategyType
	case appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType:
		if us.InPlaceUpdateStrategy == nil {
			us.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{}
		}
	}
	if us.Partition == nil {
		us.Partition = ptr.To(intstr.FromInt32(0))
	}
	if us.MaxUnavailable == nil {
		us.MaxUnavailable = ptr.To(intstr.FromString(appsv1alpha1.DefaultCloneSetMaxUnavailable))
	}
	if us.MaxSurge == nil {
		us.MaxSurge = ptr.To(intstr.FromInt32(0))
	}
}

// setPodSpecDefaults applies the core/v1 defaults the apiserver gives a pod's spec. Pods made
// from the template get them anyway; putting them in the template keeps the template's
// revision hash stable and lets in-place updates compare like with like.
func setPodSpecDefaults(s *corev1.PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To(defaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range s.InitContainers {
		setContainerDefaults(&s.InitContainers[i], s.HostNetwork)
	}
	for i := range s.Containers {
		setContainerDefaults(&s.Containers[i], s.HostNetwork)
	}
	for i := range s.Volumes {
		setVolumeDefaults(&s.Volumes[i])
	}
}

func setContainerDefaults(c *corev1.Container, hostNetwork bool) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		// With the host's network the container port is the host port.
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setProbeDefaults(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				setHTTPGetDefaults(h.HTTPGet)
			}
		}
	}
}

// defaultPullPolicy is Always for an untagged or :latest image without a digest, else
// IfNotPresent, as for pods (an empty image, which cannot be parsed, gets IfNotPresent too).
func defaultPullPolicy(image string) corev1.PullPolicy {
	if image == "" || strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "" || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func setProbeDefaults(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	setHTTPGetDefaults(p.HTTPGet)
}

func setHTTPGetDefaults(g *corev1.HTTPGetAction) {
	if g == nil {
		return
	}
	if g.Path == "" {
		g.Path = "/"
	}
	if g.Scheme == "" {
		g.Scheme = corev1.URISchemeHTTP
	}
}

func setVolumeDefaults(v *corev1.Volume) {
	src := &v.VolumeSource
	if *src == (corev1.VolumeSource{}) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	mode := func(m **int32) {
		if *m == nil {
			*m = ptr.To(defaultVolumeMode)
		}
	}
	switch {
	case src.Secret != nil:
		mode(&src.Secret.DefaultMode)
	case src.ConfigMap != nil:
		mode(&src.ConfigMap.DefaultMode)
	case src.DownwardAPI != nil:
		mode(&src.DownwardAPI.DefaultMode)
		for i := range src.DownwardAPI.Items {
			if f := src.DownwardAPI.Items[i].FieldRef; f != nil && f.APIVersion == "" {
				f.APIVersion = "v1"
			}
		}
	case src.Projected != nil:
		mode(&src.Projected.DefaultMode)
	case src.HostPath != nil:
		if src.HostPath.Type == nil {
			src.HostPath.Type = ptr.To(corev1.HostPathUnset)
		}
	}
}

func setPVCDefaults(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
}
