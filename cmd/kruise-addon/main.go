// Command kruise-addon installs, upgrades and removes the add-on; see installer/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kruise-addon/kruise-addon/installer/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
