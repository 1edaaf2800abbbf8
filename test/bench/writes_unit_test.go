package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInPlaceWritesPerPod(t *testing.T) {
	cases := map[string]struct {
		n      int
		writes map[string]float64
		want   string
	}{
		"the pod writes of the phase are split by writer, per pod, against the floor": {
			n: 1000,
			writes: map[string]float64{"pods PATCH": 1000, "pods/status PATCH": 2000, "pods/status PUT": 3250,
				"clonesets/status PUT": 14, "leases PUT": 5},
			want: "writes per pod in the in-place update: 6.25 (spec patch 1.00, InPlaceUpdateReady False and True 2.00, kubelet status 3.25); " +
				"floor 6 (spec patch 1, InPlaceUpdateReady False and True 2, kubelet status 3)",
		},
		"unreadable apiserver metrics say so": {
			n: 1000, want: "writes per pod in the in-place update: unreadable",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, inPlaceWritesPerPod(tc.n, tc.writes)); diff != "" {
				t.Errorf("line (-want +got):\n%s", diff)
			}
		})
	}
}
