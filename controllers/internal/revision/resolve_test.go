package revision

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestResolve(t *testing.T) {
	parent := &metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1beta1", Kind: "StatefulSet"}
	v1 := []byte(`{"spec":{"template":{"image":"1"}}}`)
	v2 := []byte(`{"spec":{"template":{"image":"2"}}}`)
	type step struct {
		data       []byte
		wantUpdate int64 // the revision number the update revision has
		wantCount  int   // revisions in history afterwards
		wantSameAs int   // the step whose update revision this one reuses, or -1 for a new one
	}
	tests := map[string][]step{
		"a new template gets a new revision, numbered after the newest": {
			{data: v1, wantUpdate: 1, wantCount: 1, wantSameAs: -1},
			{data: v2, wantUpdate: 2, wantCount: 2, wantSameAs: -1},
		},
		"the same template again keeps its revision": {
			{data: v1, wantUpdate: 1, wantCount: 1, wantSameAs: -1},
			{data: v1, wantUpdate: 1, wantCount: 1, wantSameAs: 0},
		},
		"a rollback reuses the old template's revision and makes it the newest": {
			{data: v1, wantUpdate: 1, wantCount: 1, wantSameAs: -1},
			{data: v2, wantUpdate: 2, wantCount: 2, wantSameAs: -1},
			{data: v1, wantUpdate: 3, wantCount: 2, wantSameAs: 0},
		},
	}
	for name, steps := range tests {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(s).Build()
			h := History{Client: c}
			var names []string
			for i, st := range steps {
				history, err := h.List(context.Background(), "ns", nil, parent.UID)
				if err != nil {
					t.Fatal(err)
				}
				var count int32
				want := New(parent, gvk, nil, st.data, Next(history), &count)
				update, sorted, err := h.Resolve(context.Background(), parent, gvk, history, want, &count)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, update.Name)
				wantName := update.Name
				if st.wantSameAs >= 0 {
					wantName = names[st.wantSameAs]
				}
				got := []any{update.Revision, len(sorted), update.Name, sorted[len(sorted)-1].Name}
				if diff := cmp.Diff([]any{st.wantUpdate, st.wantCount, wantName, update.Name}, got); diff != "" {
					t.Errorf("step %d: revision, history length, name, newest (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestReadCurrent(t *testing.T) {
	parent := &metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}
	type tcase struct {
		current     func(first string) string
		wantCurrent string // "first" or "update"
	}
	tests := map[string]tcase{
		"the current revision is the one the status names":                       {current: func(first string) string { return first }, wantCurrent: "first"},
		"the current revision is the update revision when the status names none": {current: func(string) string { return "" }, wantCurrent: "update"},
		"the current revision is the update revision when the named one is gone": {current: func(string) string { return "web-gone" }, wantCurrent: "update"},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		s := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		h := History{Client: fake.NewClientBuilder().WithScheme(s).Build()}
		var count int32
		w := Workload{Parent: parent, GVK: gvk, Template: map[string]string{"image": "1"}}
		first, err := h.Read(context.Background(), w, &count)
		if err != nil {
			t.Fatal(err)
		}
		w.Template, w.CurrentRevision = map[string]string{"image": "2"}, tc.current(first.Update.Name)
		got, err := h.Read(context.Background(), w, &count)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"first": first.Update.Name, "update": got.Update.Name}[tc.wantCurrent]
		testkit.Diff(t, "current revision, history length", []any{want, 2}, []any{got.Current.Name, len(got.History)})
	})
}

func TestTrack(t *testing.T) {
	parent := &metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}
	w := Workload{Parent: parent, GVK: gvk, Template: map[string]string{"image": "1"}}
	data, err := TemplatePatch(w.Template)
	if err != nil {
		t.Fatal(err)
	}
	// taken is a revision of another template under the name the template gets at count 3.
	three := int32(3)
	taken := New(&metav1.ObjectMeta{Name: "other", Namespace: "ns"}, gvk, map[string]string{}, []byte(`{}`), 1, nil)
	taken.Name = Name("web", Hash(data, &three))
	type tcase struct {
		statusCount int32 // -1 for none
		taken       bool
		wantCount   int32
	}
	tests := map[string]tcase{
		"a status without a collision count counts from zero":     {statusCount: -1, wantCount: 0},
		"the count goes on from the one the status records":       {statusCount: 3, wantCount: 3},
		"a name another template holds moves the count on by one": {statusCount: 3, taken: true, wantCount: 4},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		s := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		b := fake.NewClientBuilder().WithScheme(s)
		if tc.taken {
			b = b.WithObjects(taken.DeepCopy())
		}
		var count *int32
		if tc.statusCount >= 0 {
			count = &tc.statusCount
		}
		got, err := History{Client: b.Build()}.Track(context.Background(), w, count)
		if err != nil {
			t.Fatal(err)
		}
		wantName := Name("web", Hash(data, &tc.wantCount))
		testkit.Diff(t, "collision count, update revision, current revision", []any{tc.wantCount, wantName, wantName},
			[]any{got.CollisionCount, got.Update.Name, got.Current.Name})
	})
}
