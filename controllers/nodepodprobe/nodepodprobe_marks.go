package nodepodprobe

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// Marks is what probe results ask of one pod: metadata to set, metadata to remove, and
// conditions to write.
type Marks struct {
	// Labels and Annotations map a key to its value, or to nil to remove it.
	Labels      map[string]*string
	Annotations map[string]*string
	Conditions  []corev1.PodCondition
}

// MarkerLookup returns the live PodProbeMarker named name in the pod's namespace, or nil when
// it is gone or being deleted.
type MarkerLookup func(name string) *appsv1alpha1.PodProbeMarker

// PlanMarks decides the marks of pod from its probe results. For each probe state:
//   - the markerPolicy whose state equals the result has its labels and annotations set, and
//     the policies of other states have theirs removed;
//   - a podConditionType gets a condition, True when the probe Succeeded and False otherwise,
//     carrying the probe's times and message; when two probes name the same condition type
//     the first one wins;
//   - a state that is still empty, or a probe whose marker is gone, changes nothing.
//
// Only what differs from the pod is returned, so empty Marks means no write.
func PlanMarks(pod *corev1.Pod, status appsv1alpha1.PodProbeStatus, lookup MarkerLookup) Marks {
	m := Marks{Labels: map[string]*string{}, Annotations: map[string]*string{}}
	condSeen := map[string]bool{}
	for _, st := range status.ProbeStates {
		if st.State == "" {
			continue
		}
		markerName, probeName, ok := appsv1alpha1.SplitContainerProbeName(st.Name)
		if !ok {
			continue
		}
		ppm := lookup(markerName)
		if ppm == nil {
			continue
		}
		var probe *appsv1alpha1.PodContainerProbe
		for i := range ppm.Spec.Probes {
			if ppm.Spec.Probes[i].Name == probeName {
				probe = &ppm.Spec.Probes[i]
				break
			}
		}
		if probe == nil {
			continue
		}
		if t := probe.PodConditionType; t != "" && !condSeen[t] {
			condSeen[t] = true
			c := corev1.PodCondition{
				Type:               corev1.PodConditionType(t),
				Status:             corev1.ConditionFalse,
				LastProbeTime:      st.LastProbeTime,
				LastTransitionTime: st.LastTransitionTime,
				Message:            st.Message,
			}
			if st.State == appsv1alpha1.ProbeSucceeded {
				c.Status = corev1.ConditionTrue
			}
			if cur := podcondition.Get(pod, c.Type); cur == nil || cur.Status != c.Status || cur.Message != c.Message {
				m.Conditions = append(m.Conditions, c)
			}
		}
		for _, policy := range probe.MarkerPolicy {
			if policy.State == st.State {
				continue
			}
			for k := range policy.Labels {
				if _, has := pod.Labels[k]; has {
					m.Labels[k] = nil
				}
			}
			for k := range policy.Annotations {
				if _, has := pod.Annotations[k]; has {
					m.Annotations[k] = nil
				}
			}
		}
		for _, policy := range probe.MarkerPolicy {
			if policy.State != st.State {
				continue
			}
			for k, v := range policy.Labels {
				setIfDiffers(m.Labels, pod.Labels, k, v)
			}
			for k, v := range policy.Annotations {
				setIfDiffers(m.Annotations, pod.Annotations, k, v)
			}
		}
	}
	sort.Slice(m.Conditions, func(i, j int) bool { return m.Conditions[i].Type < m.Conditions[j].Type })
	return m
}

func setIfDiffers(out map[string]*string, cur map[string]string, k, v string) {
	if old, has := cur[k]; has && old == v {
		delete(out, k)
		return
	}
	out[k] = &v
}

// Empty reports whether the marks change nothing.
func (m Marks) Empty() bool {
	return len(m.Labels) == 0 && len(m.Annotations) == 0 && len(m.Conditions) == 0
}

// PruneSpec returns the pod entries of spec whose pod is still live (alive reports it by
// namespace, name and UID), and whether any was dropped.
func PruneSpec(spec appsv1alpha1.NodePodProbeSpec, alive func(pp appsv1alpha1.PodProbe) bool) (appsv1alpha1.NodePodProbeSpec, bool) {
	next := appsv1alpha1.NodePodProbeSpec{}
	for _, pp := range spec.PodProbes {
		if alive(pp) {
			next.PodProbes = append(next.PodProbes, pp)
		}
	}
	return next, len(next.PodProbes) != len(spec.PodProbes)
}
