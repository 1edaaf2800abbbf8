package installer

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/release"
)

// upgrade --install installs a release that is not installed and upgrades one that is, as
// Helm's; --reset-values then drops the values earlier revisions were given.
func TestUpgradeInstallInstallsThenUpgradesAndResetValuesDropsTheOldValues(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-upinstall")
	upgrade := func(t *testing.T, o installer.Options) *installer.Result {
		t.Helper()
		o.Namespace, o.Timeout, o.Install = ns, installTimeout, true
		res, err := i.Upgrade(ctx, o)
		if err != nil {
			t.Fatalf("upgrade --install: %v", err)
		}
		return res
	}
	managerValue := func(key string) any {
		m, _ := lastReleaseOrNil(t, ns).Config["manager"].(map[string]any)
		return m[key]
	}

	t.Run("a release that is not installed is installed", func(t *testing.T) {
		res := upgrade(t, installer.Options{Set: testSet("manager.logLevel=2")})
		if res.Step != release.StepInstall || res.Revision != 1 {
			t.Errorf("step %s revision %d, want install at revision 1", res.Step, res.Revision)
		}
	})
	t.Run("an installed release is upgraded and keeps its values", func(t *testing.T) {
		res := upgrade(t, installer.Options{Set: testSet()})
		if res.Step != release.StepUpgrade || res.Revision != 2 {
			t.Errorf("step %s revision %d, want upgrade at revision 2", res.Step, res.Revision)
		}
		if got := managerValue("logLevel"); got != int64(2) && got != float64(2) {
			t.Errorf("manager.logLevel %v (%T) after the upgrade, want the installed 2 kept", got, got)
		}
	})
	t.Run("--reset-values drops the values of earlier revisions", func(t *testing.T) {
		res := upgrade(t, installer.Options{Set: testSet(), ResetValues: true})
		if res.Revision != 3 {
			t.Errorf("revision %d, want 3", res.Revision)
		}
		if got := managerValue("logLevel"); got != nil {
			t.Errorf("manager.logLevel %v after --reset-values, want it gone from the release's values", got)
		}
	})
}
