package launchpriority

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// CompletedKey is the pod annotation, "true", set once every container's barrier key exists.
const CompletedKey = "apps.kruise.io/container-launch-priority-completed"

// BarrierName is the name of a pod's barrier ConfigMap.
func BarrierName(pod string) string { return pod + "-barrier" }

// Key is the barrier ConfigMap key of a priority.
func Key(priority int) string { return fmt.Sprintf("p_%d", priority) }

// priorities returns each container's launch priority and whether the pod asks for ordered
// launch at all: with the Ordered annotation the first container ranks highest (0, -1, -2,
// ...); otherwise KRUISE_CONTAINER_PRIORITY ranks them (unset is 0), and only when the values
// differ. A pod of one container needs no order.
func priorities(pod *corev1.Pod) ([]int, bool, error) {
	n := len(pod.Spec.Containers)
	if n < 2 {
		return nil, false, nil
	}
	out := make([]int, n)
	if pod.Annotations[appspub.ContainerLaunchPriorityKey] == appspub.ContainerLaunchOrdered {
		for i := range out {
			out[i] = -i
		}
		return out, true, nil
	}
	for i, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if e.Name != appspub.ContainerLaunchPriorityEnvName {
				continue
			}
			p, err := strconv.Atoi(strings.TrimSpace(e.Value))
			if err != nil || p < appspub.ContainerLaunchPriorityMin || p > appspub.ContainerLaunchPriorityMax {
				return nil, false, fmt.Errorf("container %s: env %s=%q must be an integer between %d and %d",
					c.Name, appspub.ContainerLaunchPriorityEnvName, e.Value, appspub.ContainerLaunchPriorityMin, appspub.ContainerLaunchPriorityMax)
			}
			out[i] = p
		}
	}
	for _, p := range out[1:] {
		if p != out[0] {
			return out, true, nil
		}
	}
	return nil, false, nil
}

// AddBarriers gives each container of a pod that asks for ordered launch the
// KRUISE_CONTAINER_BARRIER env from its priority's key of the pod's barrier ConfigMap, and
// reports whether it changed the pod. The pod must have its name.
func AddBarriers(pod *corev1.Pod) (bool, error) {
	prio, ordered, err := priorities(pod)
	if err != nil || !ordered {
		return false, err
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if barrierKey(c) != "" {
			continue
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: appspub.ContainerLaunchBarrierEnvName, ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: BarrierName(pod.Name)}, Key: Key(prio[i])},
		}})
	}
	return true, nil
}

// barrierKey returns the barrier key a container waits for, "" for none.
func barrierKey(c *corev1.Container) string {
	for _, e := range c.Env {
		if e.Name == appspub.ContainerLaunchBarrierEnvName && e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			return e.ValueFrom.ConfigMapKeyRef.Key
		}
	}
	return ""
}

// nextKey decides the barrier key to add now. Going from the highest priority down: a
// priority whose key is missing is the one to open; one whose key is there but whose containers
// are not all ready yet makes the rest wait. done is true when every key is there, whether or
// not the last containers are ready yet.
func nextKey(pod *corev1.Pod, barrier map[string]string) (key string, done bool) {
	ready := map[string]bool{}
	for _, cs := range pod.Status.ContainerStatuses {
		ready[cs.Name] = cs.Ready
	}
	allReady := map[int]bool{}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		p, ok := appspub.ContainerLaunchPriority(c)
		if !ok {
			continue
		}
		if _, seen := allReady[p]; !seen {
			allReady[p] = true
		}
		allReady[p] = allReady[p] && ready[c.Name]
	}
	order := make([]int, 0, len(allReady))
	for p := range allReady {
		order = append(order, p)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(order)))
	missing := false
	for _, p := range order {
		if _, ok := barrier[Key(p)]; !ok {
			missing = true
		}
	}
	if !missing {
		return "", true
	}
	for _, p := range order {
		if _, ok := barrier[Key(p)]; !ok {
			return Key(p), false
		}
		if !allReady[p] {
			return "", false
		}
	}
	return "", false
}
