package spec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFor(t *testing.T) {
	cases := map[string]struct {
		preset    Preset
		overrides Overrides
		want      Spec
		wantErr   string
	}{
		"small is one replica without a budget": {
			preset: Small,
			want:   Spec{Preset: Small, Replicas: 1, Resources: Resources{"100m", "256Mi", "1", "1Gi"}},
		},
		"an empty preset means small": {
			want: Spec{Preset: Small, Replicas: 1, Resources: Resources{"100m", "256Mi", "1", "1Gi"}},
		},
		"large is HA with a disruption budget": {
			preset: Large,
			want:   Spec{Preset: Large, Replicas: 3, Resources: Resources{"500m", "1Gi", "2", "2Gi"}, PDB: true},
		},
		"custom takes replicas and resources and gets a budget above one replica": {
			preset:    Custom,
			overrides: Overrides{Replicas: 2, Resources: Resources{RequestsCPU: "200m", LimitsMemory: "3Gi"}},
			want:      Spec{Preset: Custom, Replicas: 2, Resources: Resources{"200m", "256Mi", "1", "3Gi"}, PDB: true},
		},
		"overrides on a named preset are refused": {
			preset: Large, overrides: Overrides{Replicas: 5},
			wantErr: "spec: Forbidden: replicas and resources can only be set with --spec custom, not large",
		},
		"an unknown preset is refused with the valid ones": {
			preset:  "medium",
			wantErr: `spec: Unsupported value: "medium": supported values: "small", "large", "custom"`,
		},
		"a request above its limit is refused": {
			preset: Custom, overrides: Overrides{Resources: Resources{RequestsCPU: "2"}},
			wantErr: "resources.requestsCPU: Invalid value: \"2\": must not exceed limitsCPU 1",
		},
		"a quantity that does not parse is refused": {
			preset: Custom, overrides: Overrides{Resources: Resources{LimitsMemory: "lots"}},
			wantErr: "resources.limitsMemory: Invalid value: \"lots\": must be a quantity such as 500m or 1Gi",
		},
		"too many replicas are refused": {
			preset: Custom, overrides: Overrides{Replicas: 11},
			wantErr: "replicas: Invalid value: 11: must be between 1 and 10",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := For(tc.preset, tc.overrides)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecommendAndWarnings(t *testing.T) {
	small, _ := For(Small, Overrides{})
	large, _ := For(Large, Overrides{})
	cases := map[string]struct {
		spec          Spec
		nodes         int
		wantRecommend Preset
		wantWarnings  int
	}{
		"a 49-node cluster gets small, warned only for the single replica": {spec: small, nodes: 49, wantRecommend: Small, wantWarnings: 1},
		"a 50-node cluster on small is warned it outgrew it":               {spec: small, nodes: 50, wantRecommend: Large, wantWarnings: 2},
		"large on a big cluster has no warning":                            {spec: large, nodes: 500, wantRecommend: Large, wantWarnings: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantRecommend, Recommend(tc.nodes)); diff != "" {
				t.Errorf("recommend (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, len(Warnings(tc.spec, tc.nodes))); diff != "" {
				t.Errorf("warnings %v (-want +got):\n%s", Warnings(tc.spec, tc.nodes), diff)
			}
		})
	}
}

func TestValues(t *testing.T) {
	large, _ := For(Large, Overrides{})
	want := map[string]any{"manager": map[string]any{
		"replicas": int64(3),
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "500m", "memory": "1Gi"},
			"limits":   map[string]any{"cpu": "2", "memory": "2Gi"},
		},
		"podDisruptionBudget": map[string]any{"enabled": true, "minAvailable": int64(1)},
	}}
	if diff := cmp.Diff(want, large.Values()); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}
