package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
)

// Exit codes; see doc.go.
const (
	ExitOK         = installer.ExitOK
	ExitError      = installer.ExitError
	ExitInvalid    = installer.ExitInvalid
	ExitRefused    = installer.ExitRefused
	ExitRolledBack = installer.ExitRolledBack
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	kubeconfig, context, namespace, release string
	output                                  string
	requestTimeout                          time.Duration
	out, errOut                             io.Writer
	// result is what the command printed with -o json; Run writes it, or the error with it, as
	// the one JSON document on stdout.
	result any
}

func (g *globalOptions) getter() genericclioptions.RESTClientGetter {
	f := genericclioptions.NewConfigFlags(true)
	timeout := g.requestTimeout.String()
	f.KubeConfig, f.Context, f.Namespace, f.Timeout = &g.kubeconfig, &g.context, &g.namespace, &timeout
	return f
}

// validate checks the global flags before any command runs, so that bad input never reaches
// the cluster.
func (g *globalOptions) validate() error {
	var errs field.ErrorList
	if g.output != "text" && g.output != "json" {
		errs = append(errs, field.NotSupported(field.NewPath("--output"), g.output, []string{"text", "json"}))
	}
	if g.requestTimeout <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("--request-timeout"), g.requestTimeout.String(), "must be a positive duration such as 30s"))
	}
	errs = append(errs, installer.ValidateReleaseName(field.NewPath("--release"), g.release)...)
	errs = append(errs, installer.ValidateNamespace(field.NewPath("--namespace"), g.namespace)...)
	if len(errs) > 0 {
		return &installer.InvalidError{Err: errs.ToAggregate()}
	}
	return nil
}

func (g *globalOptions) installer() (*installer.Installer, error) {
	// Progress goes to stderr whatever the output, so that stdout holds only the result (one JSON
	// document with -o json).
	return installer.New(g.getter(), installer.WithProgress(g.errOut))
}

// print writes text() as text, or keeps v for Run to write as the command's one JSON document:
// with the error, if the command then fails.
func (g *globalOptions) print(v any, text func(io.Writer)) error {
	if g.output == "json" {
		g.result = v
		return nil
	}
	text(g.out)
	return nil
}

func newRootCommand(g *globalOptions) *cobra.Command {
	out, errOut := g.out, g.errOut
	root := &cobra.Command{
		Use:               "kruise-addon",
		Short:             "Install, upgrade and remove the kruise workloads add-on on any cluster",
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return g.validate() },
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
	pf.DurationVar(&g.requestTimeout, "request-timeout", installer.DefaultRequestTimeout, "how long one request to the cluster or to a mirror registry may wait for an answer (a registry request, a blob upload included, must finish within it)")
	root.AddCommand(
		newVersionsCommand(g), newPreflightCommand(g), newRenderCommand(g),
		newInstallCommand(g), newUpgradeCommand(g), newUninstallCommand(g),
		newRollbackCommand(g), newUnlockCommand(g), newStatusCommand(g), newBundleCommand(g), newServeCommand(g),
	)
	return root
}

// Run executes the command line and returns the exit code. A cancelled ctx (see
// cmd/kruise-addon: SIGINT and SIGTERM cancel it) stops the command. With -o json, stdout gets
// exactly one JSON document: the command's result, or an errorPayload.
func Run(ctx context.Context, args []string, out, errOut io.Writer) int {
	g := &globalOptions{out: out, errOut: errOut}
	root := newRootCommand(g)
	root.SetArgs(args)
	err := explain(ctx, g, root.ExecuteContext(ctx))
	code := ExitCode(err)
	if g.output == "json" {
		var doc any = g.result
		if err != nil {
			doc = newErrorPayload(err, code, g.result)
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(doc)
	}
	if err != nil && g.output != "json" {
		fmt.Fprintln(errOut, "error:", err)
	}
	return code
}

// errorPayload is the JSON document of a failed command.
type errorPayload struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
	// Refused is set with exit code 3, RolledBack with exit code 4.
	Refused    *installer.RefusedError    `json:"refused,omitempty"`
	RolledBack *installer.RolledBackError `json:"rolledBack,omitempty"`
	// Result is what the command found before it failed, such as preflight's report.
	Result any `json:"result,omitempty"`
}

func newErrorPayload(err error, code int, result any) errorPayload {
	p := errorPayload{Error: err.Error(), ExitCode: code, Result: result}
	var r *installer.RefusedError
	if errors.As(err, &r) {
		p.Refused = r
	}
	var rb *installer.RolledBackError
	if errors.As(err, &rb) {
		p.RolledBack = rb
	}
	return p
}

// explain says why a command stopped when the reason is not in the error itself: a cancelled
// context (a signal), or a request to the cluster or the mirror registry that got no answer
// within --request-timeout.
func explain(ctx context.Context, g *globalOptions, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != context.Canceled {
			return fmt.Errorf("cancelled (%v): %w", cause, err)
		}
		return fmt.Errorf("cancelled: %w", err)
	}
	var timeout *installer.TimeoutError
	if errors.As(err, &timeout) {
		return err
	}
	var noAnswer *bundle.NoAnswerError
	if errors.As(err, &noAnswer) {
		return fmt.Errorf("no answer from the registry within --request-timeout %s: %w", g.requestTimeout, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no answer from the cluster within --request-timeout %s: %w", g.requestTimeout, err)
	}
	return err
}

// ExitCode maps an error to the documented exit code.
func ExitCode(err error) int {
	if isFlagError(err) {
		return ExitInvalid
	}
	return installer.ExitClass(err)
}

// flagError marks cobra's own argument and flag parsing errors.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}
