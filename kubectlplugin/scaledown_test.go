package kubectlplugin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanScaleDown(t *testing.T) {
	type plan struct {
		PodsToDelete []string
		Replicas     int32
		Err          string
	}
	tests := map[string]struct {
		podsToDelete []string
		replicas     int32
		chosen       []string
		want         plan
	}{
		"each chosen pod joins podsToDelete and lowers replicas by one": {
			replicas: 3, chosen: []string{"web-a", "web-b"},
			want: plan{PodsToDelete: []string{"web-a", "web-b"}, Replicas: 1},
		},
		"pods already listed keep their place and lower replicas no further": {
			podsToDelete: []string{"web-a"}, replicas: 2, chosen: []string{"web-a", "web-c"},
			want: plan{PodsToDelete: []string{"web-a", "web-c"}, Replicas: 1},
		},
		"replicas never go below 0": {
			replicas: 1, chosen: []string{"web-a", "web-b"},
			want: plan{Err: "deleting pods web-a, web-b would take replicas below 0"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			list, replicas, err := planScaleDown(tc.podsToDelete, tc.replicas, tc.chosen)
			got := plan{PodsToDelete: list, Replicas: replicas}
			if err != nil {
				got = plan{Err: err.Error()}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
