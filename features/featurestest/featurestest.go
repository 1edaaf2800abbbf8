package featurestest

import (
	"sort"
	"strings"

	"github.com/kruise-addon/kruise-addon/features"
)

// AllOn returns every 1.8 gate set to true, in name order, as --feature-gates takes them.
func AllOn() string {
	var on []string
	for gate := range features.Specs() {
		on = append(on, string(gate)+"=true")
	}
	sort.Strings(on)
	return strings.Join(on, ",")
}
