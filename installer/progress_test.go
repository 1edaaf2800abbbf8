package installer

import (
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

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

func TestReadinessLineCountsOnlyComponentsThatRun(t *testing.T) {
	tests := map[string]struct {
		r    Readiness
		want string
	}{
		"a daemon on no node yet is not counted as ready": {
			r: Readiness{ManagerDesired: 1, DaemonPresent: true}, want: "ready 0/1: manager 0/1, daemon 0/0 (on no node yet)",
		},
		"a daemon that runs is counted": {
			r: Readiness{ManagerReady: 1, ManagerDesired: 1, DaemonPresent: true, DaemonReady: 2, DaemonDesired: 3}, want: "ready 1/2: manager 1/1, daemon 2/3",
		},
		"no daemon rendered": {r: Readiness{ManagerReady: 1, ManagerDesired: 1}, want: "ready 1/1: manager 1/1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAdviceForEveryStateThatNeedsIt(t *testing.T) {
	for s, want := range map[release.State]string{
		release.Uninstalling: "kubectl logs -n <namespace> job/kruise-uninstall-check",
		release.Pending:      "kruise-addon unlock",
		release.Failed:       "kruise-addon upgrade",
		release.Deployed:     "",
	} {
		got := adviceFor(s)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("advice for %s: %q, want it to name %q", s, got, want)
		}
	}
}
