package kubectlplugin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestCommandSurface: the plugin has kubectl's connection and output flags, and completion for
// the shells kubectl supports.
func TestCommandSurface(t *testing.T) {
	root := NewCommand(NewOptions(genericiooptions.NewTestIOStreamsDiscard()))
	for _, flag := range []string{"kubeconfig", "context", "namespace", "server", "cluster", "user", "token", "request-timeout"} {
		if root.PersistentFlags().Lookup(flag) == nil {
			t.Errorf("no --%s flag", flag)
		}
	}
	if f := root.PersistentFlags().ShorthandLookup("n"); f == nil || f.Name != "namespace" {
		t.Errorf("-n is not --namespace")
	}
	for _, path := range [][]string{
		{"rollout", "pause"}, {"rollout", "resume"}, {"rollout", "restart"}, {"rollout", "undo"},
		{"rollout", "history"}, {"scale"}, {"set", "image"},
	} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("no command %v: %v", path, err)
		}
		if f := cmd.Flags().ShorthandLookup("o"); f == nil || f.Name != "output" {
			t.Errorf("%v has no -o/--output", path)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out bytes.Buffer
		code := RunWith(context.Background(), []string{"completion", shell}, &Options{
			ConfigFlags: NewOptions(genericiooptions.IOStreams{}).ConfigFlags,
			Streams:     genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out},
		})
		if code != 0 || !strings.Contains(out.String(), "kubectl-kruise") {
			t.Errorf("completion %s: exit %d, output %.80q", shell, code, out.String())
		}
	}
}
