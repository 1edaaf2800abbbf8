package podprobemarker

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// Probed reports whether a pod is one a marker's probes run on: active, scheduled and
// Initialized, as 1.8 requires, so that the containers exist when the node agent looks.
func Probed(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	c := podcondition.Get(pod, corev1.PodInitialized)
	return c != nil && c.Status == corev1.ConditionTrue
}

// podProbes returns the probes of ppm for pod, ports named in the container resolved to
// numbers. A probe whose named port the container does not declare is left out, with the
// reason in skipped.
func podProbes(ppm *appsv1alpha1.PodProbeMarker, pod *corev1.Pod) (probes []appsv1alpha1.ContainerProbe, skipped []string) {
	for _, p := range ppm.Spec.Probes {
		spec := *p.Probe.DeepCopy()
		if err := resolvePorts(&spec, pod, p.ContainerName); err != nil {
			skipped = append(skipped, fmt.Sprintf("probe %s: %v", p.Name, err))
			continue
		}
		probes = append(probes, appsv1alpha1.ContainerProbe{Name: appsv1alpha1.ContainerProbeName(ppm.Name, p.Name), ContainerName: p.ContainerName, Probe: spec})
	}
	return probes, skipped
}

// resolvePorts turns a port name of a tcpSocket or httpGet probe into the container's number:
// the node agent has only the NodePodProbe, not the pod spec.
func resolvePorts(spec *appsv1alpha1.ContainerProbeSpec, pod *corev1.Pod, container string) error {
	var port *intstr.IntOrString
	switch {
	case spec.TCPSocket != nil:
		port = &spec.TCPSocket.Port
	case spec.HTTPGet != nil:
		port = &spec.HTTPGet.Port
	default:
		return nil
	}
	if port.Type == intstr.Int {
		return nil
	}
	for _, c := range pod.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, cp := range c.Ports {
			if cp.Name == port.StrVal {
				*port = intstr.FromInt32(cp.ContainerPort)
				return nil
			}
		}
		return fmt.Errorf("container %s has no port named %q", container, port.StrVal)
	}
	return fmt.Errorf("pod has no container %s", container)
}

// PlanNodePodProbe returns the spec of a NodePodProbe holding ppm's probes for pods (the
// matching pods on that node), from the current spec cur, and whether it differs from cur.
// Pods are matched by namespace, name and UID; a pod entry gets the pod IP when it has none.
// The marker's probes of each pod are replaced as a set, so a probe taken out of the marker
// leaves the node too, and a pod of the marker's namespace that is not among pods (its labels
// no longer match) loses the marker's probes. Probes of other markers are kept as they are.
func PlanNodePodProbe(cur appsv1alpha1.NodePodProbeSpec, ppm *appsv1alpha1.PodProbeMarker, pods []*corev1.Pod) (appsv1alpha1.NodePodProbeSpec, bool, []string) {
	next := appsv1alpha1.NodePodProbeSpec{}
	for _, pp := range cur.PodProbes {
		pp = *pp.DeepCopy()
		if pp.Namespace == ppm.Namespace && !matches(pods, pp) {
			pp.Probes = withoutMarker(pp.Probes, ppm.Name)
			if len(pp.Probes) == 0 {
				continue
			}
		}
		next.PodProbes = append(next.PodProbes, pp)
	}
	var skipped []string
	for _, pod := range pods {
		probes, sk := podProbes(ppm, pod)
		skipped = append(skipped, sk...)
		i := indexOf(next.PodProbes, pod)
		if i < 0 {
			if len(probes) == 0 {
				continue
			}
			next.PodProbes = append(next.PodProbes, appsv1alpha1.PodProbe{
				Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID), IP: pod.Status.PodIP,
			})
			i = len(next.PodProbes) - 1
		}
		pp := &next.PodProbes[i]
		if pp.IP == "" {
			pp.IP = pod.Status.PodIP
		}
		pp.Probes = append(withoutMarker(pp.Probes, ppm.Name), probes...)
		sort.SliceStable(pp.Probes, func(a, b int) bool { return pp.Probes[a].Name < pp.Probes[b].Name })
	}
	return next, !apiequality.Semantic.DeepEqual(cur, next), skipped
}

// RemoveMarker returns spec without the probes of the marker named marker in namespace ns, pod
// entries left with no probe dropped, and whether anything was removed.
func RemoveMarker(cur appsv1alpha1.NodePodProbeSpec, ns, marker string) (appsv1alpha1.NodePodProbeSpec, bool) {
	next := appsv1alpha1.NodePodProbeSpec{}
	changed := false
	for _, pp := range cur.PodProbes {
		pp = *pp.DeepCopy()
		if pp.Namespace == ns {
			kept := withoutMarker(pp.Probes, marker)
			changed = changed || len(kept) != len(pp.Probes)
			pp.Probes = kept
		}
		if len(pp.Probes) == 0 {
			changed = true
			continue
		}
		next.PodProbes = append(next.PodProbes, pp)
	}
	return next, changed
}

func withoutMarker(probes []appsv1alpha1.ContainerProbe, marker string) []appsv1alpha1.ContainerProbe {
	var out []appsv1alpha1.ContainerProbe
	for _, p := range probes {
		if m, _, ok := appsv1alpha1.SplitContainerProbeName(p.Name); ok && m == marker {
			continue
		}
		out = append(out, p)
	}
	return out
}

func matches(pods []*corev1.Pod, pp appsv1alpha1.PodProbe) bool {
	for _, pod := range pods {
		if pod.Namespace == pp.Namespace && pod.Name == pp.Name && string(pod.UID) == pp.UID {
			return true
		}
	}
	return false
}

func indexOf(pps []appsv1alpha1.PodProbe, pod *corev1.Pod) int {
	for i := range pps {
		if pps[i].Namespace == pod.Namespace && pps[i].Name == pod.Name && pps[i].UID == string(pod.UID) {
			return i
		}
	}
	return -1
}
