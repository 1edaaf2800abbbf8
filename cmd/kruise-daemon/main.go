// Command kruise-daemon is the add-on's node agent: image pre-pull, container recreate and
// runtime container metadata for the node it runs on.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/features"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := daemon.NewOptions()
	fs := pflag.NewFlagSet("kruise-daemon", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctrl.SetLogger(klog.NewKlogr())
	changed, err := features.ApplyDependencies(o.Gates)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if len(changed) > 0 {
		klog.InfoS("feature gates changed by their dependencies", "gates", changed)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		klog.ErrorS(err, "loading the kubeconfig")
		return 1
	}
	if err := daemon.Run(klog.NewContext(ctx, klog.NewKlogr()), cfg, o, nil); err != nil {
		klog.ErrorS(err, "kruise-daemon stopped")
		return 1
	}
	return 0
}
