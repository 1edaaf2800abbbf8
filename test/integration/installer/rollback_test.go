package installer

import (
	"errors"
	"testing"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/versions"
)

// An upgrade to an older add-on is refused; rollback is the way back: to the revision before
// the latest by default, or to the one named, with a bad revision refused naming those there are.
func TestRollbackGoesBackToTheOlderAddonAnUpgradeRefuses(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-rollback")
	current := versions.MustLoad().CurrentRow().Addon
	// 1.1.42 does not support the test bed's cluster version: preflight is told it is the
	// current add-on, so that the install of it goes through.
	older := chartCopy(t, "1.1.42")
	if _, err := i.Install(ctx, installer.Options{Namespace: ns, ChartPath: older, Set: testSet(), Timeout: installTimeout, AddonVersion: current}); err != nil {
		t.Fatalf("install 1.1.42: %v", err)
	}
	if _, err := i.Upgrade(ctx, installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout}); err != nil {
		t.Fatalf("upgrade to the current add-on: %v", err)
	}
	rollback := func(t *testing.T, to int, force bool) (*installer.Result, error) {
		t.Helper()
		return i.Rollback(ctx, installer.RollbackOptions{Namespace: ns, ToRevision: to, Timeout: installTimeout, Force: force})
	}
	want := func(t *testing.T, res *installer.Result, revision int, app string) {
		t.Helper()
		if res.Step != release.StepRollback || res.Revision != revision || res.AppVersion != app || res.Status != helmrelease.StatusDeployed.String() {
			t.Errorf("rollback: step %s, revision %d, add-on %s, %s; want rollback to revision %d, add-on %s, deployed", res.Step, res.Revision, res.AppVersion, res.Status, revision, app)
		}
	}

	t.Run("rollback to an add-on that does not support the cluster is refused, saying why", func(t *testing.T) {
		_, err := rollback(t, 0, false)
		var refused *installer.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("err %v, want a refusal", err)
		}
		if missing := testkit.Missing(refused.Reason, "add-on 1.1.42 supports clusters", "--force"); missing != nil {
			t.Errorf("reason %q lacks %q", refused.Reason, missing)
		}
		if got := lastReleaseOrNil(t, ns).Version; got != 2 {
			t.Errorf("a refused rollback made revision %d", got)
		}
	})
	t.Run("rollback without a revision goes back to the one before the latest", func(t *testing.T) {
		res, err := rollback(t, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		want(t, res, 3, "1.1.42")
	})
	t.Run("a revision that does not exist is bad input naming the others", func(t *testing.T) {
		_, err := rollback(t, 9, true)
		var invalid *installer.InvalidError
		if !errors.As(err, &invalid) {
			t.Fatalf("err %v, want bad input", err)
		}
		if missing := testkit.Missing(err.Error(), "revision 9 does not exist", "1, 2"); missing != nil {
			t.Errorf("error %q lacks %q", err, missing)
		}
		if got := lastReleaseOrNil(t, ns).Version; got != 3 {
			t.Errorf("a refused rollback made revision %d", got)
		}
	})
	t.Run("rollback to a named revision goes forward again", func(t *testing.T) {
		res, err := rollback(t, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		want(t, res, 4, current)
	})
}
