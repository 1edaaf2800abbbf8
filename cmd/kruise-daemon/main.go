// Command kruise-daemon is the add-on's node agent: image pre-pull, container recreate and
// runtime container metadata for the node it runs on.
package main

import (
	"context"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kruise-addon/kruise-addon/cmd/internal/component"
	"github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/features"
)

func main() { daemonMain().Main() }

func run(args []string) int { return daemonMain().WithSignals(args) }

// daemonMain is the daemon: its feature gates are settled by their dependencies before it starts.
func daemonMain() component.Main {
	o := daemon.NewOptions()
	m := component.New("kruise-daemon", o, &o.Kubeconfig, func(ctx context.Context, cfg *rest.Config) error {
		return daemon.Run(ctx, cfg, o, nil)
	})
	m.Prepare = func() error {
		changed, err := features.ApplyDependencies(o.Gates)
		if err == nil && len(changed) > 0 {
			klog.InfoS("feature gates changed by their dependencies", "gates", changed)
		}
		return err
	}
	return m
}
