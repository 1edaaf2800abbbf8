package pub

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// UpdatePriorityStrategy orders pods for update. Set either weightPriority or orderPriority,
// not both.
type UpdatePriorityStrategy struct {
	// OrderPriority sorts pods by the integer value of the given label keys, highest first;
	// earlier terms take precedence.
	// +optional
	OrderPriority []UpdatePriorityOrderTerm `json:"orderPriority,omitempty"`
	// WeightPriority sums the weights of the terms a pod matches; higher totals update first.
	// +optional
	WeightPriority []UpdatePriorityWeightTerm `json:"weightPriority,omitempty"`
}

// UpdatePriorityOrderTerm names a pod label whose integer value (or the integer suffix of its
// value) ranks pods.
type UpdatePriorityOrderTerm struct {
	// OrderedKey is the pod label key.
	// +required
	OrderedKey string `json:"orderedKey"`
}

// UpdatePriorityWeightTerm adds weight to pods matching a selector.
type UpdatePriorityWeightTerm struct {
	// Weight is added to the priority of matching pods, from 0 to 100.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`
	// MatchSelector selects the pods the weight applies to.
	// +required
	MatchSelector metav1.LabelSelector `json:"matchSelector"`
}
