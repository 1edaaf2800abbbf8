package installer

import (
	"fmt"
	"sort"
	"strings"

	"os"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// resolved are the validated choices behind a set of values.
type resolved struct {
	spec      *spec.Spec
	placement *placement.Options
}

// resolve validates the spec and placement choices; either may be nil (unchanged).
func resolve(o Options) (resolved, error) {
	var r resolved
	if o.Spec != nil {
		s, err := spec.For(o.Spec.Preset, o.Spec.Overrides)
		if err != nil {
			return r, &InvalidError{Err: err}
		}
		r.spec = &s
	}
	if o.Placement != nil {
		if errs := placement.Validate(*o.Placement); len(errs) > 0 {
			return r, &InvalidError{Err: errs.ToAggregate()}
		}
		replicas := int32(1)
		if r.spec != nil {
			replicas = r.spec.Replicas
		}
		p := o.Placement.Default(replicas)
		r.placement = &p
	}
	return r, nil
}

// valuesOf resolves o's choices and builds the values they give.
func valuesOf(o Options) (resolved, map[string]any, error) {
	r, err := resolve(o)
	if err != nil {
		return r, nil, err
	}
	vals, err := buildValues(o, r)
	return r, vals, err
}

// buildValues layers, lowest first: the namespace, the spec, the placement, the daemon toggle,
// the values files, inline Values and --set. The chart's defaults sit under all of them when Helm coalesces.
func buildValues(o Options, r resolved) (map[string]any, error) {
	out := map[string]any{"installation": map[string]any{"namespace": o.Namespace}}
	if r.spec != nil {
		out = merge(out, r.spec.Values())
	}
	if r.placement != nil {
		pv, err := r.placement.Values()
		if err != nil {
			return nil, err
		}
		out = merge(out, pv)
	}
	if o.Daemon != nil {
		out = merge(out, map[string]any{"daemon": map[string]any{"enabled": *o.Daemon}})
	}
	user, err := (&values.Options{ValueFiles: o.ValueFiles}).MergeValues(nil)
	if err != nil {
		return nil, &InvalidError{Err: fmt.Errorf("values: %w", err)}
	}
	// --set applies onto the files and inline values together, as Helm applies it onto files.
	user = merge(user, o.Values)
	if err := applySets(o, user); err != nil {
		return nil, err
	}
	return merge(out, user), nil
}

// validateSchema checks the values against the chart's values.schema.json, as Helm would, but
// before anything touches the cluster. The validator walks objects in map order, so it lists
// the errors of one object in a different order on every run; they are sorted, so that the same
// values always give the same message. (It also reports a propertyNames failure at whichever
// path it visited last, which is why the chart's schema checks map keys with
// patternProperties only.)
func validateSchema(ch *chart.Chart, vals map[string]any) error {
	coalesced, err := chartutil.CoalesceValues(ch, vals)
	if err != nil {
		return &InvalidError{Err: fmt.Errorf("values: %w", err)}
	}
	if err := chartutil.ValidateAgainstSchema(ch, coalesced); err != nil {
		return &InvalidError{Err: fmt.Errorf("values do not match the chart's schema: %s", sortSchemaErrors(err.Error()))}
	}
	return nil
}

// configNamespace is the daemon config namespace vals choose, over the chart's default.
func configNamespace(ch *chart.Chart, vals map[string]any) string {
	coalesced, err := chartutil.CoalesceValues(ch, vals)
	if err != nil {
		return ""
	}
	v, _ := lookup(coalesced, "daemon", "configNamespace")
	s, _ := v.(string)
	return s
}

// validateConfigNamespace refuses a system namespace, or the install namespace, as the daemon
// config namespace: no cluster makes those values right, so they are bad input rather than a
// preflight verdict.
func validateConfigNamespace(ch *chart.Chart, vals map[string]any, namespace string) error {
	const fix = "set it to a namespace that does not exist yet (the default is kruise-daemon-config)"
	switch ns := configNamespace(ch, vals); {
	case preflight.IsSystemNamespace(ns):
		return invalid("%s: %q is a system namespace, where the manager would manage Secrets and the daemon read them; %s",
			preflight.ConfigNamespaceValue, ns, fix)
	case ns == namespace:
		return invalid("%s; %s", preflight.InstallNamespaceMessage(ns), fix)
	}
	return nil
}

// sortSchemaErrors orders the lines of Helm's schema error tree ("- at '/a': ...", causes
// indented under their error) among their siblings, keeping each line's causes under it.
func sortSchemaErrors(msg string) string {
	type node struct {
		line     string
		children []*node
	}
	root := &node{}
	stack := []*node{root}
	indents := []int{-1}
	for _, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		// A chart's header ("kruise:") holds the bullets at its own indentation.
		trimmed := strings.TrimLeft(line, " ")
		indent := 2 * (len(line) - len(trimmed))
		if strings.HasPrefix(trimmed, "- ") {
			indent++
		}
		for len(indents) > 1 && indent <= indents[len(indents)-1] {
			stack, indents = stack[:len(stack)-1], indents[:len(indents)-1]
		}
		n := &node{line: line}
		parent := stack[len(stack)-1]
		parent.children = append(parent.children, n)
		stack, indents = append(stack, n), append(indents, indent)
	}
	var b strings.Builder
	var write func(n *node)
	write = func(n *node) {
		sort.SliceStable(n.children, func(i, j int) bool { return n.children[i].line < n.children[j].line })
		for _, c := range n.children {
			b.WriteString(c.line + "\n")
			write(c)
		}
	}
	write(root)
	return b.String()
}

// merge deep-merges b over a; maps merge, everything else is replaced.
func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// lookup reads a nested value such as manager.replicas.
func lookup(m map[string]any, path ...string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// validateFeatureGates refuses featureGates naming a gate the add-on does not know, or turning on
// one it does not carry out, before anything is applied: the manager would refuse to start.
func validateFeatureGates(ch *chart.Chart, vals map[string]any) error {
	coalesced, err := chartutil.CoalesceValues(ch, vals)
	if err != nil {
		return &InvalidError{Err: fmt.Errorf("values: %w", err)}
	}
	v, _ := lookup(coalesced, "featureGates")
	s, _ := v.(string)
	if strings.TrimSpace(s) == "" {
		return nil
	}
	g := features.NewGate()
	if err := g.Set(s); err != nil {
		return invalid("featureGates: %v", err)
	}
	return nil
}

// applySets applies the --set family onto the user's values in Helm's order: --set-json,
// --set, --set-string, --set-file. A bad one is bad input named by its flag.
func applySets(o Options, user map[string]any) error {
	readFile := func(rs []rune) (any, error) {
		b, err := os.ReadFile(string(rs))
		return string(b), err
	}
	sets := []struct {
		flag  string
		items []string
		parse func(string, map[string]any) error
	}{
		{"--set-json", o.SetJSON, strvals.ParseJSON},
		{"--set", o.Set, strvals.ParseInto},
		{"--set-string", o.SetString, strvals.ParseIntoString},
		{"--set-file", o.SetFile, func(s string, m map[string]any) error { return strvals.ParseIntoFile(s, m, readFile) }},
	}
	for _, set := range sets {
		for _, s := range set.items {
			if err := set.parse(s, user); err != nil {
				return &InvalidError{Err: fmt.Errorf("values: failed parsing %s data: %w", set.flag, err)}
			}
		}
	}
	return nil
}
