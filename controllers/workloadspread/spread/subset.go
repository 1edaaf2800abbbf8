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
	for _, s := range ws.Spec.Subsets {
		if s.MaxReplicas != nil && s.MaxReplicas.Type == intstr.String {
			return true
		}
	}
	return false
}

// Statuses returns ws's subset statuses in spec order: the recorded one for each subset, or a
// fresh one (missingReplicas the subset's limit) for a subset that has none yet. A subset
// renamed or added since the controller last wrote the status starts fresh.
func Statuses(ws *appsv1alpha1.WorkloadSpread, workloadReplicas int32) ([]appsv1alpha1.WorkloadSpreadSubsetStatus, error) {
	byName := make(map[string]*appsv1alpha1.WorkloadSpreadSubsetStatus, len(ws.Status.SubsetStatuses))
	for i := range ws.Status.SubsetStatuses {
		byName[ws.Status.SubsetStatuses[i].Name] = &ws.Status.SubsetStatuses[i]
	}
	out := make([]appsv1alpha1.WorkloadSpreadSubsetStatus, 0, len(ws.Spec.Subsets))
	for i := range ws.Spec.Subsets {
		s := &ws.Spec.Subsets[i]
		if old, ok := byName[s.Name]; ok {
			out = append(out, *old.DeepCopy())
			continue
		}
		limit, err := MaxReplicas(s, workloadReplicas)
		if err != nil {
			return nil, err
		}
		out = append(out, appsv1alpha1.WorkloadSpreadSubsetStatus{Name: s.Name, MissingReplicas: limit})
	}
	return out, nil
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
