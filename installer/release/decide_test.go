package release

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"
)

func TestStateOf(t *testing.T) {
	rel := func(s helmrelease.Status) *helmrelease.Release {
		return &helmrelease.Release{Info: &helmrelease.Info{Status: s}}
	}
	cases := map[string]struct {
		in   *helmrelease.Release
		want State
	}{
		"no release is absent":               {in: nil, want: Absent},
		"deployed is deployed":               {in: rel(helmrelease.StatusDeployed), want: Deployed},
		"failed is failed":                   {in: rel(helmrelease.StatusFailed), want: Failed},
		"pending-install is pending":         {in: rel(helmrelease.StatusPendingInstall), want: Pending},
		"pending-upgrade is pending":         {in: rel(helmrelease.StatusPendingUpgrade), want: Pending},
		"pending-rollback is pending":        {in: rel(helmrelease.StatusPendingRollback), want: Pending},
		"uninstalling is uninstalling":       {in: rel(helmrelease.StatusUninstalling), want: Uninstalling},
		"uninstalled (kept history) is gone": {in: rel(helmrelease.StatusUninstalled), want: Absent},
		"superseded as latest is other":      {in: rel(helmrelease.StatusSuperseded), want: Other},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, StateOf(tc.in)); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		cmd        Command
		state      State
		wantStep   Step
		wantLocked bool
	}{
		"install on nothing installs":                     {cmd: CmdInstall, state: Absent, wantStep: StepInstall},
		"install over a failed release repairs it":        {cmd: CmdInstall, state: Failed, wantStep: StepUpgrade},
		"install over a deployed release is refused":      {cmd: CmdInstall, state: Deployed, wantStep: StepRefuse},
		"install over a pending release needs unlock":     {cmd: CmdInstall, state: Pending, wantStep: StepRefuse, wantLocked: true},
		"upgrade of a deployed release upgrades":          {cmd: CmdUpgrade, state: Deployed, wantStep: StepUpgrade},
		"upgrade of a failed release upgrades":            {cmd: CmdUpgrade, state: Failed, wantStep: StepUpgrade},
		"upgrade of nothing is refused":                   {cmd: CmdUpgrade, state: Absent, wantStep: StepRefuse},
		"upgrade of a pending release needs unlock":       {cmd: CmdUpgrade, state: Pending, wantStep: StepRefuse, wantLocked: true},
		"upgrade of an uninstalling release needs unlock": {cmd: CmdUpgrade, state: Uninstalling, wantStep: StepRefuse, wantLocked: true},
		"uninstall of a deployed release uninstalls":      {cmd: CmdUninstall, state: Deployed, wantStep: StepUninstall},
		"uninstall of nothing does nothing":               {cmd: CmdUninstall, state: Absent, wantStep: StepNone},
		"uninstall of a stuck uninstall needs unlock":     {cmd: CmdUninstall, state: Uninstalling, wantStep: StepRefuse, wantLocked: true},
		"unlock of a pending release unlocks":             {cmd: CmdUnlock, state: Pending, wantStep: StepUnlock},
		"unlock of an uninstalling release unlocks":       {cmd: CmdUnlock, state: Uninstalling, wantStep: StepUnlock},
		"unlock of a deployed release does nothing":       {cmd: CmdUnlock, state: Deployed, wantStep: StepNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Decide(tc.cmd, tc.state, "kruise-addon")
			if diff := cmp.Diff(tc.wantStep, got.Step); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLocked, got.Locked); diff != "" {
				t.Errorf("locked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActions(t *testing.T) {
	o := Options{ReleaseName: "r", Namespace: "ns"}
	up := NewUpgrade(&action.Configuration{}, o)
	got := map[string]bool{"atomic": up.Atomic, "wait": up.Wait, "resetThenReuse": up.ResetThenReuseValues, "reset": up.ResetValues}
	if diff := cmp.Diff(map[string]bool{"atomic": true, "wait": true, "resetThenReuse": true, "reset": false}, got); diff != "" {
		t.Errorf("default upgrade (-want +got):\n%s", diff)
	}
	o.ResetValues = true
	up = NewUpgrade(&action.Configuration{}, o)
	got = map[string]bool{"resetThenReuse": up.ResetThenReuseValues, "reset": up.ResetValues}
	if diff := cmp.Diff(map[string]bool{"resetThenReuse": false, "reset": true}, got); diff != "" {
		t.Errorf("--reset-values upgrade (-want +got):\n%s", diff)
	}
	noWait := NewInstall(&action.Configuration{}, Options{NoWait: true})
	if diff := cmp.Diff([]bool{false, false}, []bool{noWait.Atomic, noWait.Wait}); diff != "" {
		t.Errorf("--wait=false install is neither atomic nor waiting (-want +got):\n%s", diff)
	}
	in := NewInstall(&action.Configuration{}, o)
	got = map[string]bool{"atomic": in.Atomic, "createNamespace": in.CreateNamespace}
	if diff := cmp.Diff(map[string]bool{"atomic": true, "createNamespace": false}, got); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}
}
