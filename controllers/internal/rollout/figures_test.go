package rollout

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestScaled(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	type tcase struct {
		v       *intstr.IntOrString
		roundUp bool
		want    int
	}
	tests := map[string]tcase{
		"a number is taken as it is":                 {v: &intstr.IntOrString{IntVal: 3}, want: 3},
		"a percentage rounds down unless asked up":   {v: pct("25%"), want: 2},
		"a percentage rounds up when asked":          {v: pct("25%"), roundUp: true, want: 3},
		"no value is the default":                    {want: 1},
		"a value that does not parse counts nothing": {v: pct("x"), want: 0},
		"a negative value counts nothing":            {v: &intstr.IntOrString{IntVal: -2}, want: 0},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "count", tc.want, Scaled(tc.v, intstr.FromInt32(1), 10, tc.roundUp))
	})
}

func TestRequeue(t *testing.T) {
	type tcase struct {
		asks []time.Duration
		want time.Duration
	}
	tests := map[string]tcase{
		"no ask is no requeue":             {want: 0},
		"the soonest ask wins":             {asks: []time.Duration{3 * time.Second, time.Second, 2 * time.Second}, want: time.Second},
		"an ask of zero or less is no ask": {asks: []time.Duration{0, -time.Second, 5 * time.Second}, want: 5 * time.Second},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		var q Requeue
		for _, d := range tc.asks {
			q.After(d)
		}
		q.When(false, time.Millisecond)
		testkit.Diff(t, "requeue", tc.want, time.Duration(q))
	})
}
