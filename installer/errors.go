package installer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
)

// InvalidError is bad input: flags, values or a values file the chart's schema rejects. Nothing
// was applied.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return "invalid input: " + e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalid(format string, args ...any) error {
	return &InvalidError{Err: fmt.Errorf(format, args...)}
}

// RefusedError is a command refused before anything was applied: by preflight, by the
// uninstall gate, by an upgrade path or by the release's state.
type RefusedError struct {
	Reason    string                    `json:"reason"`
	Preflight *preflight.Report         `json:"preflight,omitempty"`
	Remaining []uninstallgate.KindCount `json:"remaining,omitempty"`
	// Locked is set when a stuck release is the reason; `unlock` frees it.
	Locked bool `json:"locked,omitempty"`
	// MissingImages are the bundle's images the mirror registry lacks, as
	// <repository>@<digest> (roles), or the images the values run that the bundle lacks, as
	// <repository>:<tag> (role, which <value> runs).
	MissingImages []string `json:"missingImages,omitempty"`
	// InUse is set when the add-on is installed, or being changed, elsewhere in the cluster.
	InUse *InUse `json:"inUse,omitempty"`
	// OpenedWebhooks names the webhooks an uninstall refused by the gate set to fail
	// open, because the manager had no ready endpoint and they would have refused the printed
	// cleanup.
	OpenedWebhooks []string `json:"openedWebhooks,omitempty"`
}

// InUse is what stands in the way of a command when the add-on, which runs once per cluster, is
// installed or being changed elsewhere: another release of it, or a command that holds the
// cluster's lock (see LockName).
type InUse struct {
	Namespace string `json:"namespace"`
	Release   string `json:"release"`
	// State is the other release's state (deployed, failed, pending-install, ...), or what the
	// command holding the lock does: "install in progress".
	State string `json:"state"`
	// Holder is the installer holding the lock, and Expires when the lock goes stale unless
	// that installer renews it.
	Holder  string     `json:"holder,omitempty"`
	Expires *time.Time `json:"expires,omitempty"`
}

func (e *RefusedError) Error() string {
	if e.Preflight == nil {
		return "refused: " + e.Reason
	}
	var b strings.Builder
	b.WriteString("refused by preflight:")
	for _, v := range e.Preflight.Refusals() {
		fmt.Fprintf(&b, "\n  %s: %s", v.Check, v.Message)
		if v.Fix != "" {
			fmt.Fprintf(&b, "\n    fix: %s", v.Fix)
		}
	}
	return b.String()
}

// RolledBackError is an install or upgrade that failed (Helm failed, or the add-on did not
// become ready) and was undone: an upgrade is deployed again at a copy of Revision; an install
// with nothing deployed before it was uninstalled, back to nothing, keeping the add-on's CRDs
// (helm.sh/resource-policy: keep) and every custom resource.
type RolledBackError struct {
	// Command is install or upgrade.
	Command string `json:"command"`
	Release string `json:"release"`
	// Uninstalled is set when the release was uninstalled (an install rolled back to nothing).
	Uninstalled bool `json:"uninstalled,omitempty"`
	// DeletedNamespace is the install namespace, deleted again because the failed install
	// created it and it held nothing but the release's objects.
	DeletedNamespace string `json:"deletedNamespace,omitempty"`
	// Namespace says what became of the install namespace when the install had created or
	// labelled it: deleted, or kept without the label and why.
	Namespace string `json:"namespace,omitempty"`
	// Kept names objects of the release's manifest the uninstall left because another release
	// owns them (see UninstallResult.Kept).
	Kept []string `json:"kept,omitempty"`
	// Revision is the revision the release went back to.
	Revision int `json:"revision,omitempty"`
	// Current is the release's revision after the rollback.
	Current int   `json:"current,omitempty"`
	Err     error `json:"-"`
}

func (e *RolledBackError) Error() string {
	if e.Uninstalled {
		more := ""
		if e.Namespace != "" {
			more = ", " + e.Namespace
		}
		if len(e.Kept) > 0 {
			more += ", objects another release owns kept: " + strings.Join(e.Kept, ", ")
		}
		return fmt.Sprintf("%s failed and was rolled back to nothing: release %s uninstalled%s; the add-on's CRDs kept, no custom resource deleted: %v",
			e.Command, e.Release, more, e.Err)
	}
	return fmt.Sprintf("%s failed and was rolled back to revision %d (now revision %d): %v", e.Command, e.Revision, e.Current, e.Err)
}
func (e *RolledBackError) Unwrap() error { return e.Err }

// TimeoutError is why a command's context ended when the command ran past its Timeout. It
// matches context.DeadlineExceeded.
type TimeoutError struct {
	Timeout time.Duration `json:"timeout"`
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("did not finish within the timeout of %s", e.Timeout)
}
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// IsInvalid, IsRefused and IsRolledBack classify errors for exit codes.
func IsInvalid(err error) bool {
	var e *InvalidError
	return errors.As(err, &e)
}

func IsRefused(err error) bool {
	var e *RefusedError
	return errors.As(err, &e)
}

func IsRolledBack(err error) bool {
	var e *RolledBackError
	return errors.As(err, &e)
}

// Exit-code classes of an error, shared by the CLI's exit codes and the HTTP API's error
// bodies.
const (
	ExitOK         = 0
	ExitError      = 1
	ExitInvalid    = 2
	ExitRefused    = 3
	ExitRolledBack = 4
)

// ExitClass is the exit-code class of err: ExitInvalid, ExitRefused or ExitRolledBack for the
// typed errors, ExitError for any other, ExitOK for nil.
func ExitClass(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case IsInvalid(err):
		return ExitInvalid
	case IsRefused(err):
		return ExitRefused
	case IsRolledBack(err):
		return ExitRolledBack
	}
	return ExitError
}
