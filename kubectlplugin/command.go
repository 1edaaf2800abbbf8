package kubectlplugin

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workloadCommand is a subcommand that acts on each workload its arguments name, in turn, and
// prints what it did with kubectl's -o flags.
type workloadCommand struct {
	use, short, example string
	// flags binds the command's own flags; nil means none.
	flags func(fs *pflag.FlagSet)
	// targets checks the flags and picks the workload arguments out of args, before any
	// connection; nil takes every argument as a workload.
	targets func(args []string) ([]string, error)
	// each acts on one workload.
	each func(a action, t target) error
}

// action is what one workload's turn of a workloadCommand has at hand.
type action struct {
	ctx context.Context
	*session
	pf  *genericclioptions.PrintFlags
	out io.Writer
}

// print prints obj as the user chose, by default as "<kind>.<group>/<name> <operation>".
func (a action) print(operation string, obj client.Object) error {
	return a.printObject(a.pf, operation, obj, a.out)
}

// parentCommand is the command name that only groups subs: run alone, it says which
// subcommands there are (listed by names).
func parentCommand(name, short, names string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name + " SUBCOMMAND",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("%s needs a subcommand: %s", name, names)
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// checkRevision refuses, before any connection, a negative value v of the revision flag
// named flag; 0 means zeroMeans, and other revision numbers come from source.
func checkRevision(flag string, v *int64, zeroMeans, source string) func(args []string) ([]string, error) {
	return func(args []string) ([]string, error) {
		if *v < 0 {
			return nil, fmt.Errorf("invalid --%s %d: must be 0 (%s) or a revision number from %s", flag, *v, zeroMeans, source)
		}
		return args, nil
	}
}

// command builds the cobra command of w.
func (w workloadCommand) command(o *Options) *cobra.Command {
	pf := newPrintFlags("")
	cmd := &cobra.Command{Use: w.use, Short: w.short, Example: w.example}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if w.targets != nil {
			var err error
			if args, err = w.targets(args); err != nil {
				return err
			}
		}
		return o.forEach(args, func(s *session, t target) error {
			return w.each(action{ctx: cmd.Context(), session: s, pf: pf, out: cmd.OutOrStdout()}, t)
		})
	}
	if w.flags != nil {
		w.flags(cmd.Flags())
	}
	pf.AddFlags(cmd)
	return cmd
}
