package installer

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// Choices are a user's choices for preflight, install, upgrade and render as the CLI's flags
// and the HTTP API's request bodies both carry them, the selector and tolerations still as
// typed. Options turns them into Options: the one translation both front ends call.
type Choices struct {
	ReleaseName, Namespace string
	// Spec is nil to keep the release's current size (small on install).
	Spec *SpecRequest
	// Placement is nil to keep the release's current one (defaults on install).
	Placement *PlacementRequest
	Daemon    *bool
	// ValueFiles, Set and its family are the CLI's; Values the HTTP API's inline values
	// document.
	ValueFiles, Set, SetString, SetJSON, SetFile []string
	Values                                       map[string]any
	ChartPath                                    string
	Timeout                                      time.Duration
	// Wait is on unless set to false (Options.Wait).
	Wait                                        *bool
	ExcludeUnsupportedNodes, ResetValues, Force bool
	// Install makes an upgrade of a release that is not installed an install.
	Install bool
}

// SpecRequest is the manager size: a preset, and with custom, replicas and resources.
type SpecRequest struct {
	Preset    spec.Preset    `json:"preset"`
	Replicas  int32          `json:"replicas,omitempty"`
	Resources spec.Resources `json:"resources,omitempty"`
}

// PlacementRequest is where the manager runs, as the CLI's placement flags take it.
type PlacementRequest struct {
	ZoneMode  placement.ZoneMode `json:"zoneMode,omitempty"`
	Nodes     []string           `json:"nodes,omitempty"`
	Pools     []string           `json:"pools,omitempty"`
	PoolLabel string             `json:"poolLabel,omitempty"`
	// NodeSelector is a label selector, e.g. "tier in (system),!spot".
	NodeSelector string `json:"nodeSelector,omitempty"`
	// Tolerations are key[=value][:effect].
	Tolerations []string `json:"tolerations,omitempty"`
}

// ChoicePaths name the choices in the caller's own words (a flag, a field of a request body),
// for the errors Options returns. A nil Nodes leaves the node names to the command's own
// validation.
type ChoicePaths struct {
	Nodes, NodeSelector, Tolerations *field.Path
}

// Options translates the choices, parsing the node selector and the tolerations; each choice
// that does not parse is one error, named by paths.
func (c Choices) Options(paths ChoicePaths) (Options, field.ErrorList) {
	o := Options{
		ReleaseName: c.ReleaseName, Namespace: c.Namespace,
		Daemon: c.Daemon, ValueFiles: c.ValueFiles, Set: c.Set, SetString: c.SetString, SetJSON: c.SetJSON, SetFile: c.SetFile,
		Values: c.Values, ChartPath: c.ChartPath,
		Timeout: c.Timeout, Wait: c.Wait,
		ExcludeUnsupportedNodes: c.ExcludeUnsupportedNodes, ResetValues: c.ResetValues, Force: c.Force, Install: c.Install,
	}
	if s := c.Spec; s != nil {
		o.Spec = &SpecChoice{Preset: s.Preset, Overrides: spec.Overrides{Replicas: s.Replicas, Resources: s.Resources}}
	}
	p := c.Placement
	if p == nil {
		return o, nil
	}
	var errs field.ErrorList
	if paths.Nodes != nil {
		errs = append(errs, placement.ValidateNodeNames(paths.Nodes, p.Nodes)...)
	}
	po := &placement.Options{ZoneMode: p.ZoneMode, Nodes: p.Nodes, Pools: p.Pools, PoolLabel: p.PoolLabel}
	if po.PoolLabel == "" {
		po.PoolLabel = placement.DefaultPoolLabel
	}
	if p.NodeSelector != "" {
		reqs, err := placement.ParseNodeSelector(p.NodeSelector)
		if err != nil {
			errs = append(errs, field.Invalid(paths.NodeSelector, p.NodeSelector, err.Error()))
		}
		po.Expressions = reqs
	}
	for k, s := range p.Tolerations {
		t, err := placement.ParseToleration(s)
		if err != nil {
			errs = append(errs, field.Invalid(paths.Tolerations.Index(k), s, err.Error()))
			continue
		}
		po.Tolerations = append(po.Tolerations, t)
	}
	o.Placement = po
	return o, errs
}
