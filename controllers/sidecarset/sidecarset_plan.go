package sidecarset

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
)

// plan is what one pass does to a SidecarSet's pods.
type plan struct {
	// update are the pods whose sidecars move to the latest images now, in order.
	update []*corev1.Pod
	// notUpgradable are pods on an old revision that differs from the latest by more than
	// images: they keep their sidecars until they are recreated. As in 1.8, only a SidecarSet
	// that is rolling (neither NotUpdate nor paused) reports them.
	notUpgradable []*corev1.Pod
	// reset are pods on the latest hash whose hot-upgrade pairs have the new container serving
	// and ready: their old containers go back to the empty image.
	reset []*corev1.Pod
}

// podUpdated tells a pod whose sidecars carry the SidecarSet's latest hash.
func podUpdated(s *appsv1alpha1.SidecarSet, pod *corev1.Pod) bool {
	return inject.PodHash(pod, s.Name, appsv1alpha1.SidecarSetHashAnnotation) == s.Annotations[appsv1alpha1.SidecarSetHashAnnotation]
}

// inPlaceOnly tells a pod whose sidecars differ from the latest revision at most by images.
func inPlaceOnly(s *appsv1alpha1.SidecarSet, pod *corev1.Pod) bool {
	return inject.PodHash(pod, s.Name, appsv1alpha1.SidecarSetHashWithoutImageAnnotation) == s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation]
}

// sidecarsSettled tells whether the pod's last in-place sidecar update of this SidecarSet has
// finished: every changed container reports a new image ID and runs its spec image.
// A hot-upgrade pair is settled once its old container is back on the empty image.
func sidecarsSettled(s *appsv1alpha1.SidecarSet, pod *corev1.Pod) bool {
	if due, waiting := pendingReset(s, pod); len(due) > 0 || waiting {
		return false
	}
	state := sidecarState(pod, s.Name)
	return state == nil || inplaceupdate.Completed(pod, state)
}

// upgradeBlocked tells a pod whose sidecars of s cannot take a newer update yet, as in 1.8: one
// of them is Ready while its last in-place update has not taken effect, or a hot-upgrade pair
// is still switching over. A sidecar that is not Ready (say its last image cannot be pulled)
// does not block, so a broken update is followed by the next one.
func upgradeBlocked(s *appsv1alpha1.SidecarSet, pod *corev1.Pod) bool {
	due, waiting := pendingReset(s, pod)
	if len(due) > 0 {
		return true
	}
	state := sidecarState(pod, s.Name)
	anyNotReady := false
	for _, cs := range pod.Status.ContainerStatuses {
		last, changed := lastStatusOf(state, cs.Name)
		if !changed {
			continue
		}
		if !cs.Ready {
			anyNotReady = true
			continue
		}
		one := *state
		one.LastContainerStatuses = map[string]appspub.InPlaceUpdateContainerStatus{cs.Name: last}
		if !inplaceupdate.Completed(pod, &one) {
			return true
		}
	}
	return waiting && !anyNotReady
}

// lastStatusOf is what state recorded of container name before the last in-place update, and
// whether that update changed it.
func lastStatusOf(state *appspub.InPlaceUpdateState, name string) (appspub.InPlaceUpdateContainerStatus, bool) {
	if state == nil {
		return appspub.InPlaceUpdateContainerStatus{}, false
	}
	last, ok := state.LastContainerStatuses[name]
	return last, ok
}

// sidecarState reads this SidecarSet's entry of kruise.io/sidecarset-inplace-update-state.
func sidecarState(pod *corev1.Pod, name string) *appspub.InPlaceUpdateState {
	raw := pod.Annotations[appsv1alpha1.SidecarsetInplaceUpdateStateKey]
	if raw == "" {
		return nil
	}
	all := map[string]*appspub.InPlaceUpdateState{}
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		return nil
	}
	return all[name]
}

// podReady is the pod's Ready condition.
func podReady(pod *corev1.Pod) bool { return podsort.IsReady(pod) }

// unavailable tells a pod that counts against maxUnavailable: not ready, or its sidecars still
// moving to new images.
func unavailable(s *appsv1alpha1.SidecarSet, pod *corev1.Pod) bool {
	return !podReady(pod) || !sidecarsSettled(s, pod)
}

// planUpdate decides which of a SidecarSet's pods get the latest sidecar images now.
//
//   - With updateStrategy NotUpdate or paused, none, and no pod is reported not upgradable.
//   - Only pods on an old hash that the update selector (when set) picks are candidates; a
//     candidate whose hash without image differs needs more than an image change and is
//     reported not upgradable instead; a candidate whose Ready sidecar is still settling a
//     previous update waits (one whose sidecar is not Ready, e.g. after a bad image, does not).
//   - partition (a number, or a percentage of matched pods rounded up) candidates are held
//     back: the last ones in update order.
//   - Candidates that are not ready go first and cost nothing; every other one is taken only
//     while the pods that are unavailable (not ready, or settling an update) stay within
//     maxUnavailable (a number, or a percentage of matched pods rounded up; default 1).
//   - Pods on the latest hash whose hot-upgrade pairs have the new container ready get their old
//     container reset to the empty image, whatever the strategy.
//   - Update order: not ready first, then priorityStrategy, then scatterStrategy spreads the
//     pods of each term, then older pods first.
func planUpdate(s *appsv1alpha1.SidecarSet, pods []*corev1.Pod, now time.Time) plan {
	var p plan
	us := s.Spec.UpdateStrategy
	var sel labels.Selector
	if us.Selector != nil {
		if parsed, err := metav1.LabelSelectorAsSelector(us.Selector); err == nil {
			sel = parsed
		} else {
			sel = labels.Nothing()
		}
	}
	var candidates []*corev1.Pod
	for _, pod := range pods {
		if podUpdated(s, pod) {
			if due, _ := pendingReset(s, pod); len(due) > 0 {
				p.reset = append(p.reset, pod)
			}
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if !inPlaceOnly(s, pod) {
			p.notUpgradable = append(p.notUpgradable, pod)
			continue
		}
		if !upgradeBlocked(s, pod) {
			candidates = append(candidates, pod)
		}
	}
	if us.Type == appsv1alpha1.NotUpdateSidecarSetStrategyType || us.Paused {
		p.notUpgradable = nil
		return p
	}
	if len(candidates) == 0 {
		return p
	}

	total := len(pods)
	var scatter []podsort.ScatterTerm
	for _, t := range us.ScatterStrategy {
		scatter = append(scatter, podsort.ScatterTerm{Key: t.Key, Value: t.Value})
	}
	podsort.ForUpdate(candidates, us.PriorityStrategy, scatter, 0, now)

	partition := scaled(us.Partition, total, 0)
	if partition >= len(candidates) {
		return p
	}
	candidates = candidates[:len(candidates)-partition]

	maxUnavailable := scaled(us.MaxUnavailable, total, 1)
	busy := 0
	for _, pod := range pods {
		if podUpdated(s, pod) && unavailable(s, pod) {
			busy++
		}
	}
	for _, pod := range candidates {
		if !podReady(pod) {
			p.update = append(p.update, pod)
			continue
		}
		if busy >= maxUnavailable {
			break
		}
		busy++
		p.update = append(p.update, pod)
	}
	return p
}

// scaled resolves a number or a percentage of total, rounded up; def when unset or malformed.
func scaled(v *intstr.IntOrString, total, def int) int {
	if v == nil {
		return def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, true)
	if err != nil || n < 0 {
		return def
	}
	return n
}
