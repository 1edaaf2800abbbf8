package installer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzValues renders the chart with an arbitrary values file, as a console user could send one.
// Rendering must never panic; when the values are accepted, every rendered document must be an
// object with an apiVersion and a kind, the objects must be among those the chart can render
// (no value can add one), and no pod may share the host's process or IPC namespace.
func FuzzValues(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "charts", "kruise", "ci", "*-values.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, filepath.Join("..", "charts", "kruise", "values.yaml"))
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("manager:\n  priorityClassName: \"x\\n      hostPID: true\"\n"))
	f.Add([]byte("daemon:\n  socketLocation: /\n  socketFile: \"a\\n  - name: x\"\n"))
	f.Add([]byte("manager:\n  replicas: 1e12\n  workers:\n    Bad_Kind: 3\n"))
	f.Add([]byte("featureGates: \"KruiseDaemon=false,Bogus=true\"\n"))

	// The kinds the chart can render with some combination of values.
	known := map[string]bool{}
	for _, set := range [][]string{nil, {"manager.podDisruptionBudget.enabled=true", "webhookConfiguration.host=10.0.0.1", "manager.hostNetwork=true"},
		{"server.enabled=true", "server.tlsSecret=tls", "server.tokensSecret=tokens"}} {
		out, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{Set: set})})
		if err != nil {
			f.Fatalf("render with %v: %v", set, err)
		}
		for _, doc := range documents(f, out) {
			known[doc["kind"].(string)] = true
		}
	}

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "values.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{ValueFiles: []string{file}})})
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) && !strings.HasPrefix(err.Error(), "render:") {
				t.Fatalf("neither bad input nor a render failure: %v", err)
			}
			return
		}
		for _, doc := range documents(t, out) {
			kind, _ := doc["kind"].(string)
			if doc["apiVersion"] == nil || kind == "" {
				t.Fatalf("a rendered document has no apiVersion or kind: %v", doc)
			}
			if !known[kind] {
				t.Fatalf("values added a %s the chart never renders", kind)
			}
			if spec, ok := podSpec(doc); ok && (spec["hostPID"] == true || spec["hostIPC"] == true) {
				t.Fatalf("values made %s %v share the host's processes", kind, doc["metadata"])
			}
		}
	})
}

// documents splits a rendered manifest into its non-empty documents.
func documents(tb testing.TB, manifest string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, raw := range strings.Split(manifest, "\n---") {
		doc := map[string]any{}
		if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
			tb.Fatalf("a rendered document does not parse: %v\n%s", err, raw)
		}
		if len(doc) > 0 {
			out = append(out, doc)
		}
	}
	return out
}

// podSpec returns the pod template spec of a workload, or the spec of a Job's template.
func podSpec(doc map[string]any) (map[string]any, bool) {
	spec, _ := doc["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	ps, ok := tmpl["spec"].(map[string]any)
	return ps, ok
}
