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

// RolledBackError is an upgrade that failed and was rolled back: the release is deployed at a
// copy of Revision.
type RolledBackError struct {
	// Revision is the revision the release went back to.
	Revision int `json:"revision"`
	// Current is the release's revision after the rollback.
	Current int   `json:"current"`
	Err     error `json:"-"`
}

func (e *RolledBackError) Error() string {
	return fmt.Sprintf("upgrade failed and was rolled back to revision %d (now revision %d): %v", e.Revision, e.Current, e.Err)
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
