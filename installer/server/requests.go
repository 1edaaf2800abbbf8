package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
)

// ReleaseRef names a release on a cluster; empty fields take the CLI's defaults.
type ReleaseRef struct {
	ReleaseName string `json:"releaseName,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
}

// release is the release a request names: the request's body embeds its ReleaseRef.
func (r *ReleaseRef) release() *ReleaseRef { return r }

func (r ReleaseRef) withDefaults() ReleaseRef {
	if r.ReleaseName == "" {
		r.ReleaseName = installer.DefaultReleaseName
	}
	if r.Namespace == "" {
		r.Namespace = installer.DefaultNamespace
	}
	return r
}

func (r ReleaseRef) validate() field.ErrorList {
	r = r.withDefaults()
	errs := installer.ValidateReleaseName(field.NewPath("releaseName"), r.ReleaseName)
	return append(errs, installer.ValidateNamespace(field.NewPath("namespace"), r.Namespace)...)
}

// SpecRequest is the manager size: a preset, and with custom, replicas and resources.
type SpecRequest = installer.SpecRequest

// PlacementRequest is where the manager runs, as the CLI's placement flags take it.
type PlacementRequest = installer.PlacementRequest

// ApplyRequest is the body of preflight, install and upgrade.
type ApplyRequest struct {
	ReleaseRef
	// Version is the add-on version to install: one GET /v1/versions lists as installable
	// (this server's own chart, the default, or a bundle's).
	Version string `json:"version,omitempty"`
	// Bundle is the file name of a bundle in the server's bundle directory: its chart is
	// installed and every image runs from Registry by digest, as the CLI's --bundle.
	Bundle string `json:"bundle,omitempty"`
	// Registry is the mirror the bundle's images were pushed to, as the CLI's --registry.
	Registry  *RegistryRequest  `json:"registry,omitempty"`
	Spec      *SpecRequest      `json:"spec,omitempty"`
	Placement *PlacementRequest `json:"placement,omitempty"`
	Daemon    *bool             `json:"daemon,omitempty"`
	// Values go over the computed values, as a values file would.
	Values map[string]any `json:"values,omitempty"`
	// Timeout is a duration such as 5m; default 5m.
	Timeout string `json:"timeout,omitempty"`
	// Wait defaults to true; false only applies (control planes without nodes).
	Wait                    *bool `json:"wait,omitempty"`
	ExcludeUnsupportedNodes bool  `json:"excludeUnsupportedNodes,omitempty"`
	// ResetValues and Force are upgrade's.
	ResetValues bool `json:"resetValues,omitempty"`
	Force       bool `json:"force,omitempty"`
	// Install, on an upgrade, installs a release that is not installed.
	Install bool `json:"install,omitempty"`
}

// RegistryRequest is a mirror registry; without a username the server's own docker
// credentials are used.
type RegistryRequest struct {
	// Host is host[:port][/path].
	Host string `json:"host"`
	// Insecure allows plain HTTP (and unverified TLS) to a host that is not loopback.
	Insecure bool   `json:"insecure,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// UninstallRequest is the body of uninstall.
type UninstallRequest struct {
	ReleaseRef
	DeleteCRDs bool   `json:"deleteCRDs,omitempty"`
	Timeout    string `json:"timeout,omitempty"`
	Wait       *bool  `json:"wait,omitempty"`
}

// RollbackRequest is the body of rollback.
type RollbackRequest struct {
	ReleaseRef
	// ToRevision is the revision to go back to; 0 (or absent) is the one before the latest.
	ToRevision int    `json:"toRevision,omitempty"`
	Timeout    string `json:"timeout,omitempty"`
	Wait       *bool  `json:"wait,omitempty"`
	Force      bool   `json:"force,omitempty"`
}

func (r RollbackRequest) options() (installer.RollbackOptions, error) {
	errs := r.ReleaseRef.validate()
	ref := r.ReleaseRef.withDefaults()
	timeout, terrs := parseTimeout(field.NewPath("timeout"), r.Timeout)
	errs = append(errs, terrs...)
	if r.ToRevision < 0 {
		errs = append(errs, field.Invalid(field.NewPath("toRevision"), r.ToRevision, "must be a revision number of the release, or 0 for the one before the latest"))
	}
	ro := installer.RollbackOptions{ReleaseName: ref.ReleaseName, Namespace: ref.Namespace, ToRevision: r.ToRevision, Timeout: timeout, Wait: r.Wait, Force: r.Force}
	if len(errs) > 0 {
		return ro, &installer.InvalidError{Err: errs.ToAggregate()}
	}
	return ro, nil
}

// decode reads a JSON body strictly: an unknown field (a kubeconfig, a server URL, a chart or
// values file path) is bad input. An empty body is the zero request. The guard bounds the
// body's size; the server's read timeout bounds its time.
func decode(body io.Reader, v any) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("body: more than one JSON document")
	}
	return nil
}

func parseTimeout(p *field.Path, s string) (time.Duration, field.ErrorList) {
	if s == "" {
		return installer.DefaultTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, field.ErrorList{field.Invalid(p, s, "must be a positive duration such as 5m")}
	}
	return d, nil
}

// requestPaths name the choices by their place in an ApplyRequest; its node names are checked
// by the command, as a placement's.
var requestPaths = installer.ChoicePaths{
	NodeSelector: field.NewPath("placement", "nodeSelector"),
	Tolerations:  field.NewPath("placement", "tolerations"),
}

// options turns the request into library options, as the CLI turns its flags; charts are
// the charts the server has, among which version and bundle choose.
func (r ApplyRequest) options(ctx context.Context, charts *charts) (installer.Options, error) {
	errs := r.ReleaseRef.validate()
	ref := r.ReleaseRef.withDefaults()
	ch, berrs, err := charts.choose(ctx, r.Version, r.Bundle)
	if err != nil {
		return installer.Options{}, err
	}
	bundlePath := ch.bundle
	errs = append(errs, berrs...)
	var registry bundle.Registry
	switch {
	case r.Registry != nil && bundlePath == "" && len(berrs) == 0:
		errs = append(errs, field.Required(field.NewPath("bundle"), "registry mirrors a bundle's images: name the bundle it was pushed from (GET /v1/versions lists them)"))
	case r.Registry == nil && bundlePath != "":
		errs = append(errs, field.Required(field.NewPath("registry"), "a bundle's images run from a mirror registry: give the registry the bundle was pushed to"))
	case r.Registry != nil:
		registry = bundle.Registry{Host: r.Registry.Host, Insecure: r.Registry.Insecure, Username: r.Registry.Username, Password: r.Registry.Password}
		errs = append(errs, registry.Validate(field.NewPath("registry"))...)
	}
	timeout, terrs := parseTimeout(field.NewPath("timeout"), r.Timeout)
	errs = append(errs, terrs...)
	o, cerrs := installer.Choices{
		ReleaseName: ref.ReleaseName, Namespace: ref.Namespace,
		Spec: r.Spec, Placement: r.Placement, Daemon: r.Daemon, Values: r.Values,
		Timeout: timeout, Wait: r.Wait,
		ExcludeUnsupportedNodes: r.ExcludeUnsupportedNodes, ResetValues: r.ResetValues, Force: r.Force, Install: r.Install,
	}.Options(requestPaths)
	errs = append(errs, cerrs...)
	o.Bundle, o.Registry, o.ChartPath = bundlePath, registry, ch.chartPath
	if bundlePath != "" {
		// The installer checks the signature before it reads the bundle's chart.
		o.BundleKey = charts.bundleKey
	}
	if r.Version != "" || r.Bundle != "" {
		// Preflight judges the chosen chart's version.
		o.AddonVersion = ch.version
	}
	if len(errs) > 0 {
		return o, &installer.InvalidError{Err: errs.ToAggregate()}
	}
	return o, nil
}

// checkedOptions is options, refused at the request (checkOffline) when they break what needs
// no cluster to refuse; install, upgrade and preflight all take them so.
func (r ApplyRequest) checkedOptions(ctx context.Context, charts *charts) (installer.Options, error) {
	o, err := r.options(ctx, charts)
	if err != nil {
		return o, err
	}
	return o, checkOffline(o)
}

// schemaPath is a values schema error's JSON pointer, as the chart's validator writes it.
var schemaPath = regexp.MustCompile(`at '(/[^']*)?'`)

// checkOffline refuses at the request what needs no cluster to refuse (names, choices, the
// values against the chart's schema), naming the request's fields: a schema error's
// '/manager/replicas' becomes values.manager.replicas.
func checkOffline(o installer.Options) error {
	err := installer.CheckOffline(o)
	if err == nil {
		return nil
	}
	msg := schemaPath.ReplaceAllStringFunc(err.Error(), func(m string) string {
		p := schemaPath.FindStringSubmatch(m)[1]
		return "at " + strings.TrimSuffix("values"+strings.ReplaceAll(p, "/", "."), ".")
	})
	return &installer.InvalidError{Err: errors.New(strings.TrimPrefix(msg, "invalid input: "))}
}

func (r UninstallRequest) options() (installer.UninstallOptions, error) {
	errs := r.ReleaseRef.validate()
	ref := r.ReleaseRef.withDefaults()
	timeout, terrs := parseTimeout(field.NewPath("timeout"), r.Timeout)
	errs = append(errs, terrs...)
	if len(errs) > 0 {
		return installer.UninstallOptions{}, &installer.InvalidError{Err: errs.ToAggregate()}
	}
	uo := installer.UninstallOptions{ReleaseName: ref.ReleaseName, Namespace: ref.Namespace, DeleteCRDs: r.DeleteCRDs}
	uo.Timeout, uo.Wait = timeout, r.Wait
	return uo, nil
}
