package manager

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestChartWorkersKindsAreTheManagersFlags keeps the chart's manager.workers kinds and the
// manager's --<kind>-workers flags the same set: the chart renders one flag per kind, and the
// manager refuses to start on a flag it does not know.
func TestChartWorkersKindsAreTheManagersFlags(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "charts", "kruise", "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Manager struct {
				Properties struct {
					Workers struct {
						Properties           map[string]json.RawMessage `json:"properties"`
						AdditionalProperties json.RawMessage            `json:"additionalProperties"`
					} `json:"workers"`
				} `json:"properties"`
			} `json:"manager"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	workers := schema.Properties.Manager.Properties.Workers
	if string(workers.AdditionalProperties) != "false" {
		t.Error("manager.workers must refuse kinds it does not list (additionalProperties: false)")
	}
	var chartKinds []string
	for k := range workers.Properties {
		chartKinds = append(chartKinds, k)
	}
	sort.Strings(chartKinds)

	fs := pflag.NewFlagSet("kruise-manager", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	var flagKinds []string
	fs.VisitAll(func(f *pflag.Flag) {
		if kind, ok := strings.CutSuffix(f.Name, "-workers"); ok {
			flagKinds = append(flagKinds, kind)
		}
	})
	sort.Strings(flagKinds)
	if d := cmp.Diff(flagKinds, chartKinds); d != "" {
		t.Errorf("manager.workers kinds in values.schema.json (-manager's --<kind>-workers flags +schema):\n%s", d)
	}
}
