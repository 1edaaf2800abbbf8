package podadmission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

type named string

func TestBuildKeepsWhatTheFactoriesBuildInOrderAndLeavesOutNil(t *testing.T) {
	build := func(v string) func(ctrl.Manager, setup.Deps) *named {
		return func(ctrl.Manager, setup.Deps) *named {
			if v == "" {
				return nil
			}
			n := named(v)
			return &n
		}
	}
	var got []string
	for _, n := range Build(nil, setup.Deps{}, build("first"), build(""), build("second")) {
		got = append(got, string(*n))
	}
	if diff := cmp.Diff([]string{"first", "second"}, got); diff != "" {
		t.Errorf("built (-want +got):\n%s", diff)
	}
}
