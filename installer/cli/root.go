package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/installer"
)

// Exit codes; see doc.go.
const (
	ExitOK         = 0
	ExitError      = 1
	ExitInvalid    = 2
	ExitRefused    = 3
	ExitRolledBack = 4
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	kubeconfig, context, namespace, release string
	output                                  string
	out, errOut                             io.Writer
}

func (g *globalOptions) getter() genericclioptions.RESTClientGetter {
	f := genericclioptions.NewConfigFlags(true)
	f.KubeConfig, f.Context, f.Namespace = &g.kubeconfig, &g.context, &g.namespace
	return f
}

func (g *globalOptions) installer() (*installer.Installer, error) {
	progress := g.errOut
	if g.output == "json" {
		progress = g.errOut // keep stdout parseable
	}
	return installer.New(g.getter(), installer.WithProgress(progress))
}

// print writes v as JSON, or text() as text.
func (g *globalOptions) print(v any, text func(io.Writer)) error {
	if g.output == "json" {
		enc := json.NewEncoder(g.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(g.out)
	return nil
}

// NewRootCommand builds the kruise-addon command tree writing to out and errOut.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	g := &globalOptions{out: out, errOut: errOut}
	root := &cobra.Command{
		Use:           "kruise-addon",
		Short:         "Install, upgrade and remove the kruise workloads add-on on any cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if g.output != "text" && g.output != "json" {
				return &installer.InvalidError{Err: fmt.Errorf("--output must be text or json, not %q", g.output)}
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.SetOut(out)
	root.SetErr(errOut)
	pf := root.PersistentFlags()
	pf.StringVar(&g.kubeconfig, "kubeconfig", "", "path to the kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	pf.StringVar(&g.context, "context", "", "kubeconfig context to use")
	pf.StringVarP(&g.namespace, "namespace", "n", installer.DefaultNamespace, "namespace of the add-on and its release")
	pf.StringVar(&g.release, "release", installer.DefaultReleaseName, "Helm release name")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	root.AddCommand(
		newVersionsCommand(g), newPreflightCommand(g), newRenderCommand(g),
		newInstallCommand(g), newUpgradeCommand(g), newUninstallCommand(g),
		newUnlockCommand(g), newStatusCommand(g),
	)
	return root
}

// Run executes the command line and returns the exit code.
func Run(ctx context.Context, args []string, out, errOut io.Writer) int {
	root := NewRootCommand(out, errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitCode(err)
	output, _ := root.PersistentFlags().GetString("output")
	if output == "json" {
		payload := map[string]any{"error": err.Error(), "exitCode": code}
		var r *installer.RefusedError
		if errors.As(err, &r) {
			payload["refused"] = r
		}
		var rb *installer.RolledBackError
		if errors.As(err, &rb) {
			payload["rolledBack"] = rb
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(payload)
	} else {
		fmt.Fprintln(errOut, "error:", err)
	}
	return code
}

// ExitCode maps an error to the documented exit code.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case installer.IsInvalid(err), isFlagError(err):
		return ExitInvalid
	case installer.IsRefused(err):
		return ExitRefused
	case installer.IsRolledBack(err):
		return ExitRolledBack
	}
	return ExitError
}

// flagError marks cobra's own argument and flag parsing errors.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}
