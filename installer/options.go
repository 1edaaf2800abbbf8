package installer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// Defaults.
const (
	DefaultReleaseName = "kruise-addon"
	DefaultNamespace   = "kruise-system"
	DefaultTimeout     = 5 * time.Minute
	// FieldManager owns what the installer applies server-side (CRDs before an upgrade).
	FieldManager = facts.FieldManager
	// NamespaceLabel marks the install namespace; the pod webhooks skip it.
	NamespaceLabelKey, NamespaceLabelValue = "control-plane", "openkruise"
)

// Options are what a user chooses for install, upgrade and preflight.
type Options struct {
	ReleaseName string `json:"releaseName,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	// Spec is the preset; nil keeps the release's current one on upgrade (small on install).
	Spec *SpecChoice `json:"spec,omitempty"`
	// Placement is nil to keep the release's current one on upgrade (defaults on install).
	Placement *placement.Options `json:"placement,omitempty"`
	// Daemon, when set, turns kruise-daemon on or off (daemon.enabled); off also turns the
	// manager's KruiseDaemon gate off. nil keeps the chart's (or the release's) choice.
	Daemon *bool `json:"daemon,omitempty"`
	// ValueFiles and Set (Helm strvals) go over the values the installer computes; SetJSON,
	// Set, SetString and SetFile apply in that order over the files, as Helm's --set-json,
	// --set, --set-string and --set-file do. SetFile reads local files: the CLI's only.
	ValueFiles []string `json:"valueFiles,omitempty"`
	Set        []string `json:"set,omitempty"`
	SetString  []string `json:"setString,omitempty"`
	SetJSON    []string `json:"setJSON,omitempty"`
	SetFile    []string `json:"setFile,omitempty"`
	// Values go over the values files and under Set: a values document given inline, as the
	// HTTP API takes it (which never reads a file named by its caller).
	Values map[string]any `json:"values,omitempty"`
	// ChartPath overrides the embedded chart (a directory or a .tgz).
	ChartPath string `json:"chartPath,omitempty"`
	// Bundle is an air-gap bundle (`kruise-addon bundle create`): its chart is installed, and
	// every image (hooks included) runs from Registry by digest, after a check that Registry
	// holds each one. Excludes ChartPath; needs Registry.
	Bundle string `json:"bundle,omitempty"`
	// BundleKey is a PEM public key: the bundle must carry a signature of its bundle.json that
	// verifies with it (`kruise-addon bundle create --sign-key`), or nothing is done. Empty
	// checks no signature; the bundle's content is verified either way.
	BundleKey string `json:"bundleKey,omitempty"`
	// Registry is the mirror the bundle's images were pushed to.
	Registry bundle.Registry `json:"registry,omitzero"`
	// Timeout bounds the whole install or upgrade: reading the cluster, preflight, the Helm
	// action and the wait for readiness. A failed upgrade's rollback may take up to Timeout
	// again.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Wait, on unless set to false, waits for every component to be ready (an uninstall: for
	// the release's objects to go), and undoes a command that fails. Off only applies, without
	// automatic rollback: for control planes without nodes, such as `make dev-up`. It is the
	// CLI's --wait and the HTTP API's wait, unchanged on the way to the Helm action.
	Wait *bool `json:"wait,omitempty"`
	// ResetValues and Force are Helm's upgrade flags; Install makes an upgrade of a release
	// that is not installed an install, as Helm's upgrade --install.
	ResetValues bool `json:"resetValues,omitempty"`
	Install     bool `json:"install,omitempty"`
	Force       bool `json:"force,omitempty"`
	// ExcludeUnsupportedNodes keeps the daemon off nodes whose runtime it cannot use.
	ExcludeUnsupportedNodes bool `json:"excludeUnsupportedNodes,omitempty"`
	// AddonVersion overrides the version preflight checks (default: the chart's appVersion).
	AddonVersion string `json:"addonVersion,omitempty"`
}

// waits is Wait with its default: on.
func (o Options) waits() bool { return o.Wait == nil || *o.Wait }

// SpecChoice is a preset with the user's overrides.
type SpecChoice struct {
	Preset    spec.Preset    `json:"preset"`
	Overrides spec.Overrides `json:"overrides"`
}

func (o Options) withDefaults() Options {
	if o.ReleaseName == "" {
		o.ReleaseName = DefaultReleaseName
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// withInstallDefaults also picks the small spec and default placement when none is given, as a
// fresh install does.
func (o Options) withInstallDefaults() Options {
	o = o.withDefaults()
	if o.Spec == nil {
		o.Spec = &SpecChoice{Preset: spec.Small}
	}
	if o.Placement == nil {
		o.Placement = &placement.Options{}
	}
	return o
}

// validate checks the names Helm would only reject after the cluster was contacted.
func (o Options) validate() error {
	errs := ValidateReleaseName(field.NewPath("releaseName"), o.ReleaseName)
	errs = append(errs, ValidateNamespace(field.NewPath("namespace"), o.Namespace)...)
	if o.Timeout < 0 {
		errs = append(errs, field.Invalid(field.NewPath("timeout"), o.Timeout.String(), "must be a positive duration such as 5m"))
	}
	if len(errs) > 0 {
		return &InvalidError{Err: errs.ToAggregate()}
	}
	return nil
}

// ValidateReleaseName checks a release name by Helm's rules: at most 53 characters of
// lower-case letters, digits, '-' and '.', starting and ending with a letter or digit.
func ValidateReleaseName(path *field.Path, name string) field.ErrorList {
	if err := chartutil.ValidateReleaseName(name); err != nil {
		return field.ErrorList{field.Invalid(path, name, "must be at most 53 characters of lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, e.g. kruise-addon")}
	}
	return nil
}

// ValidateNamespace checks a namespace name (a DNS-1123 label).
func ValidateNamespace(path *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// withDeadline bounds ctx by timeout; when the deadline passes, context.Cause(ctx) is a
// *TimeoutError. The cancel function takes the cause of an earlier end (a lost lock).
func withDeadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelCauseFunc) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &TimeoutError{Timeout: timeout})
	return ctx, func(cause error) {
		cancelCause(cause)
		cancel()
	}
}

// remaining is what is left of ctx's deadline, at most d: Helm's own timeout then ends with
// the command's.
func remaining(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return min(d, max(time.Until(dl), 0))
	}
	return d
}

// stopped says why when ctx ended before the command finished (its timeout, or a
// cancellation such as a signal), whichever call noticed it first.
func stopped(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}
