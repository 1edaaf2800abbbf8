package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
)

// PasswordEnv holds the mirror registry's password when --registry-password-stdin is not used.
const PasswordEnv = "KRUISE_ADDON_REGISTRY_PASSWORD"

// registryFlags say which mirror registry to use and how to log in to it.
type registryFlags struct {
	host, username string
	passwordStdin  bool
	insecure       bool
}

func (f *registryFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.host, "registry", "", "mirror registry as host[:port][/path], e.g. registry.internal:5000/kruise (loopback hosts use plain HTTP)")
	fl.StringVar(&f.username, "registry-username", "", "basic-auth user for the registry (default: the docker config's credentials; the password comes from $"+PasswordEnv+" or --registry-password-stdin)")
	fl.BoolVar(&f.passwordStdin, "registry-password-stdin", false, "read the registry password from stdin")
	fl.BoolVar(&f.insecure, "insecure-registry", false, "allow plain HTTP and unverified TLS to a registry that is not on loopback")
}

// registry is the registry the flags name; each request to it may take the global
// --request-timeout, as each request to the cluster.
func (f *registryFlags) registry(in io.Reader, g *globalOptions) (bundle.Registry, error) {
	r := bundle.Registry{Host: f.host, Username: f.username, Insecure: f.insecure, Timeout: g.requestTimeout}
	if f.username != "" {
		// Only with a user name: a password left in the environment must not turn the docker
		// config's credentials off.
		r.Password = os.Getenv(PasswordEnv)
	}
	if f.passwordStdin {
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && err != io.EOF {
			return r, fmt.Errorf("read the registry password from stdin: %w", err)
		}
		r.Password = strings.TrimRight(line, "\r\n")
	}
	return r, nil
}

// airgapFlags are install's, upgrade's and render's --bundle and registry flags.
type airgapFlags struct {
	bundle, bundleKey string
	registryFlags
}

func (f *airgapFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.bundle, "bundle", "", "install from this air-gap bundle (kruise-addon bundle create): its chart, and every image from --registry by digest, checked there first")
	cmd.Flags().StringVar(&f.bundleKey, "bundle-key", "", "PEM public key: refuse a bundle that carries no signature verifying with it (bundle create --sign-key)")
	f.registryFlags.register(cmd.Flags())
}

func (f *airgapFlags) apply(cmd *cobra.Command, g *globalOptions, o *installer.Options) error {
	r, err := f.registry(cmd.InOrStdin(), g)
	if err != nil {
		return err
	}
	o.Bundle, o.Registry = f.bundle, r
	if f.bundleKey != "" {
		key, err := os.ReadFile(f.bundleKey)
		if err != nil {
			return &installer.InvalidError{Err: fmt.Errorf("--bundle-key: %w", err)}
		}
		o.BundleKey = string(key)
	}
	return nil
}

// loadChart packages the chart directory, or the embedded chart when dir is empty.
func loadChart(dir string) (bundle.Chart, error) {
	if dir == "" {
		fsys, err := charts.Kruise()
		if err != nil {
			return bundle.Chart{}, err
		}
		return bundle.PackageChart(fsys)
	}
	return bundle.PackageChart(os.DirFS(dir))
}

func newBundleCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Air-gapped installs: create a bundle of the chart and its images, verify and inspect it, push it to a mirror, write a Helm repository",
		Args:  noArgs,
	}
	cmd.AddCommand(newBundleCreateCommand(g), newBundleVerifyCommand(g), newBundleInspectCommand(g), newBundlePushCommand(g), newBundleChartRepoCommand(g))
	return cmd
}

func newBundleCreateCommand(g *globalOptions) *cobra.Command {
	var images, chartDir, out, signKey string
	var server bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Write one archive: the packaged chart, the images it references (OCI layout) and a manifest of digests",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(filepath.Join(images, "index.json")); err != nil {
				return &installer.InvalidError{Err: fmt.Errorf("--images: no OCI image layout at %s (%w); build one with `make images IMAGES=kruise-manager,kruise-daemon`", images, err)}
			}
			c, err := loadChart(chartDir)
			if err != nil {
				return &installer.InvalidError{Err: err}
			}
			var key []byte
			if signKey != "" {
				if key, err = os.ReadFile(signKey); err != nil {
					return &installer.InvalidError{Err: fmt.Errorf("--sign-key: %w", err)}
				}
			}
			if out == "" {
				out = "kruise-addon-" + c.Metadata.Version + ".bundle.tar"
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".bundle-*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			m, err := bundle.Create(cmd.Context(), bundle.CreateOptions{Chart: c, Layout: images, Server: server, SignKey: key}, tmp)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return &installer.InvalidError{Err: err}
			}
			if err := os.Chmod(tmp.Name(), 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			fi, err := os.Stat(out)
			if err != nil {
				return err
			}
			res := struct {
				File     string          `json:"file"`
				Bytes    int64           `json:"bytes"`
				Manifest bundle.Manifest `json:"manifest"`
			}{out, fi.Size(), m}
			return g.print(res, func(w io.Writer) {
				fmt.Fprintf(w, "bundle %s (%d bytes): chart %s %s\n", out, fi.Size(), m.Chart.Name, m.Chart.Version)
				for _, img := range m.Images {
					fmt.Fprintf(w, "image %s@%s (%s; %s)\n", img.Ref(), img.Digest, rolesString(img.Roles), strings.Join(img.Platforms, ", "))
				}
			})
		},
	}
	cmd.Flags().StringVar(&images, "images", "bin/images", "OCI image layout holding the chart's images by repository:tag (make images IMAGES=kruise-manager,kruise-daemon, and kruise-addon with --server)")
	cmd.Flags().BoolVar(&server, "server", false, "add the console API's image (server.image), so that an install from the bundle may set server.enabled")
	cmd.Flags().StringVar(&signKey, "sign-key", "", "PEM private key (ECDSA, ed25519 or RSA, unencrypted) to sign the bundle with: install --bundle-key and bundle verify --key check it")
	cmd.Flags().StringVar(&chartDir, "chart", "", "chart directory (default: the chart embedded in this binary)")
	cmd.Flags().StringVar(&out, "out", "", "the bundle file to write (default: kruise-addon-<chart version>.bundle.tar)")
	return cmd
}

func rolesString(rs []bundle.Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

func newBundlePushCommand(g *globalOptions) *cobra.Command {
	var file, chartRepo string
	rf := &registryFlags{}
	cmd := &cobra.Command{
		Use:   "push",
		Short: "Mirror a bundle's images into a registry, and its chart as a Helm OCI artifact",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return &installer.InvalidError{Err: fmt.Errorf("--bundle: required, the file `kruise-addon bundle create` wrote")}
			}
			r, err := rf.registry(cmd.InOrStdin(), g)
			if err != nil {
				return err
			}
			if errs := r.Validate(nil); len(errs) > 0 {
				return &installer.InvalidError{Err: fmt.Errorf("--registry: %w", errs.ToAggregate())}
			}
			// Open verifies the whole bundle before anything is sent: a bundle that does not
			// verify is refused here, naming the blob, and the registry sees no request.
			b, err := bundle.Open(file)
			if err != nil {
				return &installer.InvalidError{Err: err}
			}
			defer b.Close()
			res, err := bundle.Push(cmd.Context(), b, bundle.PushOptions{Registry: r, ChartRepository: chartRepo})
			if err != nil {
				return err
			}
			return g.print(res, func(w io.Writer) {
				for _, img := range res.Images {
					fmt.Fprintf(w, "pushed %s\n", img)
				}
				if res.Chart != "" {
					fmt.Fprintf(w, "pushed chart %s --version %s\n", res.Chart, res.ChartVersion)
				}
			})
		},
	}
	cmd.Flags().StringVar(&file, "bundle", "", "the bundle file (kruise-addon bundle create)")
	cmd.Flags().StringVar(&chartRepo, "chart-repository", "charts", "path under the registry for the chart (oci://<registry>/<path>/kruise); empty pushes no chart")
	rf.register(cmd.Flags())
	return cmd
}

func newBundleChartRepoCommand(g *globalOptions) *cobra.Command {
	var file, chartDir, out, url, registry string
	cmd := &cobra.Command{
		Use:   "chart-repo",
		Short: "Write a static Helm repository: the packaged chart, pointed at the registry its images are mirrored to, and index.yaml (helm repo add works from any file server)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if errs := (bundle.Registry{Host: registry}).Validate(nil); len(errs) > 0 {
				return &installer.InvalidError{Err: fmt.Errorf("--registry: the registry the images are mirrored to, written into the chart's imageRegistry (the chart names none): %w", errs.ToAggregate())}
			}
			var c bundle.Chart
			switch {
			case file != "" && chartDir != "":
				return &installer.InvalidError{Err: fmt.Errorf("--bundle and --chart: give one, a bundle carries its own chart")}
			case file != "":
				b, err := bundle.Read(file)
				if err != nil {
					return &installer.InvalidError{Err: err}
				}
				if c, err = bundle.MirroredChart(b, registry); err != nil {
					return err
				}
			default:
				l, err := loadChart(chartDir)
				if err != nil {
					return &installer.InvalidError{Err: err}
				}
				if c, err = bundle.RegistryChart(l, registry); err != nil {
					return err
				}
			}
			idx, err := bundle.WriteRepository(out, c, url)
			if err != nil {
				return err
			}
			res := map[string]string{"index": idx, "chart": filepath.Join(out, c.FileName()), "version": c.Metadata.Version}
			return g.print(res, func(w io.Writer) {
				fmt.Fprintf(w, "wrote %s and %s; serve %s, then: helm repo add kruise <url> && helm install kruise kruise/%s --version %s\n",
					res["chart"], idx, out, c.Metadata.Name, c.Metadata.Version)
			})
		},
	}
	cmd.Flags().StringVar(&registry, "registry", "", "registry the images are mirrored to, as host[:port][/path], written into the chart's values (imageRegistry; with --bundle every image by digest, as bundle push does); required")
	cmd.Flags().StringVar(&file, "bundle", "", "take the chart from this bundle")
	cmd.Flags().StringVar(&chartDir, "chart", "", "chart directory (default: the chart embedded in this binary)")
	cmd.Flags().StringVar(&out, "out", "bin/chart-repo", "repository directory; an index.yaml there is kept and the chart added")
	cmd.Flags().StringVar(&url, "url", "", "base URL the repository is served at (default: relative URLs, which helm resolves against the repository's)")
	return cmd
}
