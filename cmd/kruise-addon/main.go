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
	// The first SIGINT or SIGTERM cancels the command, which then cleans up (Helm uninstalls a
	// cancelled install, rolls back a cancelled upgrade) and exits 1. Once it has arrived the
	// default handling is back, so a second signal ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
