package revision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// TestHashNamesANewRevisionAs18Does: the hash of a new revision is the one OpenKruise 1.8 gives
// the same data (Kubernetes' revision hash: FNV-32 of the data, then the collision count as
// decimal text), so a manifest applied to both names its revisions, and its pods'
// controller-revision-hash, alike.
func TestHashNamesANewRevisionAs18Does(t *testing.T) {
	data := []byte(`{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"main"}]}}}}`)
	tests := map[string]struct {
		collisionCount *int32
		want           string
	}{
		"with no collision":      {collisionCount: ptr.To[int32](0), want: "6694fc74bf"},
		"after one collision":    {collisionCount: ptr.To[int32](1), want: "6694fc74bd"},
		"with no count recorded": {collisionCount: nil, want: "bd7487bf9"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Hash(data, tc.collisionCount)); diff != "" {
				t.Fatalf("Hash (-want +got):\n%s", diff)
			}
		})
	}
}
