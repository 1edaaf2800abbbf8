package release

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

type stateCase struct {
	in   *helmrelease.Release
	want State
}

func TestStateOf(t *testing.T) {
	rel := func(s helmrelease.Status) *helmrelease.Release {
		return &helmrelease.Release{Info: &helmrelease.Info{Status: s}}
	}
	cases := map[string]stateCase{
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
	testkit.Cases(t, cases, func(t *testing.T, tc stateCase) {
		testkit.Diff(t, "state", tc.want, StateOf(tc.in))
	})
}

type decideCase struct {
	cmd        Command
	state      State
	wantStep   Step
	wantLocked bool
}

func TestDecide(t *testing.T) {
	cases := map[string]decideCase{
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
	testkit.Cases(t, cases, func(t *testing.T, tc decideCase) {
		got := Decide(tc.cmd, tc.state, "kruise-addon")
		testkit.Diff(t, "step, locked", []any{tc.wantStep, tc.wantLocked}, []any{got.Step, got.Locked})
	})
}

type recoverCase struct {
	in           Failure
	wantStep     Step
	wantRevision int
}

func TestRecover(t *testing.T) {
	cases := map[string]recoverCase{
		"a failed install with nothing deployed before goes back to nothing": {
			in: Failure{Cmd: CmdInstall, State: Failed, Wait: true}, wantStep: StepUninstall,
		},
		"a failed upgrade goes back to the last deployed revision": {
			in: Failure{Cmd: CmdUpgrade, State: Failed, LastGood: 3, Wait: true}, wantStep: StepRollback, wantRevision: 3,
		},
		"an install that repaired a once-deployed release goes back to that revision": {
			in: Failure{Cmd: CmdInstall, State: Failed, LastGood: 1, Wait: true}, wantStep: StepRollback, wantRevision: 1,
		},
		"a failed upgrade with no deployed revision before is left failed": {
			in: Failure{Cmd: CmdUpgrade, State: Failed, Wait: true}, wantStep: StepNone,
		},
		"a failure that stored no revision has nothing to undo": {
			in: Failure{Cmd: CmdInstall, State: Absent, Wait: true}, wantStep: StepNone,
		},
		"a failed install applied without waiting is left failed": {
			in: Failure{Cmd: CmdInstall, State: Failed}, wantStep: StepNone,
		},
		"a failed upgrade applied without waiting is left failed": {
			in: Failure{Cmd: CmdUpgrade, State: Failed, LastGood: 2}, wantStep: StepNone,
		},
		"a revision that is not failed is not undone": {
			in: Failure{Cmd: CmdUpgrade, State: Deployed, LastGood: 2, Wait: true}, wantStep: StepNone,
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc recoverCase) {
		got := Recover(tc.in, "kruise-addon")
		testkit.Diff(t, "step, revision", []any{tc.wantStep, tc.wantRevision}, []any{got.Step, got.Revision})
	})
}

type lastGoodCase struct {
	hist []*helmrelease.Release
	upTo int
	want int
}

func TestLastGood(t *testing.T) {
	rel := func(v int, s helmrelease.Status) *helmrelease.Release {
		return &helmrelease.Release{Version: v, Info: &helmrelease.Info{Status: s}}
	}
	cases := map[string]lastGoodCase{
		"the newest superseded or deployed revision up to the bound": {
			hist: []*helmrelease.Release{rel(1, helmrelease.StatusSuperseded), rel(2, helmrelease.StatusDeployed), rel(3, helmrelease.StatusFailed)},
			upTo: 3, want: 2,
		},
		"failed revisions are never good": {
			hist: []*helmrelease.Release{rel(1, helmrelease.StatusSuperseded), rel(2, helmrelease.StatusFailed)},
			upTo: 2, want: 1,
		},
		"revisions after the bound do not count": {
			hist: []*helmrelease.Release{rel(1, helmrelease.StatusSuperseded), rel(4, helmrelease.StatusDeployed)},
			upTo: 3, want: 1,
		},
		"no deployed revision is 0": {
			hist: []*helmrelease.Release{rel(1, helmrelease.StatusFailed)},
			upTo: 1, want: 0,
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc lastGoodCase) {
		testkit.Diff(t, "last good revision", tc.want, lastGood(tc.hist, tc.upTo))
	})
}

func TestActions(t *testing.T) {
	o := Options{ReleaseName: "r", Namespace: "ns", Wait: true}
	up := NewUpgrade(&action.Configuration{}, o)
	// Not Helm-atomic: Recover decides the rollback, for Helm's failures and readiness alike.
	got := map[string]bool{"atomic": up.Atomic, "wait": up.Wait, "cleanupOnFail": up.CleanupOnFail, "resetThenReuse": up.ResetThenReuseValues, "reset": up.ResetValues}
	if diff := cmp.Diff(map[string]bool{"atomic": false, "wait": true, "cleanupOnFail": true, "resetThenReuse": true, "reset": false}, got); diff != "" {
		t.Errorf("default upgrade (-want +got):\n%s", diff)
	}
	o.ResetValues = true
	up = NewUpgrade(&action.Configuration{}, o)
	got = map[string]bool{"resetThenReuse": up.ResetThenReuseValues, "reset": up.ResetValues}
	if diff := cmp.Diff(map[string]bool{"resetThenReuse": false, "reset": true}, got); diff != "" {
		t.Errorf("--reset-values upgrade (-want +got):\n%s", diff)
	}
	noWait := NewInstall(&action.Configuration{}, Options{Wait: false})
	if diff := cmp.Diff([]bool{false, false}, []bool{noWait.Atomic, noWait.Wait}); diff != "" {
		t.Errorf("--wait=false install is neither atomic nor waiting (-want +got):\n%s", diff)
	}
	in := NewInstall(&action.Configuration{}, o)
	got = map[string]bool{"atomic": in.Atomic, "wait": in.Wait, "createNamespace": in.CreateNamespace}
	if diff := cmp.Diff(map[string]bool{"atomic": false, "wait": true, "createNamespace": false}, got); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}
}
