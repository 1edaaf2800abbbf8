package podhook

import (
	"testing"

	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
)

func TestCheckCoversWhatItsGatesGuard(t *testing.T) {
	ops := []podwebhook.Op{podwebhook.OpUpdate, podwebhook.OpDelete, podwebhook.OpEvict}
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
