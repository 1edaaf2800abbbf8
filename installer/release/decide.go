package release

import (
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"
)

// State is what the installer makes of the release's latest revision.
type State string

const (
	Absent       State = "absent"
	Deployed     State = "deployed"
	Failed       State = "failed"
	Pending      State = "pending"
	Uninstalling State = "uninstalling"
	// Other covers superseded or uninstalled latest revisions, which Helm treats as absent.
	Other State = "other"
)

// StateOf reads the state of the latest revision; nil means Absent.
func StateOf(r *helmrelease.Release) State {
	if r == nil || r.Info == nil {
		return Absent
	}
	switch s := r.Info.Status; {
	case s == helmrelease.StatusDeployed:
		return Deployed
	case s == helmrelease.StatusFailed:
		return Failed
	case s.IsPending():
		return Pending
	case s == helmrelease.StatusUninstalling:
		return Uninstalling
	case s == helmrelease.StatusUninstalled:
		return Absent
	}
	return Other
}

// Step is what a command does next.
type Step string

const (
	StepInstall   Step = "install"
	StepUpgrade   Step = "upgrade"
	StepUninstall Step = "uninstall"
	StepUnlock    Step = "unlock"
	// StepRollback: go back to Decision.Revision, after a failed upgrade.
	StepRollback Step = "rollback"
	// StepNone: nothing to do.
	StepNone Step = "none"
	// StepRefuse: the command cannot go on from this state; Decision.Reason says why.
	StepRefuse Step = "refuse"
)

// Command is what the user asked for.
type Command string

const (
	CmdInstall   Command = "install"
	CmdUpgrade   Command = "upgrade"
	CmdUninstall Command = "uninstall"
	CmdUnlock    Command = "unlock"
	// CmdRollback goes back to an earlier revision the user names.
	CmdRollback Command = "rollback"
	// CmdStatus only reads; Decide always answers StepNone.
	CmdStatus Command = "status"
)

// Decision is the next step and why.
type Decision struct {
	Step   Step   `json:"step"`
	Reason string `json:"reason"`
	// Locked is set when a stuck release blocks the command; unlock frees it.
	Locked bool `json:"locked,omitempty"`
	// Revision is the revision StepRollback goes back to.
	Revision int `json:"revision,omitempty"`
}

// Decide picks the next step for a command from the release state.
func Decide(cmd Command, s State, name string) Decision {
	locked := func() Decision {
		return Decision{Step: StepRefuse, Locked: true, Reason: fmt.Sprintf("release %s is stuck %s (an earlier run was interrupted); run `kruise-addon unlock` first", name, s)}
	}
	switch cmd {
	case CmdInstall:
		switch s {
		case Absent, Other:
			return Decision{Step: StepInstall, Reason: "not installed"}
		case Failed:
			return Decision{Step: StepUpgrade, Reason: "the last install or upgrade failed; upgrading repairs it"}
		case Deployed:
			return Decision{Step: StepRefuse, Reason: fmt.Sprintf("release %s is already installed; use `kruise-addon upgrade`", name)}
		}
		return locked()
	case CmdStatus:
		return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s is %s", name, s)}
	case CmdUnlock:
		switch s {
		case Pending, Uninstalling:
			return Decision{Step: StepUnlock, Reason: fmt.Sprintf("release %s is stuck %s", name, s)}
		}
		return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s is %s, not stuck", name, s)}
	}
	c, ok := onRelease[cmd]
	if !ok {
		return Decision{Step: StepRefuse, Reason: fmt.Sprintf("unknown command %q", cmd)}
	}
	switch s {
	case Deployed, Failed:
		return Decision{Step: c.installed, Reason: "release " + string(s)}
	case Absent, Other:
		return Decision{Step: c.absent, Reason: fmt.Sprintf(c.absentReason, name)}
	}
	return locked()
}

// onRelease is, for the commands that act on an installed release, their step on a deployed or
// failed one, and their step and reason (of the release's name) when none is installed; a
// stuck release refuses them all until it is unlocked.
var onRelease = map[Command]struct {
	installed, absent Step
	absentReason      string
}{
	CmdUpgrade:   {installed: StepUpgrade, absent: StepRefuse, absentReason: "release %s is not installed; use `kruise-addon install`"},
	CmdUninstall: {installed: StepUninstall, absent: StepNone, absentReason: "release %s is not installed"},
	CmdRollback:  {installed: StepRollback, absent: StepRefuse, absentReason: "release %s is not installed; there is nothing to roll back"},
}

// Failure is an install or upgrade that did not end ready: Helm failed (its wait, a cancel, a
// timeout), or Helm deployed it and the add-on did not become ready in time. Both leave the
// revision the command made failed, and Recover decides from that state.
type Failure struct {
	// Cmd is what the user asked for; an install that repairs a failed release is still an
	// install.
	Cmd Command
	// State is the state of the revision the command made: Failed, or Absent when it stored
	// none (Helm failed before it wrote one).
	State State
	// LastGood is the newest earlier revision that was deployed, 0 when none.
	LastGood int
	// Wait is false when the command applied without waiting (--wait=false): it promised no
	// rollback, and the release is left failed for the user.
	Wait bool
}

// Recover decides what undoes a failed install or upgrade, as --atomic promises: an upgrade
// goes back to the last good revision; an install with nothing good before it goes back to
// nothing (uninstall; the CRDs stay under their keep policy, custom resources are never
// deleted).
func Recover(f Failure, name string) Decision {
	switch {
	case f.State == Absent:
		return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s stored no new revision; nothing to undo", name)}
	case f.State != Failed:
		return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s is %s, not failed", name, f.State)}
	case !f.Wait:
		return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s was applied without waiting (--wait=false), so it is left failed; fix it with `kruise-addon upgrade` or remove it with `kruise-addon uninstall`", name)}
	case f.LastGood > 0:
		return Decision{Step: StepRollback, Revision: f.LastGood, Reason: fmt.Sprintf("roll release %s back to revision %d, the last that was deployed", name, f.LastGood)}
	case f.Cmd == CmdInstall:
		return Decision{Step: StepUninstall, Reason: fmt.Sprintf("release %s was never deployed; uninstall it, back to nothing", name)}
	}
	return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s has no earlier deployed revision to go back to, so it is left failed; fix it with `kruise-addon upgrade` or remove it with `kruise-addon uninstall`", name)}
}
