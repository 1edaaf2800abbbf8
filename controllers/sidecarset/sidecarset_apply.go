package sidecarset

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcontainer"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
)

// Reasons of the SidecarSetUpgradable pod condition, as 1.8 writes them.
const (
	reasonAllUpgradable  = "AllSidecarsetUpgradable"
	reasonImmutableField = "UpdateImmutableField"
)

// updateSidecars moves a pod's sidecars of s to the latest images in place: it sets the images of
// the SidecarSet's containers, records the hashes and revision the pod now runs, and records the
// sidecars' image IDs in kruise.io/sidecarset-inplace-update-state so completion can be told, and
// applies the SidecarSet's patchPodMetadata to the pod's annotations. The app containers are not
// touched.
func updateSidecars(pod *corev1.Pod, s *appsv1alpha1.SidecarSet, now metav1.Time) error {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	images := map[string]string{}
	var changed []string
	for i := range s.Spec.Containers {
		c := &s.Spec.Containers[i]
		if c.UpgradeStrategy.UpgradeType == appsv1alpha1.SidecarContainerHotUpgrade {
			name, err := hotUpgradeSidecar(pod, c, s.ResourceVersion)
			if err != nil {
				return err
			}
			if name != "" {
				changed = append(changed, name)
			}
			continue
		}
		images[c.Name] = c.Image
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if img, ok := images[c.Name]; ok && c.Image != img {
			c.Image = img
			changed = append(changed, c.Name)
		}
	}
	// The pod's metadata follows patchPodMetadata with every update, as at injection.
	if err := inject.PatchMetadata(pod.Annotations, s.Spec.PatchPodMetadata); err != nil {
		return fmt.Errorf("patch pod metadata: %w", err)
	}
	if len(changed) > 0 {
		state := &appspub.InPlaceUpdateState{
			Revision:              s.Status.LatestRevision,
			UpdateTimestamp:       now,
			LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{},
		}
		if err := recordChanged(pod, s.Name, state, changed); err != nil {
			return err
		}
	}
	old, err := inject.ReadUpgradeSpecs(pod, appsv1alpha1.SidecarSetHashAnnotation)
	if err != nil {
		return err
	}
	list := old[s.Name].SidecarList
	if err := inject.WriteUpgradeSpec(pod, appsv1alpha1.SidecarSetHashAnnotation, inject.UpgradeSpec{
		UpdateTimestamp: now, Hash: s.Annotations[appsv1alpha1.SidecarSetHashAnnotation], SidecarSetName: s.Name,
		SidecarList: list, ControllerRevision: s.Status.LatestRevision,
	}); err != nil {
		return err
	}
	return inject.WriteUpgradeSpec(pod, appsv1alpha1.SidecarSetHashWithoutImageAnnotation, inject.UpgradeSpec{
		UpdateTimestamp: now, Hash: s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation], SidecarSetName: s.Name, SidecarList: list,
	})
}

// recordChanged records the current image IDs of the changed containers in state and writes
// it as this SidecarSet's entry of kruise.io/sidecarset-inplace-update-state.
func recordChanged(pod *corev1.Pod, name string, state *appspub.InPlaceUpdateState, changed []string) error {
	for _, c := range changed {
		id := ""
		if cs := podcontainer.Status(pod, c); cs != nil {
			id = cs.ImageID
		}
		state.LastContainerStatuses[c] = appspub.InPlaceUpdateContainerStatus{ImageID: id}
	}
	return writeSidecarState(pod, name, state)
}

func writeSidecarState(pod *corev1.Pod, name string, state *appspub.InPlaceUpdateState) error {
	all := map[string]*appspub.InPlaceUpdateState{}
	if raw := pod.Annotations[appsv1alpha1.SidecarsetInplaceUpdateStateKey]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &all)
	}
	all[name] = state
	raw, err := json.Marshal(all)
	if err != nil {
		return fmt.Errorf("encode %s: %w", appsv1alpha1.SidecarsetInplaceUpdateStateKey, err)
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[appsv1alpha1.SidecarsetInplaceUpdateStateKey] = string(raw)
	return nil
}

// setUpgradable records in the pod's SidecarSetUpgradable condition whether this SidecarSet can
// update the pod's sidecars in place. The message is a JSON map of SidecarSet name to that
// answer; the condition is True only while every entry is. It reports whether it changed the pod.
func setUpgradable(pod *corev1.Pod, name string, ok bool, now metav1.Time) bool {
	entries := map[string]bool{}
	if c := podcondition.Get(pod, appsv1alpha1.SidecarSetUpgradable); c != nil && c.Message != "" {
		_ = json.Unmarshal([]byte(c.Message), &entries)
	}
	if v, had := entries[name]; had && v == ok && podcondition.Get(pod, appsv1alpha1.SidecarSetUpgradable) != nil {
		return false
	}
	entries[name] = ok
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	status, reason := corev1.ConditionTrue, reasonAllUpgradable
	for _, n := range names {
		if !entries[n] {
			status, reason = corev1.ConditionFalse, reasonImmutableField
		}
	}
	msg, _ := json.Marshal(entries)
	return podcondition.Set(pod, corev1.PodCondition{
		Type: appsv1alpha1.SidecarSetUpgradable, Status: status, Reason: reason, Message: string(msg), LastTransitionTime: now,
	})
}

// applyUpdate writes updateSidecars to the pod, starting from the cached pod the plan read and
// reading it again from the apiserver only on a conflict, then marks it upgradable. The mark
// starts from the pod as the update returned it, so it carries the resourceVersion just written
// instead of the cache's, which the update has made stale.
func (r *Reconciler) applyUpdate(ctx context.Context, pod *corev1.Pod, s *appsv1alpha1.SidecarSet) error {
	now := metav1.NewTime(r.Clock.Now())
	cur := pod.DeepCopy()
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			cur = &corev1.Pod{}
			if err := r.live.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
				return err
			}
		}
		first = false
		if podUpdated(s, cur) {
			return nil
		}
		if err := updateSidecars(cur, s, now); err != nil {
			return err
		}
		return r.Client.Update(ctx, cur)
	})
	if err != nil {
		return fmt.Errorf("update sidecars of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return r.markUpgradable(ctx, cur, s.Name, true)
}

// applyReset does step 3 of a hot upgrade on the pod: the old containers go back to the empty
// image, and the in-place state follows them until they run it. As in 1.8, the pod gets a
// ResetContainerSucceed or ResetContainerFailed event.
func (r *Reconciler) applyReset(ctx context.Context, pod *corev1.Pod, s *appsv1alpha1.SidecarSet) error {
	var reset []string
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		reset = nil
		cur := &corev1.Pod{}
		if err := r.live.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
			return err
		}
		due, _ := pendingReset(s, cur)
		if len(due) == 0 {
			return nil
		}
		state := sidecarState(cur, s.Name)
		if state == nil {
			state = &appspub.InPlaceUpdateState{Revision: s.Status.LatestRevision, UpdateTimestamp: metav1.NewTime(r.Clock.Now())}
		}
		if state.LastContainerStatuses == nil {
			state.LastContainerStatuses = map[string]appspub.InPlaceUpdateContainerStatus{}
		}
		if err := recordChanged(cur, s.Name, state, due); err != nil {
			return err
		}
		resetOldSidecars(s, cur, due)
		reset = due
		return r.Client.Update(ctx, cur)
	})
	if err != nil {
		r.Recorder.Eventf(pod, corev1.EventTypeWarning, "ResetContainerFailed", "Setting hot-upgrade sidecars of SidecarSet %s back to the empty image failed: %v", s.Name, err)
		return fmt.Errorf("reset old hot-upgrade sidecars of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if len(reset) > 0 {
		r.Recorder.Eventf(pod, corev1.EventTypeNormal, "ResetContainerSucceed", "Set hot-upgrade sidecars %v of SidecarSet %s back to the empty image", reset, s.Name)
	}
	return nil
}

// markUpgradable writes the pod's SidecarSetUpgradable entry for SidecarSet name through the
// controller's Marks. As in 1.8 it is called only with true right after the pod's sidecars were
// updated in place, and with false for a pod the plan reports not upgradable: a pod already on
// the latest hash, or one waiting for its turn, gets no status write from this controller.
func (r *Reconciler) markUpgradable(ctx context.Context, pod *corev1.Pod, name string, ok bool) error {
	return r.marks.Mark(ctx, pod, name, ok)
}
