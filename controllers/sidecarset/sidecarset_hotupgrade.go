package sidecarset

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcontainer"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
)

// A HotUpgrade sidecar runs as a pair, <name>-1 and <name>-2: one serves (the pod's
// kruise.io/sidecarset-working-hotupgrade-container names it), the other idles on
// hotUpgradeEmptyImage. An update goes in three steps, none of which restarts the serving
// container:
//  1. the idle container is set to the new image and named the working one (hotUpgradeSidecar);
//  2. it starts, and its postStart hook takes the traffic over from the old one;
//  3. once it runs the new image and is ready, the old container is set back to the empty
//     image (resetOldSidecars).

// pair returns the serving and the other container of a hot-upgrade sidecar in a pod.
func pair(pod *corev1.Pod, sidecar string) (working, other string) {
	n1, n2 := inject.HotUpgradeNames(sidecar)
	if inject.WorkingHotUpgrade(pod)[sidecar] == n2 {
		return n2, n1
	}
	return n1, n2
}

// runsSpec tells a container that is ready on the image its spec names.
func runsSpec(pod *corev1.Pod, name string) bool {
	c, cs := podcontainer.Spec(pod, name), podcontainer.Status(pod, name)
	return c != nil && cs != nil && cs.Ready && cs.State.Running != nil && cs.Image == c.Image
}

// hotUpgradeSidecar does step 1 for one sidecar: the container to upgrade is the one on the
// empty image, or else the one not serving. It returns the changed container's name, "" when
// the serving container already runs the image.
func hotUpgradeSidecar(pod *corev1.Pod, sc *appsv1alpha1.SidecarContainer, version string) (string, error) {
	working, other := pair(pod, sc.Name)
	w, o := podcontainer.Spec(pod, working), podcontainer.Spec(pod, other)
	if w == nil || o == nil {
		return "", fmt.Errorf("pod lacks hot-upgrade containers %s and %s", working, other)
	}
	target, old := o, w
	if w.Image == sc.UpgradeStrategy.HotUpgradeEmptyImage && o.Image != sc.UpgradeStrategy.HotUpgradeEmptyImage {
		target, old = w, o
	}
	if old.Image == sc.Image {
		return "", nil
	}
	target.Image = sc.Image
	workingMap := inject.WorkingHotUpgrade(pod)
	workingMap[sc.Name] = target.Name
	raw, err := json.Marshal(workingMap)
	if err != nil {
		return "", err
	}
	pod.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer] = string(raw)
	pod.Annotations[appsv1alpha1.SidecarSetVersionAnnotationPrefix+target.Name] = version
	pod.Annotations[appsv1alpha1.SidecarSetVersionAltAnnotationPrefix+target.Name] = pod.Annotations[appsv1alpha1.SidecarSetVersionAnnotationPrefix+old.Name]
	pod.Annotations[appsv1alpha1.SidecarSetVersionAltAnnotationPrefix+old.Name] = version
	return target.Name, nil
}

// pendingReset returns, for a pod already on the latest hash, the old containers of hot-upgrade
// pairs that still run a real image while their new container serves and is ready (step 3 is
// due), and whether some pair is still waiting for its new container.
func pendingReset(s *appsv1alpha1.SidecarSet, pod *corev1.Pod) (due []string, waiting bool) {
	for i := range s.Spec.Containers {
		sc := &s.Spec.Containers[i]
		if sc.UpgradeStrategy.UpgradeType != appsv1alpha1.SidecarContainerHotUpgrade {
			continue
		}
		working, other := pair(pod, sc.Name)
		o := podcontainer.Spec(pod, other)
		if o == nil || o.Image == sc.UpgradeStrategy.HotUpgradeEmptyImage {
			continue
		}
		if runsSpec(pod, working) {
			due = append(due, other)
		} else {
			waiting = true
		}
	}
	return due, waiting
}

// resetOldSidecars does step 3: it sets the given old containers back to their empty image and
// their version counters to 0, and returns them for the in-place state to follow.
func resetOldSidecars(s *appsv1alpha1.SidecarSet, pod *corev1.Pod, containers []string) {
	empty := map[string]string{}
	for i := range s.Spec.Containers {
		sc := &s.Spec.Containers[i]
		if sc.UpgradeStrategy.UpgradeType == appsv1alpha1.SidecarContainerHotUpgrade {
			n1, n2 := inject.HotUpgradeNames(sc.Name)
			empty[n1], empty[n2] = sc.UpgradeStrategy.HotUpgradeEmptyImage, sc.UpgradeStrategy.HotUpgradeEmptyImage
		}
	}
	for _, name := range containers {
		c := podcontainer.Spec(pod, name)
		if c == nil || empty[name] == "" {
			continue
		}
		c.Image = empty[name]
		pod.Annotations[appsv1alpha1.SidecarSetVersionAnnotationPrefix+name] = "0"
		// The serving partner's alt counter pointed at this container's version.
		for other := range empty {
			if other != name && sameSidecar(other, name) {
				pod.Annotations[appsv1alpha1.SidecarSetVersionAltAnnotationPrefix+other] = "0"
			}
		}
	}
}

// sameSidecar tells the two containers of one hot-upgrade pair (name-1 and name-2).
func sameSidecar(a, b string) bool {
	return len(a) > 2 && len(b) > 2 && a[:len(a)-2] == b[:len(b)-2]
}
