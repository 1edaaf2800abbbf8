package installer

import (
	"time"

	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// Defaults.
const (
	DefaultReleaseName = "kruise-addon"
	DefaultNamespace   = "kruise-system"
	DefaultTimeout     = 5 * time.Minute
	// FieldManager owns what the installer applies server-side (CRDs before an upgrade).
	FieldManager = "kruise-addon"
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
	// ValueFiles and Set (Helm strvals) go over the values the installer computes.
	ValueFiles []string `json:"valueFiles,omitempty"`
	Set        []string `json:"set,omitempty"`
	// ChartPath overrides the embedded chart (a directory or a .tgz).
	ChartPath string        `json:"chartPath,omitempty"`
	Timeout   time.Duration `json:"timeout,omitempty"`
	// NoWait applies without waiting for readiness and so without automatic rollback; for
	// control planes without nodes, such as `make dev-up`.
	NoWait bool `json:"noWait,omitempty"`
	// ResetValues and Force are Helm's upgrade flags.
	ResetValues bool `json:"resetValues,omitempty"`
	Force       bool `json:"force,omitempty"`
	// ExcludeUnsupportedNodes keeps the daemon off nodes whose runtime it cannot use.
	ExcludeUnsupportedNodes bool `json:"excludeUnsupportedNodes,omitempty"`
	// AddonVersion overrides the version preflight checks (default: the chart's appVersion).
	AddonVersion string `json:"addonVersion,omitempty"`
}

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
