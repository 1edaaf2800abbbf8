package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
)

// oneBundleArg takes exactly one argument, the bundle file.
func oneBundleArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return flagError{fmt.Errorf("%s takes one argument, the bundle file (kruise-addon bundle create), got %q", cmd.CommandPath(), args)}
	}
	return nil
}

// readVerified reads and verifies a bundle and, with a public key file, its signature. Every
// failure is bad input: nothing was applied, and the bundle or the key is what to fix.
func readVerified(file, keyFile string) (*bundle.Bundle, error) {
	var key []byte
	if keyFile != "" {
		var err error
		if key, err = os.ReadFile(keyFile); err != nil {
			return nil, &installer.InvalidError{Err: fmt.Errorf("--key: %w", err)}
		}
	}
	b, err := bundle.Read(file)
	if err != nil {
		return nil, &installer.InvalidError{Err: err}
	}
	if key != nil {
		if err := b.VerifySignature(key); err != nil {
			return nil, &installer.InvalidError{Err: err}
		}
	}
	return b, nil
}

// bundleReport is what verify and inspect print: what the bundle holds, checked.
type bundleReport struct {
	File string `json:"file"`
	// Digest is bundle.json's, which a signature signs.
	Digest string                `json:"digest"`
	Chart  bundle.ChartInfo      `json:"chart"`
	Images []bundle.ImageContent `json:"images"`
	Signed bool                  `json:"signed"`
	// SignatureVerified is set when a public key was given and the signature verifies with it.
	SignatureVerified bool `json:"signatureVerified"`
}

func reportOf(b *bundle.Bundle, keyFile string) bundleReport {
	return bundleReport{File: b.File, Digest: b.Digest, Chart: b.Manifest.Chart, Images: b.Images,
		Signed: b.Signature != nil, SignatureVerified: keyFile != ""}
}

func (r bundleReport) signature() string {
	switch {
	case r.SignatureVerified:
		return "signed, the signature verifies with the key given"
	case r.Signed:
		return "signed (give --key to verify the signature)"
	default:
		return "not signed"
	}
}

// newBundleReadCommand is a command that reads and verifies one bundle and prints a report of
// it: verify and inspect.
func newBundleReadCommand(g *globalOptions, use, short, keyHelp string, text func(io.Writer, bundleReport)) *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   use + " <bundle file>",
		Short: short,
		Args:  oneBundleArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := readVerified(args[0], key)
			if err != nil {
				return err
			}
			r := reportOf(b, key)
			return g.print(r, func(w io.Writer) { text(w, r) })
		},
	}
	cmd.Flags().StringVar(&key, "key", "", keyHelp)
	return cmd
}

func newBundleVerifyCommand(g *globalOptions) *cobra.Command {
	return newBundleReadCommand(g, "verify",
		"Check a bundle before it is used: every blob against its digest, every index and manifest down to its layers, the chart's digest, and with --key its signature",
		"PEM public key: the bundle must carry a signature that verifies with it (bundle create --sign-key)",
		func(w io.Writer, r bundleReport) {
			blobs := 0
			for _, ic := range r.Images {
				for _, m := range ic.Manifests {
					blobs += 2 + m.Layers
				}
				if len(ic.Manifests) > 1 {
					blobs++
				}
			}
			fmt.Fprintf(w, "bundle %s verifies: chart %s %s and %d images (%d blobs) as bundle.json %s records them; %s\n",
				r.File, r.Chart.Name, r.Chart.Version, len(r.Images), blobs, r.Digest, r.signature())
		})
}

func newBundleInspectCommand(g *globalOptions) *cobra.Command {
	return newBundleReadCommand(g, "inspect",
		"Show what a bundle holds: the chart, each image with its tag, digest, platforms and size, and whether it is signed (the bundle is verified first)",
		"PEM public key to verify the bundle's signature with",
		func(w io.Writer, r bundleReport) {
			fmt.Fprintf(w, "bundle %s (%s), %s\n", r.File, r.Digest, r.signature())
			fmt.Fprintf(w, "chart %s %s (app %s), sha256:%s\n", r.Chart.Name, r.Chart.Version, r.Chart.AppVersion, r.Chart.Digest)
			for _, ic := range r.Images {
				fmt.Fprintf(w, "image %s@%s (%s), %d bytes\n", ic.Ref(), ic.Digest, rolesString(ic.Roles), ic.Size)
				for _, m := range ic.Manifests {
					fmt.Fprintf(w, "  %s %s, %d layers, %d bytes\n", m.Platform, m.Digest, m.Layers, m.Size)
				}
			}
		})
}
