package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// specFlags are the size, placement and values flags of install, upgrade, preflight and render.
type specFlags struct {
	spec, zoneMode, nodeSelector, poolLabel              string
	replicas                                             int32
	requestsCPU, requestsMemory, limitsCPU, limitsMemory string
	nodes, pools, tolerations, valueFiles, set           []string
	setString, setJSON, setFile                          []string
	chart                                                string
	timeout                                              time.Duration
	wait                                                 bool
	excludeUnsupportedNodes                              bool
	daemon                                               bool
	// resetValues, force and install are upgrade's only.
	resetValues, force, install bool
}

func (f *specFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.spec, "spec", "", "manager size: small (under 50 nodes), large (HA) or custom (default small on install; unchanged on upgrade)")
	fl.Int32Var(&f.replicas, "replicas", 0, "manager replicas (--spec custom)")
	fl.StringVar(&f.requestsCPU, "cpu-request", "", "manager CPU request (--spec custom)")
	fl.StringVar(&f.requestsMemory, "memory-request", "", "manager memory request (--spec custom)")
	fl.StringVar(&f.limitsCPU, "cpu-limit", "", "manager CPU limit (--spec custom)")
	fl.StringVar(&f.limitsMemory, "memory-limit", "", "manager memory limit (--spec custom)")
	fl.StringVar(&f.zoneMode, "zone-mode", "", "spread of manager replicas over topology.kubernetes.io/zone: none, preferred, even or required (default: preferred above one replica)")
	fl.StringSliceVar(&f.nodes, "nodes", nil, "run the manager only on these nodes")
	fl.StringSliceVar(&f.pools, "node-pool", nil, "run the manager only on nodes of these pools (see --pool-label)")
	fl.StringVar(&f.poolLabel, "pool-label", placement.DefaultPoolLabel, "node label naming a node's pool")
	fl.StringVar(&f.nodeSelector, "node-selector", "", "run the manager only on nodes matching this label selector, e.g. 'tier in (system),!spot'")
	fl.StringArrayVar(&f.tolerations, "toleration", nil, "extra manager toleration key[=value][:effect], repeatable")
	fl.StringArrayVarP(&f.valueFiles, "values", "f", nil, "values file, repeatable (over the computed values)")
	fl.StringArrayVar(&f.set, "set", nil, "a value as Helm's --set, repeatable (over the values files)")
	fl.StringArrayVar(&f.setString, "set-string", nil, "a STRING value as Helm's --set-string, repeatable (after --set)")
	fl.StringArrayVar(&f.setJSON, "set-json", nil, "a JSON value as Helm's --set-json, e.g. 'manager.podAnnotations={\"a\":\"b\"}', repeatable (before --set)")
	fl.StringArrayVar(&f.setFile, "set-file", nil, "a value read from a file as Helm's --set-file, key=path, repeatable (last)")
	fl.StringVar(&f.chart, "chart", "", "chart directory or .tgz instead of the embedded chart")
	fl.DurationVar(&f.timeout, "timeout", installer.DefaultTimeout, "how long the whole command may take: reading the cluster, preflight, applying and the wait for readiness (a rollback after it may take as long again)")
	fl.BoolVar(&f.wait, "wait", true, "wait for the manager and daemon to be ready; a failure then uninstalls (install) or rolls back (upgrade). --wait=false only applies, for control planes without nodes")
	fl.BoolVar(&f.daemon, "daemon", true, "run kruise-daemon on the nodes; --daemon=false also turns the manager's KruiseDaemon gate off, so ContainerRecreateRequests and ImagePullJobs are refused (default: on at install, unchanged on upgrade)")
	fl.BoolVar(&f.excludeUnsupportedNodes, "exclude-unsupported-nodes", false, "keep the daemon off nodes whose container runtime it cannot use, instead of refusing")
}

// flagPaths name the choices by their flags.
var flagPaths = installer.ChoicePaths{
	Nodes:        field.NewPath("--nodes"),
	NodeSelector: field.NewPath("--node-selector"),
	Tolerations:  field.NewPath("--toleration"),
}

// options turns the flags into library options; changed says which flags the user set, so that
// an upgrade keeps what was not asked to change.
func (f *specFlags) options(cmd *cobra.Command, g *globalOptions) (installer.Options, error) {
	if f.timeout <= 0 {
		return installer.Options{}, &installer.InvalidError{Err: fmt.Errorf("--timeout must be a positive duration such as 5m, not %s", f.timeout)}
	}
	c := installer.Choices{
		ReleaseName: g.release, Namespace: g.namespace,
		ValueFiles: f.valueFiles, Set: f.set, SetString: f.setString, SetJSON: f.setJSON, SetFile: f.setFile,
		ChartPath: f.chart, Timeout: f.timeout,
		ExcludeUnsupportedNodes: f.excludeUnsupportedNodes,
		Wait:                    &f.wait,
		ResetValues:             f.resetValues, Force: f.force, Install: f.install,
	}
	fl := cmd.Flags()
	if fl.Changed("daemon") {
		c.Daemon = &f.daemon
	}
	if f.spec != "" || changed(fl, "replicas", "cpu-request", "memory-request", "cpu-limit", "memory-limit") {
		preset := spec.Preset(f.spec)
		if preset == "" {
			preset = spec.Custom
		}
		c.Spec = &installer.SpecRequest{Preset: preset, Replicas: f.replicas,
			Resources: spec.Resources{RequestsCPU: f.requestsCPU, RequestsMemory: f.requestsMemory, LimitsCPU: f.limitsCPU, LimitsMemory: f.limitsMemory}}
	}
	if c.Spec != nil || changed(fl, "zone-mode", "nodes", "node-pool", "node-selector", "toleration", "pool-label") {
		c.Placement = &installer.PlacementRequest{ZoneMode: placement.ZoneMode(f.zoneMode), Nodes: f.nodes, Pools: f.pools,
			PoolLabel: f.poolLabel, NodeSelector: f.nodeSelector, Tolerations: f.tolerations}
	}
	o, errs := c.Options(flagPaths)
	if len(errs) > 0 {
		return o, flagsInvalid(errs)
	}
	return o, nil
}

// withAirgap is options with the bundle and registry flags' choices; af is nil for a command
// without them.
func (f *specFlags) withAirgap(cmd *cobra.Command, g *globalOptions, af *airgapFlags) (installer.Options, error) {
	o, err := f.options(cmd, g)
	if err != nil || af == nil {
		return o, err
	}
	return o, af.apply(cmd, g, &o)
}

// installerFor reads the input first, then connects to the cluster.
func (g *globalOptions) installerFor(cmd *cobra.Command, f *specFlags, af *airgapFlags) (*installer.Installer, installer.Options, error) {
	o, err := f.withAirgap(cmd, g, af)
	if err != nil {
		return nil, o, err
	}
	i, err := g.installer()
	return i, o, err
}

// flagsInvalid is the bad input of the flags as the CLI words it: every bad node name at once,
// or else the first selector or toleration that does not parse, by its own message.
func flagsInvalid(errs field.ErrorList) error {
	var nodes field.ErrorList
	for _, e := range errs {
		if strings.HasPrefix(e.Field, flagPaths.Nodes.String()) {
			nodes = append(nodes, e)
		}
	}
	if len(nodes) > 0 {
		return &installer.InvalidError{Err: nodes.ToAggregate()}
	}
	return &installer.InvalidError{Err: errors.New(errs[0].Detail)}
}

// changed reports whether the user set any of the flags.
func changed(fl *pflag.FlagSet, names ...string) bool {
	for _, n := range names {
		if fl.Changed(n) {
			return true
		}
	}
	return false
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return flagError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

// command is a subcommand called use, described by short, that takes no arguments and runs run.
func command(use, short string, run func(cmd *cobra.Command) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: noArgs, RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd) }}
}
