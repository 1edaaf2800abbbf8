package component

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
)

func TestExecExitCodes(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	fail := errors.New("boom")
	tests := []struct {
		name       string
		args       []string
		validate   error
		prepare    error
		run        error
		wantCode   int
		wantRan    bool
		wantStderr string
		sub        error
	}{
		{name: "a subcommand runs instead of the component", args: []string{"check"}, wantCode: ExitOK},
		{name: "a failing subcommand fails, printed", args: []string{"check"}, sub: fail, wantCode: ExitFailed, wantStderr: "boom\n"},
		{name: "help exits 0 without running", args: []string{"--help"}, wantCode: ExitOK},
		{name: "an unknown flag is a usage error, printed", args: []string{"--nope"}, wantCode: ExitUsage, wantStderr: "unknown flag: --nope\n"},
		{name: "invalid options are a usage error, printed", validate: fail, wantCode: ExitUsage, wantStderr: "boom\n"},
		{name: "a failed preparation is a usage error, printed", prepare: fail, wantCode: ExitUsage, wantStderr: "boom\n"},
		{name: "a kubeconfig that cannot be read fails", args: []string{"--kubeconfig=" + kubeconfig + ".missing"}, wantCode: ExitFailed},
		{name: "a component that stops with an error fails", args: []string{"--kubeconfig=" + kubeconfig}, run: fail, wantCode: ExitFailed, wantRan: true},
		{name: "a component that stops cleanly exits 0", args: []string{"--kubeconfig=" + kubeconfig}, wantCode: ExitOK, wantRan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			var stderr bytes.Buffer
			ran := false
			m := Main{
				Name:       "test",
				AddFlags:   func(fs *pflag.FlagSet) { fs.StringVar(&path, "kubeconfig", "", "") },
				Validate:   func() error { return tt.validate },
				Prepare:    func() error { return tt.prepare },
				Kubeconfig: &path,
				Run: func(context.Context, *rest.Config) error {
					ran = true
					return tt.run
				},
				Subcommands: map[string]func(context.Context) error{"check": func(context.Context) error { return tt.sub }},
				Stderr:      &stderr,
			}
			got := m.Exec(context.Background(), tt.args)
			if diff := cmp.Diff(tt.wantCode, got); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRan, ran); diff != "" {
				t.Errorf("ran (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
