package installer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/installer/chartsource"
)

// schemaRuns is how often each case is validated: the validator's map order changes per run.
const schemaRuns = 50

func TestSchemaErrorsNameTheFieldAndAreStable(t *testing.T) {
	ch, err := chartsource.Load(filepath.Join("..", "charts", "kruise"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		vals      map[string]any
		wantLines []string
	}{
		{"an unknown workers kind is reported at manager.workers",
			map[string]any{"manager": map[string]any{"workers": map[string]any{"Bad_Kind": 1}}},
			[]string{"- at '/manager/workers': additional properties 'Bad_Kind' not allowed"}},
		{"a bad label key is reported at its map",
			map[string]any{"daemon": map[string]any{"podLabels": map[string]any{"bad key": "x"}}},
			[]string{"- at '/daemon/podLabels': additional properties 'bad key' not allowed"}},
		{"several errors come in one order, each at its own field",
			map[string]any{
				"manager": map[string]any{"replicas": 0, "logLevel": 99, "workers": map[string]any{"Bad_Kind": 1}, "podLabels": map[string]any{"bad key": "x"}},
				"daemon":  map[string]any{"port": 0},
			},
			[]string{
				"- at '/manager/logLevel': maximum: got 99, want 10",
				"- at '/manager/replicas': minimum: got 0, want 1",
				"- at '/manager/workers': additional properties 'Bad_Kind' not allowed",
				"- at '/manager/podLabels': additional properties 'bad key' not allowed",
				"- at '/daemon/port': minimum: got 0, want 1",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]int{}
			for range schemaRuns {
				err := validateSchema(ch, tc.vals)
				var invalid *InvalidError
				if !errors.As(err, &invalid) {
					t.Fatalf("validateSchema: %v, want an InvalidError", err)
				}
				seen[err.Error()]++
			}
			if len(seen) != 1 {
				var msgs []string
				for m, n := range seen {
					msgs = append(msgs, fmt.Sprintf("=== seen %d times:\n%s", n, m))
				}
				t.Fatalf("%d runs gave %d different messages:\n%s", schemaRuns, len(seen), strings.Join(msgs, "\n"))
			}
			for msg := range seen {
				for _, want := range tc.wantLines {
					if !strings.Contains(msg, want) {
						t.Errorf("message lacks %q:\n%s", want, msg)
					}
				}
			}
		})
	}
}

func TestSortSchemaErrors(t *testing.T) {
	in := "kruise:\n- at '/manager': validation failed\n  - at '/manager/workers': b\n  - at '/manager/replicas': a\n    - at '': cause\n- at '/daemon/port': c\n"
	want := "kruise:\n- at '/daemon/port': c\n- at '/manager': validation failed\n  - at '/manager/replicas': a\n    - at '': cause\n  - at '/manager/workers': b\n"
	if got := sortSchemaErrors(in); got != want {
		t.Errorf("sortSchemaErrors:\n%s\nwant:\n%s", got, want)
	}
}

func TestInlineValuesLayerBetweenFilesAndSet(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(file, []byte("manager:\n  logLevel: 2\n  replicas: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    Options
		want map[string]any
	}{
		{"inline values go over a values file",
			Options{ValueFiles: []string{file}, Values: map[string]any{"manager": map[string]any{"logLevel": 4}}},
			map[string]any{"logLevel": 4, "replicas": 2}},
		{"--set goes over inline values",
			Options{Values: map[string]any{"manager": map[string]any{"logLevel": 4}}, Set: []string{"manager.logLevel=6"}},
			map[string]any{"logLevel": int64(6)}},
		{"inline values alone are taken as given",
			Options{Values: map[string]any{"manager": map[string]any{"replicas": 3}}},
			map[string]any{"replicas": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildValues(tc.o, resolved{})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := got["manager"].(map[string]any)
			if m == nil {
				t.Fatalf("no manager values in %v", got)
			}
			for k, want := range tc.want {
				if fmt.Sprint(m[k]) != fmt.Sprint(want) {
					t.Errorf("manager.%s = %v, want %v", k, m[k], want)
				}
			}
		})
	}
}
