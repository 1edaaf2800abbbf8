package kubectlplugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// nativeNames are the built-in workload types the plugin hands to kubectl's own commands. The
// bare "statefulset" and "daemonset" name the add-on's kinds, so the built-in ones are given
// with their group (statefulset.apps) or kubectl's short name (ds).
var nativeNames = map[string]bool{
	"deployment": true, "deployments": true, "deploy": true, "deployment.apps": true, "deployments.apps": true,
	"statefulset.apps": true, "statefulsets.apps": true,
	"daemonset.apps": true, "daemonsets.apps": true, "ds": true,
}

// namesNative tells whether the resource arguments name built-in workloads; it is an error
// to mix them with the add-on's kinds in one command.
func namesNative(args []string) (bool, error) {
	if len(args) == 0 {
		return false, nil
	}
	if !strings.Contains(args[0], "/") {
		return nativeNames[strings.ToLower(args[0])], nil
	}
	native, resources := 0, 0
	for _, a := range args {
		if strings.Contains(a, "=") || !strings.Contains(a, "/") {
			continue // not a resource: set image's CONTAINER=IMAGE, set serviceaccount's name
		}
		resources++
		typ, _, _ := strings.Cut(a, "/")
		if nativeNames[strings.ToLower(typ)] {
			native++
		}
	}
	if native > 0 && native < resources {
		return false, fmt.Errorf("arguments %q mix built-in workloads with the add-on's: run one command for each", args)
	}
	return native > 0, nil
}

// kubectlCommand builds one of kubectl's own commands on the plugin's connection flags.
type kubectlCommand func(f cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command

// orKubectl makes ours hand built-in workloads to kubectl's command of the same name, with
// the flags the user set, so that they behave and print exactly as under kubectl. Flags only
// kubectl's command has (-l, -f, --dry-run, ...) join ours, for built-in workloads only.
func orKubectl(o *Options, ours *cobra.Command, theirs kubectlCommand) *cobra.Command {
	out, errOut := &switchWriter{}, &switchWriter{}
	k := theirs(cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.ConfigFlags)), genericiooptions.IOStreams{In: o.Streams.In, Out: out, ErrOut: errOut})
	// Some of kubectl's commands name their parent in messages; theirs is kubectl.
	(&cobra.Command{Use: "kubectl"}).AddCommand(k)
	own := map[string]bool{}
	ours.Flags().VisitAll(func(fl *pflag.Flag) { own[fl.Name] = true })
	var only []string
	k.Flags().VisitAll(func(fl *pflag.Flag) {
		if own[fl.Name] || (fl.Shorthand != "" && ours.Flags().ShorthandLookup(fl.Shorthand) != nil) {
			return
		}
		// The flag is kubectl's own: set on ours, it sets kubectl's option.
		fl.Usage += " (Deployments, StatefulSets and DaemonSets only.)"
		ours.Flags().AddFlag(fl)
		only = append(only, fl.Name)
	})
	run := ours.RunE
	ours.RunE = func(cmd *cobra.Command, args []string) error {
		native, err := namesNative(args)
		if err != nil {
			return err
		}
		var kubectlOnly []string
		for _, name := range only {
			if cmd.Flags().Changed(name) {
				kubectlOnly = append(kubectlOnly, "--"+name)
			}
		}
		if !native && (len(args) > 0 || len(kubectlOnly) == 0) {
			if len(kubectlOnly) > 0 {
				return fmt.Errorf("%s: only for Deployments, StatefulSets (statefulset.apps) and DaemonSets (daemonset.apps)", strings.Join(kubectlOnly, ", "))
			}
			return run(cmd, args)
		}
		var flags []string
		cmd.Flags().Visit(func(fl *pflag.Flag) {
			if own[fl.Name] && cmd.LocalFlags().Lookup(fl.Name) != nil {
				flags = append(flags, "--"+fl.Name+"="+fl.Value.String())
			}
		})
		if err := k.ParseFlags(flags); err != nil {
			return err
		}
		out.w, errOut.w = cmd.OutOrStdout(), cmd.ErrOrStderr()
		return runKubectl(func() { k.Run(k, args) })
	}
	return ours
}

// kubectlFailed is the message kubectl's commands end with on failure, printed as kubectl
// prints it (which is not always "error: ...").
type kubectlFailed struct{ msg string }

func (k kubectlFailed) Error() string {
	return strings.TrimSuffix(strings.TrimPrefix(k.msg, "error: "), "\n")
}

// message is the failure as kubectl prints it.
func (k kubectlFailed) message() string {
	if k.msg == "" || strings.HasSuffix(k.msg, "\n") {
		return k.msg
	}
	return k.msg + "\n"
}

// runKubectl runs a kubectl command's run and returns its failure as an error. kubectl's commands
// end the process on failure through the handler cmdutil.BehaviorOnFatal sets; the plugin
// turns that into a return here, so that it prints and exits in one place.
func runKubectl(run func()) (err error) {
	cmdutil.BehaviorOnFatal(func(msg string, _ int) { panic(kubectlFailed{msg: msg}) })
	defer cmdutil.DefaultBehaviorOnFatal()
	defer func() {
		if r := recover(); r != nil {
			failed, ok := r.(kubectlFailed)
			if !ok {
				panic(r)
			}
			err = failed
		}
	}()
	run()
	return nil
}

// asKubectl is kubectl's command as it is, for what touches none of the add-on's kinds.
func asKubectl(o *Options, build kubectlCommand) *cobra.Command {
	k := build(cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.ConfigFlags)), o.Streams)
	run := k.Run
	k.Run = nil
	k.RunE = func(cmd *cobra.Command, args []string) error { return runKubectl(func() { run(cmd, args) }) }
	return k
}
