// Command gen writes the webhook table to the file named by its argument, for `make manifests`.
package main

import (
	"fmt"
	"os"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen <output file>")
		os.Exit(2)
	}
	out, err := configuration.ChartFile()
	if err == nil {
		err = os.WriteFile(os.Args[1], out, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "write webhook table: %v\n", err)
		os.Exit(1)
	}
}
