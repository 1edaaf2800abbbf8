package installer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

func TestChoicesOptions(t *testing.T) {
	paths := ChoicePaths{Nodes: field.NewPath("nodes"), NodeSelector: field.NewPath("selector"), Tolerations: field.NewPath("tolerations")}
	cases := map[string]struct {
		in         Choices
		paths      ChoicePaths
		want       Options
		wantFields []string
	}{
		"no spec and no placement keep the release's, and Wait passes through unchanged": {
			in:   Choices{ReleaseName: "r", Namespace: "ns", Wait: ptr.To(false), ResetValues: true},
			want: Options{ReleaseName: "r", Namespace: "ns", Wait: ptr.To(false), ResetValues: true},
		},
		"a spec becomes a preset with its overrides": {
			in:   Choices{Spec: &SpecRequest{Preset: spec.Custom, Replicas: 3}},
			want: Options{Spec: &SpecChoice{Preset: spec.Custom, Overrides: spec.Overrides{Replicas: 3}}},
		},
		"a placement gets the default pool label and its selector and tolerations parsed": {
			in: Choices{Placement: &PlacementRequest{Nodes: []string{"a"}, NodeSelector: "tier=system", Tolerations: []string{"gpu:NoSchedule"}}},
			want: Options{Placement: &placement.Options{Nodes: []string{"a"}, PoolLabel: placement.DefaultPoolLabel,
				Expressions: []corev1.NodeSelectorRequirement{{Key: "tier", Operator: corev1.NodeSelectorOpIn, Values: []string{"system"}}},
				Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}},
		},
		"each choice that does not parse is one error named by its path": {
			in:         Choices{Placement: &PlacementRequest{Nodes: []string{"Bad_Name"}, NodeSelector: "a in (", Tolerations: []string{"ok", "x:Sometimes"}}},
			paths:      paths,
			wantFields: []string{"nodes[0]", "selector", "tolerations[1]"},
		},
		"without a path for the nodes their names are left to the command": {
			in:         Choices{Placement: &PlacementRequest{Nodes: []string{"Bad_Name"}}},
			paths:      ChoicePaths{NodeSelector: paths.NodeSelector, Tolerations: paths.Tolerations},
			want:       Options{Placement: &placement.Options{Nodes: []string{"Bad_Name"}, PoolLabel: placement.DefaultPoolLabel}},
			wantFields: nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.paths == (ChoicePaths{}) {
				tc.paths = paths
			}
			got, errs := tc.in.Options(tc.paths)
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			if diff := cmp.Diff(tc.wantFields, fields); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
			if len(tc.wantFields) > 0 {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
