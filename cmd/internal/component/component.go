package component

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Exit codes of a component binary.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// Main is what one component binary is made of.
type Main struct {
	// Name names the flag set and the log line when Run stops with an error.
	Name string
	// AddFlags binds the component's options to the flag set.
	AddFlags func(fs *pflag.FlagSet)
	// Validate reports every problem with the parsed options; an error is a usage error.
	Validate func() error
	// Prepare, when set, runs after the logger is set and before the kubeconfig is read; an
	// error is a usage error.
	Prepare func() error
	// Kubeconfig is the path the flags set; empty means in-cluster or the default rules.
	Kubeconfig *string
	// Run runs the component until ctx ends.
	Run func(ctx context.Context, cfg *rest.Config) error
	// Subcommands are run instead of the component when the first argument names one; an
	// error is printed and fails.
	Subcommands map[string]func(ctx context.Context) error
	// Stderr receives usage errors; nil means nowhere.
	Stderr io.Writer
}

// Options are a component's options: flags and their validation.
type Options interface {
	AddFlags(fs *pflag.FlagSet)
	Validate() error
}

// New returns the Main of the component name with options o, the kubeconfig path its flags
// set, and its run; usage errors go to standard error.
func New(name string, o Options, kubeconfig *string, run func(ctx context.Context, cfg *rest.Config) error) Main {
	return Main{Name: name, AddFlags: o.AddFlags, Validate: o.Validate, Kubeconfig: kubeconfig, Run: run, Stderr: os.Stderr}
}

// Main runs m with the process's arguments until SIGINT or SIGTERM, and exits with its code.
func (m Main) Main() {
	os.Exit(m.WithSignals(os.Args[1:]))
}

// WithSignals runs m with args until SIGINT or SIGTERM and returns its exit code.
func (m Main) WithSignals(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return m.Exec(ctx, args)
}

// Exec runs m with args and returns its exit code.
func (m Main) Exec(ctx context.Context, args []string) int {
	if len(args) > 0 {
		if sub, ok := m.Subcommands[args[0]]; ok {
			if err := sub(ctx); err != nil {
				m.print(err)
				return ExitFailed
			}
			return ExitOK
		}
	}
	fs := pflag.NewFlagSet(m.Name, pflag.ContinueOnError)
	m.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		return m.usage(err)
	}
	if err := m.Validate(); err != nil {
		return m.usage(err)
	}
	ctrl.SetLogger(klog.NewKlogr())
	if m.Prepare != nil {
		if err := m.Prepare(); err != nil {
			return m.usage(err)
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if m.Kubeconfig != nil {
		rules.ExplicitPath = *m.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		klog.ErrorS(err, "loading the kubeconfig")
		return ExitFailed
	}
	if err := m.Run(klog.NewContext(ctx, klog.NewKlogr()), cfg); err != nil {
		klog.ErrorS(err, m.Name+" stopped")
		return ExitFailed
	}
	return ExitOK
}

func (m Main) usage(err error) int {
	m.print(err)
	return ExitUsage
}

func (m Main) print(err error) {
	if m.Stderr != nil {
		fmt.Fprintln(m.Stderr, err)
	}
}
