package podadmission

import (
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
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
	testkit.Diff(t, "built", []string{"first", "second"}, got)
}
