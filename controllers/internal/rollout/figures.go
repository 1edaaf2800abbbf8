package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Scaled turns an int-or-percent of total into a count, def standing in for v when it is nil;
// a value that does not parse or is negative counts 0.
func Scaled(v *intstr.IntOrString, def intstr.IntOrString, total int, roundUp bool) int {
	if v == nil {
		v = &def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, roundUp)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Requeue keeps the soonest of the delays after which a pass asks to be looked at again; zero
// is none.
type Requeue time.Duration

// After asks for another look after d; zero or less asks for none.
func (q *Requeue) After(d time.Duration) {
	if d > 0 && (*q == 0 || d < time.Duration(*q)) {
		*q = Requeue(d)
	}
}

// When asks for another look after d when cond holds.
func (q *Requeue) When(cond bool, d time.Duration) {
	if cond {
		q.After(d)
	}
}
