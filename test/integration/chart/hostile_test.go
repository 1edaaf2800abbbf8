package chart

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"
)

// hostileStrings are values a console user could send to turn a value into structure: a new
// field of the pod (hostPID), a new list item (a privileged container, a host volume), at every
// indentation a template may put the value at; and YAML's own syntax.
func hostileStrings() []string {
	out := []string{"/", "x: y", "'x', \"y\" # z", "{a: b}", "[a, b]", "\"x\"\n  - name: evil"}
	for indent := 0; indent <= 12; indent += 2 {
		pad := strings.Repeat(" ", indent)
		out = append(out,
			"x\n"+pad+"hostPID: true",
			"x\n"+pad+"- name: evil\n"+pad+"  image: evil\n"+pad+"  securityContext: {privileged: true}",
			// Paths must start with a slash; flags with a dash.
			"/var/run\n"+pad+"- name: host\n"+pad+"  hostPath: {path: /}",
			"--x\n"+pad+"hostPID: true",
		)
	}
	return out
}

// richValues fills every optional string, list and map of the chart, so that the walk meets
// every string that can reach a template, and so that no hostile value flips an empty value
// into a non-empty one (which may rightly change the structure).
func richValues() map[string]any {
	selector := map[string]any{
		"matchLabels":      map[string]any{"control-plane": "controller-manager"},
		"matchExpressions": []any{map[string]any{"key": "example.com/skip", "operator": "NotIn", "values": []any{"yes"}}},
	}
	affinity := map[string]any{
		"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{
				"matchExpressions": []any{map[string]any{"key": "kruise-addon.io/node-pool", "operator": "In", "values": []any{"system"}}},
			}}},
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 10, "preference": map[string]any{
				"matchFields": []any{map[string]any{"key": "metadata.name", "operator": "NotIn", "values": []any{"node-a"}}},
			}}},
		},
		"podAntiAffinity": map[string]any{
			"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 100, "podAffinityTerm": map[string]any{
				"topologyKey": "topology.kubernetes.io/zone", "labelSelector": selector, "namespaces": []any{"kruise-system"},
			}}},
		},
	}
	return values(
		"imageRegistry", "mirror.example.com:5000/kruise",
		"imagePullSecrets", []any{map[string]any{"name": "mirror-pull"}},
		"featureGates", "PodWebhook=true",
		"manager.image.registry", "registry.example.com",
		"manager.image.tag", "v1.2.0",
		"manager.nodeSelector", map[string]any{"kruise-addon.io/node-pool": "system"},
		"manager.affinity", affinity,
		"manager.topologySpreadConstraints", []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}},
		"manager.tolerations", []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule"}},
		"manager.podDisruptionBudget", map[string]any{"enabled": true, "minAvailable": "50%"},
		"manager.workers", map[string]any{"cloneset": 5},
		"manager.extraArgs", []any{"--sync-period=10m"},
		"manager.priorityClassName", "system-cluster-critical",
		"manager.podAnnotations", map[string]any{"example.com/owner": "platform"},
		"manager.podLabels", map[string]any{"team": "platform"},
		"daemon.image.registry", "registry.example.com",
		"daemon.image.tag", "v1.2.0",
		"daemon.socketFile", "containerd/containerd.sock",
		"daemon.nodeSelector", map[string]any{"kubernetes.io/os": "linux"},
		"daemon.affinity", affinity,
		"daemon.tolerations", []any{map[string]any{"operator": "Exists"}, map[string]any{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}},
		"daemon.podAnnotations", map[string]any{"example.com/owner": "nodes"},
		"daemon.podLabels", map[string]any{"team": "nodes"},
		"webhookConfiguration.namespaceSelector", selector,
		"webhookConfiguration.objectSelector", selector,
		"webhookConfiguration.host", "kruise-webhook.example.com",
		"hook.image", map[string]any{"registry": "hooks.example.com", "repository": "kruise-addon/hook", "tag": "v1"},
		"resourceDistribution.excludedNamespaces", []any{"kube-system", "kube-public"},
	)
}

// stringSite is one string of the values that reaches a template: a value, or a map key the
// user chooses (label and annotation keys).
type stringSite struct {
	path  []any // map keys (string) and list indexes (int)
	isKey bool  // the last element of path is a key to rename, not a value to replace
}

// pointer is the site's JSON pointer as schema errors print it; for a key, its map's.
func (s stringSite) pointer() string {
	p := s.path
	if s.isKey {
		p = p[:len(p)-1]
	}
	var b strings.Builder
	escape := strings.NewReplacer("~", "~0", "/", "~1") // RFC 6901
	for _, e := range p {
		b.WriteString("/" + escape.Replace(fmt.Sprint(e)))
	}
	return b.String()
}

func (s stringSite) String() string {
	kind := "value"
	if s.isKey {
		kind = "key"
	}
	var b strings.Builder
	for _, e := range s.path {
		if i, ok := e.(int); ok {
			fmt.Fprintf(&b, "[%d]", i)
			continue
		}
		if b.Len() > 0 {
			b.WriteString(".")
		}
		b.WriteString(fmt.Sprint(e))
	}
	return kind + " " + b.String()
}

// schemaNode is a values.schema.json node with $ref, and anyOf/oneOf of one object, resolved.
type schemaNode = map[string]any

func resolve(root, n schemaNode) schemaNode {
	for n != nil {
		if ref, ok := n["$ref"].(string); ok {
			n, _ = root["definitions"].(map[string]any)[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
			continue
		}
		return n
	}
	return nil
}

// child is the schema of key k under n: a declared property, a patternProperties schema, or
// additionalProperties. userKeys says whether the user chooses the keys of n.
func child(root, n schemaNode, k string) (c schemaNode, userKeys bool) {
	n = resolve(root, n)
	if props, ok := n["properties"].(map[string]any); ok {
		if c, ok := props[k].(map[string]any); ok {
			return c, false
		}
	}
	if pp, ok := n["patternProperties"].(map[string]any); ok {
		for _, c := range pp {
			return c.(map[string]any), true
		}
	}
	if ap, ok := n["additionalProperties"].(map[string]any); ok {
		return ap, true
	}
	return nil, false
}

// stringSites walks v alongside its schema and returns every string value and every key of a
// map whose keys the user chooses.
func stringSites(root, schema schemaNode, v any, path []any) []stringSite {
	var out []stringSite
	at := func(e any) []any { return append(append([]any{}, path...), e) }
	switch x := v.(type) {
	case string:
		out = append(out, stringSite{path: path})
	case []any:
		items, _ := resolve(root, schema)["items"].(map[string]any)
		for i, e := range x {
			out = append(out, stringSites(root, items, e, at(i))...)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c, userKeys := child(root, schema, k)
			if userKeys {
				out = append(out, stringSite{path: at(k), isKey: true})
			}
			out = append(out, stringSites(root, c, x[k], at(k))...)
		}
	}
	return out
}

// deepCopy copies a values tree through JSON, keeping numbers as float64 as Helm reads them.
func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// set replaces the site's value, or renames its key, to s in a copy of vals.
func (site stringSite) set(t *testing.T, vals map[string]any, s string) map[string]any {
	t.Helper()
	out := deepCopy(t, vals)
	var parent any = out
	for _, e := range site.path[:len(site.path)-1] {
		switch p := parent.(type) {
		case map[string]any:
			parent = p[e.(string)]
		case []any:
			parent = p[e.(int)]
		}
	}
	last := site.path[len(site.path)-1]
	switch p := parent.(type) {
	case map[string]any:
		k := last.(string)
		if site.isKey {
			p[s] = p[k]
			delete(p, k)
		} else {
			p[k] = s
		}
	case []any:
		p[last.(int)] = s
	}
	return out
}

// fieldPaths renders vals and returns the path of every field of every object, release and
// hooks alike, keyed by kind and name; a path segment equal to rename's key reads as its value.
func fieldPaths(rel string, rename map[string]string) (sets.Set[string], error) {
	out := sets.New[string]()
	docs := releaseutil.SplitManifests(rel)
	for _, doc := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("decode %q: %w", doc, err)
		}
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			out.Insert(prefix)
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if r, ok := rename[k]; ok {
						k = r
					}
					walk(prefix+"."+strconv.Quote(k), e)
				}
			case []any:
				for i, e := range x {
					walk(prefix+"["+strconv.Itoa(i)+"]", e)
				}
			}
		}
		walk(fmt.Sprintf("%v/%v", obj["kind"], meta["name"]), obj)
	}
	return out, nil
}

func renderedFieldPaths(t *testing.T, vals map[string]any, rename map[string]string, opts ...func(*renderOptions)) (sets.Set[string], error) {
	t.Helper()
	rel, err := renderRelease(t, vals, opts...)
	if err != nil {
		return nil, err
	}
	manifest := rel.Manifest
	for _, h := range rel.Hooks {
		manifest += "\n---\n" + h.Manifest
	}
	return fieldPaths(manifest, rename)
}

// TestHostileStringsNeverBecomeStructure sets every string of the values, one at a time, to
// strings that would inject a field, a list item or the host's root, and requires that the
// schema refuses each naming the field, or that the render has exactly the fields of the benign
// one: the hostile text can only end up as a scalar.
func TestHostileStringsNeverBecomeStructure(t *testing.T) {
	ch := loadChart(t)
	var root schemaNode
	if err := json.Unmarshal(ch.Schema, &root); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	defaults := readValues(t, filepath.Join(chartDir(t), "values.yaml"))
	// The top-level imageRegistry hides each image's own registry, and URL mode the Service, so
	// the walk runs on both sides of each. The CRDs are left out: their template reads no value
	// but crds.managed, and they are most of the render's time.
	baselines := []struct {
		name string
		over map[string]any
	}{
		{"every value set", values("crds.managed", false)},
		{"per-image registries and the Service", values("imageRegistry", "", "webhookConfiguration.host", "", "crds.managed", false)},
	}
	for _, bl := range baselines {
		t.Run(bl.name, func(t *testing.T) {
			base := deepCopy(t, mergeValues(mergeValues(defaults, richValues()), bl.over))
			benign, err := renderedFieldPaths(t, base, nil, withChart(ch))
			if err != nil {
				t.Fatalf("benign render: %v", err)
			}
			sites := stringSites(root, root, base, nil)
			if len(sites) < 60 {
				t.Fatalf("the walk found %d strings in the values; the rich values must reach every one", len(sites))
			}
			for _, site := range sites {
				t.Run(site.String(), func(t *testing.T) {
					for _, h := range hostileStrings() {
						var rename map[string]string
						if site.isKey {
							rename = map[string]string{h: site.path[len(site.path)-1].(string)}
						}
						got, err := renderedFieldPaths(t, site.set(t, base, h), rename, withChart(ch))
						if err != nil {
							msg := err.Error()
							if !strings.Contains(msg, "values don't meet the specifications of the schema") || !strings.Contains(msg, "at '"+site.pointer()+"'") {
								t.Errorf("%q: refused, but not by the schema naming %s:\n%v", h, site.pointer(), err)
							}
							continue
						}
						if added, removed := got.Difference(benign), benign.Difference(got); added.Len()+removed.Len() > 0 {
							t.Errorf("%q is accepted and changes the rendered fields:\nadded %q\nremoved %q", h, sets.List(added), sets.List(removed))
						}
					}
				})
			}
		})
	}
}

// mergeValues deep-merges over onto base: maps merge, everything else is replaced.
func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if om, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}
