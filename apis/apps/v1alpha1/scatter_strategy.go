package v1alpha1

import "fmt"

// UpdateScatterStrategy spreads the pods that carry given labels across update batches, so
// that one batch never takes down all pods of, say, one zone or one tenant. Each term names a
// label key and value; the controller counts the matching pods and interleaves them with the
// rest of the update order, handling the term with the most matching pods first.
//
// Scattering is applied after priority ordering. One term is usually enough: with several,
// the resulting order gets hard to predict.
type UpdateScatterStrategy []UpdateScatterTerm

// UpdateScatterTerm selects the pods that have the label Key with the value Value.
type UpdateScatterTerm struct {
	// Key is the pod label key. It must not be empty.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`

	// Value is the pod label value to match.
	// +required
	Value string `json:"value"`
}

// Validate reports an empty key or a key/value pair listed twice.
func (s UpdateScatterStrategy) Validate() error {
	seen := make(map[UpdateScatterTerm]struct{}, len(s))
	for _, term := range s {
		if term.Key == "" {
			return fmt.Errorf("scatter term key must not be empty")
		}
		if _, dup := seen[term]; dup {
			return fmt.Errorf("scatter term %s=%s is listed more than once", term.Key, term.Value)
		}
		seen[term] = struct{}{}
	}
	return nil
}
