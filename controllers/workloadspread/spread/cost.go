package spread

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
)

// costStep is the distance between two subsets' deletion costs.
const costStep = 100

// DeletionCosts decides the controller.kubernetes.io/pod-deletion-cost of every active pod of a
// WorkloadSpread, so that a scale-down of the target removes first the pods of the last
// subsets, and before them the pods a subset holds above its maxReplicas:
//   - with n subsets, the pods of the subset at index idx, up to its maxReplicas, cost
//     100·(n−idx);
//   - the pods above it cost −100·(idx+1); which ones are above is decided by the scale-down
//     order (podsort.ForDeletion), the cheapest to lose first;
//   - pods in no subset (bySubset[""]: created before the WorkloadSpread or left by a removed
//     subset) cost −100·(n+1), so they go first of all.
//
// bySubset holds the active pods of each subset by subset name; the result maps pod name to
// the annotation value.
func DeletionCosts(subsets []appsv1alpha1.WorkloadSpreadSubset, bySubset map[string][]*corev1.Pod, workloadReplicas int32) (map[string]string, error) {
	n := len(subsets)
	out := map[string]string{}
	set := func(pods []*corev1.Pod, cost int) {
		v := strconv.Itoa(cost)
		for _, p := range pods {
			out[p.Name] = v
		}
	}
	for idx := range subsets {
		s := &subsets[idx]
		pods := append([]*corev1.Pod(nil), bySubset[s.Name]...)
		limit, err := MaxReplicas(s, workloadReplicas)
		if err != nil {
			return nil, err
		}
		positive := costStep * (n - idx)
		if limit == Unlimited || len(pods) <= int(limit) {
			set(pods, positive)
			continue
		}
		podsort.ForDeletion(pods)
		extra := len(pods) - int(limit)
		set(pods[:extra], -costStep*(idx+1))
		set(pods[extra:], positive)
	}
	set(bySubset[""], -costStep*(n+1))
	return out, nil
}
