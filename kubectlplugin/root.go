package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/scale"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis"
)

// Options are what the commands share: the kubectl connection flags and the streams. Tests set
// PollInterval to follow a rollout more closely; zero means one second.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Streams     genericiooptions.IOStreams
	// PollInterval is how often rollout status reads the workload again.
	PollInterval time.Duration
	// Now is the clock rollout restart stamps the template with; nil means time.Now.
	Now func() time.Time
}

// NewOptions returns options with kubectl's connection flags and the given streams.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{ConfigFlags: genericclioptions.NewConfigFlags(true), Streams: streams, Now: time.Now}
}

// NewCommand builds the kubectl-kruise command tree.
func NewCommand(o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-kruise",
		Short: "Roll out, scale, set, describe, expose, exec into, create from and migrate to the add-on's workloads",
		Long: `kubectl-kruise works on the add-on's workloads as kubectl works on Deployments.

Installed on PATH it runs as "kubectl kruise". Resource types:
  cloneset (clone), statefulset (sts, asts) in apps.kruise.io/v1beta1, daemonset (daemon, ads).
The rollout, scale, set and expose commands hand built-in workloads to kubectl's own:
  deployment (deploy), statefulset.apps, daemonset.apps (ds).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	teachKubectl()
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	o.ConfigFlags.AddFlags(root.PersistentFlags())
	root.AddCommand(newRolloutCommand(o), orKubectl(o, newScaleCommand(o), scale.NewCmdScale), newScaleDownCommand(o), newSetCommand(o), newDescribeCommand(o), newCreateCommand(o), newMigrateCommand(o), newExposeCommand(o), newExecCommand(o))
	return root
}

// Run executes the plugin with args and returns the process exit code: 0 on success, 1 on any
// error, which is printed to stderr as kubectl prints it ("error: ...").
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	return RunWith(ctx, args, NewOptions(streams))
}

// RunWith is Run with the options given, e.g. a fixed clock.
func RunWith(ctx context.Context, args []string, o *Options) int {
	cmd := NewCommand(o)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		var kf kubectlFailed
		if errors.As(err, &kf) {
			fmt.Fprint(o.Streams.ErrOut, kf.message())
		} else {
			fmt.Fprintf(o.Streams.ErrOut, "error: %v\n", err)
		}
		return 1
	}
	return 0
}

// scheme knows the add-on's kinds and the built-in ones the plugin reads.
func scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, apis.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return s, nil
}

// session is one command's connection: a client and the namespace the flags chose.
type session struct {
	c         client.Client
	scheme    *runtime.Scheme
	namespace string
}

func (o *Options) session() (*session, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("resolve namespace: %w", err)
	}
	s, err := scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	return &session{c: c, scheme: s, namespace: ns}, nil
}

// forEach parses args into targets, connects, and runs f on each target in turn. As with
// kubectl, a failure on one target does not stop the others; all failures are returned.
func (o *Options) forEach(args []string, f func(s *session, t target) error) error {
	targets, err := parseTargets(args)
	if err != nil {
		return err
	}
	s, err := o.session()
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range targets {
		if err := f(s, t); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// get reads one workload.
func (s *session) get(ctx context.Context, t target) (client.Object, error) {
	obj := t.kind.newObject()
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: t.name}, obj); err != nil {
		return nil, fmt.Errorf("get %s %q: %w", t.kind.qualified(), t.name, err)
	}
	return obj, nil
}

// printFlags are kubectl's -o flags for a command that reports what it did with operation.
func newPrintFlags(operation string) *genericclioptions.PrintFlags {
	return genericclioptions.NewPrintFlags(operation)
}

// printObject prints obj with the -o the user chose, by default as "<kind>.<group>/<name> <operation>".
func (s *session) printObject(pf *genericclioptions.PrintFlags, operation string, obj client.Object, out io.Writer) error {
	pf.NamePrintFlags.Operation = operation
	p, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	p = &printers.TypeSetterPrinter{Delegate: p, Typer: s.scheme}
	return p.PrintObj(obj.DeepCopyObject(), out)
}
