// Command gen writes the webhook table to a file, for `make manifests`:
//
//	gen charts/kruise/files/webhooks.yaml
//
// With -desired it prints both webhook configurations instead, built from the table for a
// manager run outside the cluster (caBundle empty: the manager fills it in):
//
//	gen -desired -host 127.0.0.1 -port 9876 | kubectl apply -f -
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
)

func main() {
	desired := flag.Bool("desired", false, "print both webhook configurations to stdout instead of the table")
	host := flag.String("host", "", "with -desired: webhook host (URL mode); empty uses the Service")
	port := flag.Int("port", 9876, "with -desired: webhook port in URL mode")
	namespace := flag.String("namespace", "kruise-system", "with -desired: namespace of the Service")
	podPolicy := flag.String("pod-failure-policy", "Ignore", "with -desired: failurePolicy of the pod webhooks")
	flag.Parse()

	var err error
	switch {
	case *desired:
		err = writeDesired(os.Stdout, configuration.Target{
			Namespace: *namespace, Host: *host, Port: *port,
			FailurePolicyPods: admissionregistrationv1.FailurePolicyType(*podPolicy),
		})
	case flag.NArg() == 1:
		var out []byte
		if out, err = configuration.ChartFile(); err == nil {
			err = os.WriteFile(flag.Arg(0), out, 0o644)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: gen <output file> | gen -desired [-host h -port p]")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func writeDesired(w io.Writer, t configuration.Target) error {
	m, v := configuration.Desired(t)
	m.APIVersion, m.Kind = "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"
	v.APIVersion, v.Kind = "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"
	for i, obj := range []any{m, v} {
		out, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("render configuration: %w", err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}
