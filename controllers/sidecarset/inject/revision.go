package inject

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// ChooseRevision decides which revision of a SidecarSet a new pod gets when
// spec.injectionStrategy.revision pins one. latest is the SidecarSet as it is; pinned is the
// pinned revision restored (nil when none is pinned or it cannot be found, and then the latest
// is injected). roll is a number in [0,1) drawn for the pod.
//
//   - With the update strategy paused, the pinned revision, whatever the policy.
//   - Policy Always: the pinned revision.
//   - Policy Partial: the latest for pods the update strategy's selector picks; otherwise the
//     pinned one, except that, with a percentage partition and no selector, a pod gets the
//     latest with the chance of the share the partition does not hold back.
func ChooseRevision(latest, pinned *appsv1alpha1.SidecarSet, podLabels map[string]string, roll float64) *appsv1alpha1.SidecarSet {
	r := latest.Spec.InjectionStrategy.Revision
	if pinned == nil || r == nil {
		return latest
	}
	us := latest.Spec.UpdateStrategy
	if us.Paused || r.Policy != appsv1alpha1.PartialSidecarSetInjectRevisionPolicy {
		return pinned
	}
	if us.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(us.Selector)
		if err == nil && !sel.Matches(labels.Set(podLabels)) {
			return pinned
		}
	}
	p := us.Partition
	if p == nil || p.Type == intstr.Int {
		return latest
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(p.StrVal, "%"))
	if err != nil {
		return latest
	}
	if roll < float64(pct)/100 {
		return pinned
	}
	return latest
}
