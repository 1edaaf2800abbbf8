package spread

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Unlimited is the missingReplicas of a subset without maxReplicas.
const Unlimited = -1

// MaxReplicas returns the subset's limit for a target of workloadReplicas replicas: the int
// itself, or the percentage rounded up. A subset without maxReplicas returns Unlimited.
func MaxReplicas(s *appsv1alpha1.WorkloadSpreadSubset, workloadReplicas int32) (int32, error) {
	if s.MaxReplicas == nil {
		return Unlimited, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(s.MaxReplicas, int(workloadReplicas), true)
	if err != nil {
		return 0, fmt.Errorf("subset %s maxReplicas: %w", s.Name, err)
	}
	if v < 0 {
		return 0, fmt.Errorf("subset %s maxReplicas %s: must not be negative", s.Name, s.MaxReplicas.String())
	}
	return int32(v), nil
}

// HasPercent tells whether any subset's maxReplicas is a percentage, so the target's replicas
// are needed to pick a subset.
func HasPercent(ws *appsv1alpha1.WorkloadSpread) bool {
	for i := range ws.Spec.Subsets {
		if isPercent(&ws.Spec.Subsets[i]) {
			return true
		}
	}
	return false
}

// Statuses returns ws's subset statuses in spec order, resolved against the target's
// workloadReplicas as they are now:
//   - a subset with no status yet starts fresh, missing its whole limit; so does a subset
//     renamed or added since the controller last wrote the status;
//   - a subset with an int maxReplicas, or none, keeps its recorded status;
//   - a percentage subset keeps its recorded pods, but misses its limit for workloadReplicas
//     less the pods the status counts (see Missing), since the status may have been computed
//     against other replicas, or before the target was seen at all.
func Statuses(ws *appsv1alpha1.WorkloadSpread, workloadReplicas int32) ([]appsv1alpha1.WorkloadSpreadSubsetStatus, error) {
	byName := make(map[string]*appsv1alpha1.WorkloadSpreadSubsetStatus, len(ws.Status.SubsetStatuses))
	for i := range ws.Status.SubsetStatuses {
		byName[ws.Status.SubsetStatuses[i].Name] = &ws.Status.SubsetStatuses[i]
	}
	out := make([]appsv1alpha1.WorkloadSpreadSubsetStatus, 0, len(ws.Spec.Subsets))
	for i := range ws.Spec.Subsets {
		s := &ws.Spec.Subsets[i]
		limit, err := MaxReplicas(s, workloadReplicas)
		if err != nil {
			return nil, err
		}
		old, ok := byName[s.Name]
		if !ok {
			out = append(out, appsv1alpha1.WorkloadSpreadSubsetStatus{Name: s.Name, MissingReplicas: limit})
			continue
		}
		st := *old.DeepCopy()
		if isPercent(s) {
			st.MissingReplicas = Missing(limit, &st)
		}
		out = append(out, st)
	}
	return out, nil
}

// Missing is how many pods a subset of limit still takes, given the pods its status counts:
// limit less its replicas and the pods being created into it, plus the pods being deleted
// from it, never below 0 nor above limit. An Unlimited subset stays Unlimited.
func Missing(limit int32, st *appsv1alpha1.WorkloadSpreadSubsetStatus) int32 {
	if limit == Unlimited {
		return Unlimited
	}
	m := int64(limit) - int64(st.Replicas) - int64(len(st.CreatingPods)) + int64(len(st.DeletingPods))
	return int32(max(0, min(m, int64(limit))))
}

func isPercent(s *appsv1alpha1.WorkloadSpreadSubset) bool {
	return s.MaxReplicas != nil && s.MaxReplicas.Type == intstr.String
}

// Schedulable tells whether the subset may take new pods: it is unless its Schedulable
// condition is False (set by the controller under scheduleStrategy Adaptive).
func Schedulable(st *appsv1alpha1.WorkloadSpreadSubsetStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == appsv1alpha1.SubsetSchedulable && c.Status == corev1.ConditionFalse {
			return false
		}
	}
	return true
}

// Pick returns the index of the subset a new pod goes to: the first schedulable subset, in
// spec order, that still misses replicas or has no limit. -1 means no subset has room; the pod
// is then admitted without a subset.
func Pick(statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) int {
	for i := range statuses {
		st := &statuses[i]
		if Schedulable(st) && (st.MissingReplicas > 0 || st.MissingReplicas == Unlimited) {
			return i
		}
	}
	return -1
}

// ordinalRe takes the trailing ordinal of a StatefulSet pod's name.
var ordinalRe = regexp.MustCompile(`-([0-9]+)$`)

// PickByOrdinal returns the subset of a StatefulSet pod, by its ordinal: subsets take
// consecutive ordinal ranges of their maxReplicas each, in spec order, skipping subsets whose
// Schedulable condition is False; a subset without maxReplicas takes every ordinal left. The
// name of the subset, or "" when the ordinal lies beyond every range or the name has none.
func PickByOrdinal(ws *appsv1alpha1.WorkloadSpread, podName string) string {
	m := ordinalRe.FindStringSubmatch(podName)
	if m == nil {
		return ""
	}
	ordinal, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return ""
	}
	conds := map[string]*appsv1alpha1.WorkloadSpreadSubsetStatus{}
	for i := range ws.Status.SubsetStatuses {
		conds[ws.Status.SubsetStatuses[i].Name] = &ws.Status.SubsetStatuses[i]
	}
	var upTo int64
	for _, s := range ws.Spec.Subsets {
		if st, ok := conds[s.Name]; ok && !Schedulable(st) {
			continue
		}
		limit := int64(math.MaxInt32)
		if s.MaxReplicas != nil {
			limit = int64(s.MaxReplicas.IntValue())
		}
		upTo += limit
		if ordinal < upTo {
			return s.Name
		}
	}
	return ""
}

// RecordCreate marks a pod being created in statuses[i]: key (its name or generated UID) goes
// into creatingPods at now and a limited subset misses one replica less. A subset without a
// limit is not written to, as nothing counts against it; changed says whether statuses changed.
func RecordCreate(statuses []appsv1alpha1.WorkloadSpreadSubsetStatus, i int, key string, now metav1.Time) (changed bool) {
	st := &statuses[i]
	if st.MissingReplicas == Unlimited {
		return false
	}
	if st.CreatingPods == nil {
		st.CreatingPods = map[string]metav1.Time{}
	}
	st.CreatingPods[key] = now
	if st.MissingReplicas > 0 {
		st.MissingReplicas--
	}
	return true
}

// Recorded returns the index of the subset whose creatingPods or deletingPods holds key, or -1.
func Recorded(statuses []appsv1alpha1.WorkloadSpreadSubsetStatus, key string) int {
	for i := range statuses {
		if _, ok := statuses[i].CreatingPods[key]; ok {
			return i
		}
		if _, ok := statuses[i].DeletingPods[key]; ok {
			return i
		}
	}
	return -1
}

// RecordDelete marks a pod of subset being deleted or evicted: its name goes into the subset's
// deletingPods at now and a limited subset misses one replica more, so the replacement may go
// to it at once. A pod already recorded in flight, an unknown subset or a subset without a
// limit change nothing.
func RecordDelete(statuses []appsv1alpha1.WorkloadSpreadSubsetStatus, subset, podName string, now metav1.Time) (changed bool) {
	if Recorded(statuses, podName) >= 0 {
		return false
	}
	for i := range statuses {
		st := &statuses[i]
		if st.Name != subset {
			continue
		}
		if st.MissingReplicas == Unlimited {
			return false
		}
		if st.DeletingPods == nil {
			st.DeletingPods = map[string]metav1.Time{}
		}
		st.DeletingPods[podName] = now
		st.MissingReplicas++
		return true
	}
	return false
}
