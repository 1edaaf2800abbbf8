package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		nodeName string
		args     []string
		want     int
	}{
		{name: "help exits 0", nodeName: "n1", args: []string{"--help"}, want: 0},
		{name: "an unknown flag is a usage error", nodeName: "n1", args: []string{"--no-such-flag"}, want: 2},
		{name: "no NODE_NAME is a usage error before any connection", nodeName: "", args: nil, want: 2},
		{name: "zero pull workers is a usage error", nodeName: "n1", args: []string{"--max-workers-for-pull-image=0"}, want: 2},
		{name: "an unknown feature gate is a usage error", nodeName: "n1", args: []string{"--feature-gates=NoSuchGate=true"}, want: 2},
		{name: "a daemon config namespace that is no namespace name is a usage error", nodeName: "n1", args: []string{"--daemon-config-namespace=Not_A_Namespace"}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NODE_NAME", tt.nodeName)
			if diff := cmp.Diff(tt.want, run(tt.args)); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
		})
	}
}
