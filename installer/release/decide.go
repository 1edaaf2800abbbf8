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
)

// Decision is the next step and why.
type Decision struct {
	Step   Step   `json:"step"`
	Reason string `json:"reason"`
	// Locked is set when a stuck release blocks the command; unlock frees it.
	Locked bool `json:"locked,omitempty"`
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
	case CmdUpgrade:
		switch s {
		case Deployed, Failed:
			return Decision{Step: StepUpgrade, Reason: "release " + string(s)}
		case Absent, Other:
			return Decision{Step: StepRefuse, Reason: fmt.Sprintf("release %s is not installed; use `kruise-addon install`", name)}
		}
		return locked()
	case CmdUninstall:
		switch s {
		case Deployed, Failed:
			return Decision{Step: StepUninstall, Reason: "release " + string(s)}
		case Absent, Other:
			return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s is not installed", name)}
		}
		return locked()
	case CmdUnlock:
		switch s {
		case Pending, Uninstalling:
			return Decision{Step: StepUnlock, Reason: fmt.Sprintf("release %s is stuck %s", name, s)}
		}
		return Decision{Step: StepNone, Reason: fmt.Sprintf("release %s is %s, not stuck", name, s)}
	}
	return Decision{Step: StepRefuse, Reason: fmt.Sprintf("unknown command %q", cmd)}
}
