package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunExitCodes(t *testing.T) {
	cases := map[string]struct {
		args []string
		want int
	}{
		"--help prints the flags and succeeds": {args: []string{"--help"}, want: 0},
		"an unknown flag is a usage error":     {args: []string{"--no-such-flag"}, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, run(tc.args)); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunRefusesInvalidOptionsAsUsage(t *testing.T) {
	if diff := cmp.Diff(2, run([]string{"--webhook-port=0"})); diff != "" {
		t.Errorf("exit code (-want +got):\n%s", diff)
	}
}
