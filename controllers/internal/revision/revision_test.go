package revision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestHash(t *testing.T) {
	a := []byte(`{"spec":{"template":{"a":1}}}`)
	b := []byte(`{"spec":{"template":{"a":2}}}`)
	type tcase struct {
		x, y     []byte
		cx, cy   *int32
		wantSame bool
	}
	tests := map[string]tcase{
		"the same data hashes the same":                  {x: a, y: a, wantSame: true},
		"other data hashes differently":                  {x: a, y: b},
		"a collision count changes the hash":             {x: a, y: a, cy: ptr.To[int32](1)},
		"a nil and a zero collision count hash the same": {x: a, y: a, cy: nil, cx: nil, wantSame: true},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		if got := Hash(tc.x, tc.cx) == Hash(tc.y, tc.cy); got != tc.wantSame {
			t.Fatalf("same hash = %v, want %v", got, tc.wantSame)
		}
	})
}

func TestNameAndShortHash(t *testing.T) {
	long := string(make([]byte, 300))
	type tcase struct {
		parent, hash string
		wantLen      int
	}
	tests := map[string]tcase{
		"a short parent keeps its whole name": {parent: "web", hash: "7c9f8", wantLen: len("web-7c9f8")},
		"a long parent is cut to fit a name":  {parent: long, hash: "7c9f8", wantLen: maxPrefix + 1 + 5},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		n := Name(tc.parent, tc.hash)
		testkit.Diff(t, "length of the name", tc.wantLen, len(n))
		testkit.Diff(t, "ShortHash", tc.hash, ShortHash(n))
	})
}

func TestSortAndNext(t *testing.T) {
	at := func(s int64) metav1.Time { return metav1.NewTime(time.Unix(s, 0)) }
	revs := []*appsv1.ControllerRevision{
		{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: at(1)}, Revision: 3},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: at(2)}, Revision: 1},
		{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: at(1)}, Revision: 1},
	}
	Sort(revs)
	var got []string
	for _, r := range revs {
		got = append(got, r.Name)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	testkit.Diff(t, "Next", int64(4), Next(revs))
	testkit.Diff(t, "Next of empty history", int64(1), Next(nil))
}

func TestFindEqualFindsTheRevisionOfAReappliedTemplate(t *testing.T) {
	rev := func(name, data string) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: runtime.RawExtension{Raw: []byte(data)}}
	}
	history := []*appsv1.ControllerRevision{rev("v1", `{"a":1}`), rev("v2", `{"a":2}`)}
	got := FindEqual(history, rev("new", `{"a":1}`))
	if len(got) != 1 || got[0].Name != "v1" {
		t.Fatalf("FindEqual = %v, want [v1]", got)
	}
}
