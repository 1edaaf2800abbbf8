package installer

import "testing"

func TestReadinessAllReady(t *testing.T) {
	tests := map[string]struct {
		r    Readiness
		want bool
	}{
		"a manager with none of its one replica ready is not ready (Helm would accept it)": {r: Readiness{ManagerDesired: 1}},
		"every manager replica and daemon pod ready is ready": {
			r: Readiness{ManagerReady: 2, ManagerDesired: 2, DaemonPresent: true, DaemonReady: 3, DaemonDesired: 3}, want: true,
		},
		"a daemon pod not ready keeps it waiting": {
			r: Readiness{ManagerReady: 1, ManagerDesired: 1, DaemonPresent: true, DaemonReady: 2, DaemonDesired: 3},
		},
		"no daemon rendered needs only the manager": {r: Readiness{ManagerReady: 1, ManagerDesired: 1}, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.allReady(); got != tc.want {
				t.Fatalf("allReady() = %v, want %v", got, tc.want)
			}
		})
	}
}
