package statefulset

import (
	"strconv"
	"strings"

	"github.com/kruise-addon/kruise-addon/controllers/internal/ordinals"
)

// ordinalOf returns the ordinal of a pod named <set>-<ordinal>, or false when the pod's name is
// not of that form.
func ordinalOf(set, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > ordinals.Max || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// podName is the name of the pod with ordinal o.
func podName(set string, o int) string { return set + "-" + strconv.Itoa(o) }

// claimName is the name of the PVC that volume claim template tmpl gives the pod with ordinal o.
func claimName(tmpl, set string, o int) string { return tmpl + "-" + podName(set, o) }
