package main

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kruise-addon/kruise-addon/cmd/internal/component"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
)

func main() { managerMain().Main() }

func run(args []string) int { return managerMain().WithSignals(args) }

// managerMain is the manager, with the uninstall-check subcommand the chart's pre-delete hook runs.
func managerMain() component.Main {
	o := manager.NewOptions()
	m := component.New("kruise-manager", o, &o.Kubeconfig, func(ctx context.Context, cfg *rest.Config) error {
		return manager.Run(ctx, cfg, o)
	})
	m.Subcommands = map[string]func(context.Context) error{"uninstall-check": uninstallCheck}
	return m
}

// uninstallCheck fails while custom resources of the add-on remain.
func uninstallCheck(ctx context.Context) error {
	if err := uninstallgate.RunInCluster(ctx); err != nil {
		return err
	}
	fmt.Println("no custom resources of the add-on remain")
	return nil
}
