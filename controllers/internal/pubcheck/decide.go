package pubcheck

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
)

// MaxRecordedPods bounds disruptedPods plus unavailablePods: past it, further disruptions are
// refused until the controller has seen the recorded ones through, as in 1.8.
const MaxRecordedPods = 2000

// Exempt reports whether the pod opted out of every budget with pub.kruise.io/no-protect.
func Exempt(pod *corev1.Pod) bool {
	return pod.Annotations[policyv1alpha1.PodPubNoProtectionAnnotation] == "true"
}

// RelatedPub returns the name of the budget the pod's kruise.io/related-pub annotation names.
func RelatedPub(pod *corev1.Pod) string {
	return pod.Annotations[policyv1alpha1.PodRelatedPubAnnotation]
}

// Protects reports whether pub guards op: every operation when the
// kruise.io/pub-protect-operations annotation is absent or empty, else the operations it lists.
func Protects(pub *policyv1alpha1.PodUnavailableBudget, op policyv1alpha1.PubOperation) bool {
	v := pub.Annotations[policyv1alpha1.PubProtectOperationAnnotation]
	if v == "" {
		return true
	}
	for _, o := range strings.Split(v, ",") {
		if policyv1alpha1.PubOperation(strings.TrimSpace(o)) == op {
			return true
		}
	}
	return false
}

// Available reports whether a pod counts towards a budget's available pods: it is active,
// Running and Ready, carries no unavailable-pod.kruise.io/ label, and its container statuses
// are Consistent with its spec (an in-place update of the workload or of a SidecarSet has
// taken effect).
func Available(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || !ready(pod) {
		return false
	}
	if HasUnavailableLabel(pod.Labels) {
		return false
	}
	return Consistent(pod)
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// HasUnavailableLabel reports whether labels hold a key with the unavailable-pod.kruise.io/
// prefix, which marks a pod unavailable whatever its readiness.
func HasUnavailableLabel(labels map[string]string) bool {
	for k := range labels {
		if strings.HasPrefix(k, appspub.PubUnavailablePodLabelPrefix) {
			return true
		}
	}
	return false
}

// UpdateDisrupts reports whether an update of a pod from old to cur may make it unavailable:
// the spec changed, or an unavailable-pod.kruise.io/ label appeared.
func UpdateDisrupts(old, cur *corev1.Pod) bool {
	if !reflect.DeepEqual(old.Spec, cur.Spec) {
		return true
	}
	return !HasUnavailableLabel(old.Labels) && HasUnavailableLabel(cur.Labels)
}

// Verdict is what Needs decides before any budget room is taken.
type Verdict int

const (
	// Pass: the operation goes ahead without touching the budget.
	Pass Verdict = iota
	// Count: the operation needs one unit of the budget's room.
	Count
)

// Needs decides whether op on pod must take room from pub (nil: no budget covers the pod):
//   - an exempt pod, a pod that is not available now, and a pod no budget covers pass;
//   - so does every pod of a budget that desires no available pods, or that does not guard op;
//   - a pod already recorded in disruptedPods or unavailablePods passes: its room is taken;
//   - any other pod counts.
func Needs(pod *corev1.Pod, pub *policyv1alpha1.PodUnavailableBudget, op policyv1alpha1.PubOperation) Verdict {
	if Exempt(pod) || !Available(pod) || pub == nil {
		return Pass
	}
	if pub.Status.DesiredAvailable == 0 || !Protects(pub, op) || Recorded(pub, pod.Name) {
		return Pass
	}
	return Count
}

// Recorded reports whether the pod is in the budget's disruptedPods or unavailablePods.
func Recorded(pub *policyv1alpha1.PodUnavailableBudget, pod string) bool {
	_, d := pub.Status.DisruptedPods[pod]
	_, u := pub.Status.UnavailablePods[pod]
	return d || u
}

// Take takes one unit of room from pub's status for op on the named pod, recording the pod in
// unavailablePods for an UPDATE and in disruptedPods otherwise. It returns a Forbidden error,
// leaving pub as it was, when there is no room or too many pods are recorded.
func Take(pub *policyv1alpha1.PodUnavailableBudget, pod string, op policyv1alpha1.PubOperation, now time.Time) error {
	if pub.Status.UnavailableAllowed <= 0 {
		return apierrors.NewForbidden(policyv1alpha1.GroupVersion.WithResource("podunavailablebudgets").GroupResource(), pub.Name,
			fmt.Errorf("pub unavailable allowed is negative"))
	}
	if len(pub.Status.DisruptedPods)+len(pub.Status.UnavailablePods) > MaxRecordedPods {
		return apierrors.NewForbidden(policyv1alpha1.GroupVersion.WithResource("podunavailablebudgets").GroupResource(), pub.Name,
			fmt.Errorf("DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller"))
	}
	pub.Status.UnavailableAllowed--
	at := metav1.NewTime(now)
	if op == policyv1alpha1.PubUpdateOperation {
		if pub.Status.UnavailablePods == nil {
			pub.Status.UnavailablePods = map[string]metav1.Time{}
		}
		pub.Status.UnavailablePods[pod] = at
		return nil
	}
	if pub.Status.DisruptedPods == nil {
		pub.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pub.Status.DisruptedPods[pod] = at
	return nil
}
