package kubectlplugin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMigrationNext(t *testing.T) {
	type step struct{ ScaleOut, ScaleIn int32 }
	tests := map[string]struct {
		g            migration
		srcReplicas  int32
		dstAvailable bool
		want         step
	}{
		"the destination first scales out by max surge": {
			g: migration{replicas: 5, maxSurge: 2}, srcReplicas: 5, want: step{ScaleOut: 2},
		},
		"the last scale out takes only what is left to move": {
			g: migration{replicas: 5, maxSurge: 2, srcMoved: 4, dstMoved: 4}, srcReplicas: 1, dstAvailable: true, want: step{ScaleOut: 1},
		},
		"with the surge used the source waits for the destination's pods": {
			g: migration{replicas: 5, maxSurge: 2, dstMoved: 2}, srcReplicas: 5, dstAvailable: false, want: step{},
		},
		"once they are available the source scales in by what the destination took on": {
			g: migration{replicas: 5, maxSurge: 2, dstMoved: 2}, srcReplicas: 5, dstAvailable: true, want: step{ScaleIn: 2},
		},
		"the source never scales below zero": {
			g: migration{replicas: 3, maxSurge: 3, dstMoved: 3}, srcReplicas: 1, dstAvailable: true, want: step{ScaleIn: 1},
		},
		"a finished move does nothing": {
			g: migration{replicas: 3, maxSurge: 1, srcMoved: 3, dstMoved: 3}, dstAvailable: true, want: step{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, in := tc.g.next(tc.srcReplicas, tc.dstAvailable)
			if diff := cmp.Diff(tc.want, step{ScaleOut: out, ScaleIn: in}); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
		})
	}
}
