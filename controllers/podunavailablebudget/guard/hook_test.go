package guard

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
)

func TestCheckCoversWhatItsGatesGuard(t *testing.T) {
	ops := []podadmission.Op{podadmission.OpUpdate, podadmission.OpDelete, podadmission.OpEvict}
	cases := map[string]struct {
		check Check
		want  []bool // for ops, in order
	}{
		"delete gate only (the default)": {Check{GuardDeletes: true}, []bool{false, true, true}},
		"update gate only":               {Check{GuardUpdates: true}, []bool{true, false, false}},
		"both gates":                     {Check{GuardDeletes: true, GuardUpdates: true}, []bool{true, true, true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for i, op := range ops {
				if got := tc.check.Covers(op); got != tc.want[i] {
					t.Errorf("Covers(%s) = %v, want %v", op, got, tc.want[i])
				}
			}
		})
	}
}
