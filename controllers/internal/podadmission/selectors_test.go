package podadmission

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestSelectorsParseAgainWhenTheGenerationChanges reads the selector of one object through
// several changes, each row starting from the object the row before left, so a row whose
// generation has not moved proves the selector is remembered and one whose generation moved
// proves the new spec is read.
func TestSelectorsParseAgainWhenTheGenerationChanges(t *testing.T) {
	obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1"}}
	var sels Selectors
	steps := []struct {
		name       string
		generation int64
		app        string
		wantWeb    bool
	}{
		{name: "a first read parses the selector", generation: 1, app: "web", wantWeb: true},
		{name: "a read at the same generation keeps the selector parsed before", generation: 1, app: "db", wantWeb: true},
		{name: "a read at a new generation parses the new selector", generation: 2, app: "db", wantWeb: false},
		{name: "an object never stored (generation 0) is parsed every time", generation: 0, app: "web", wantWeb: true},
	}
	for _, s := range steps {
		obj.Generation = s.generation
		sel, err := sels.Of(obj, "spec.selector", &metav1.LabelSelector{MatchLabels: map[string]string{"app": s.app}})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		testkit.Diff(t, s.name+": selects app=web", s.wantWeb, sel.Matches(labels.Set{"app": "web"}))
	}
}

func TestSelectorsParseAsLabelSelectorAsSelector(t *testing.T) {
	type tcase struct {
		sel       *metav1.LabelSelector
		wantEmpty bool
		wantErr   bool
	}
	testkit.Cases(t, map[string]tcase{
		"a nil selector selects nothing":  {sel: nil},
		"an empty selector is empty":      {sel: &metav1.LabelSelector{}, wantEmpty: true},
		"an invalid selector is an error": {sel: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b c"}}, wantErr: true},
		"a valid selector is parsed":      {sel: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
	}, func(t *testing.T, tt tcase) {
		obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{UID: "u", Generation: 1}}
		for _, s := range []*Selectors{nil, {}} {
			got, err := s.Of(obj, "spec.selector", tt.sel)
			want, wantErr := metav1.LabelSelectorAsSelector(tt.sel)
			testkit.Diff(t, "error", tt.wantErr, err != nil)
			testkit.Diff(t, "error as LabelSelectorAsSelector's", wantErr != nil, err != nil)
			if err == nil {
				testkit.Diff(t, "selector", want.String(), got.String())
				testkit.Diff(t, "empty", tt.wantEmpty, got.Empty())
			}
		}
	})
}
