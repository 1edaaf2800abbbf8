package installer

import (
	"context"
	"fmt"

	"slices"

	"github.com/kruise-addon/kruise-addon/installer/crds"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
)

// UninstallOptions are the uninstall choices.
type UninstallOptions struct {
	ReleaseName string `json:"releaseName,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	// DeleteCRDs also removes the add-on's CRDs once the release is gone. Only the
	// manager-made kinds (NodeImage, NodePodProbe) can have objects left then; the gate has
	// already checked every user kind is empty.
	DeleteCRDs bool `json:"deleteCRDs,omitempty"`
	Options    `json:"-"`
}

// UninstallResult says what was removed.
type UninstallResult struct {
	Result
	DeletedCRDs []string `json:"deletedCRDs,omitempty"`
	KeptCRDs    bool     `json:"keptCRDs"`
	// Kept names the objects of the release's manifest left in place because another release
	// owns them now, or none does, e.g. "ClusterRole kruise-manager-role (owned by release
	// cb/kruise-addon)": an uninstall deletes only objects that carry its own release's
	// ownership.
	Kept []string `json:"kept,omitempty"`
}

// Uninstall removes the release. It refuses, before calling Helm, while any user custom
// resource of the add-on exists, listing kinds and counts: Helm's pre-delete hook failing
// instead would leave the release stuck uninstalling. It never deletes custom resources. When
// it refuses so while the manager has no ready endpoint, it lets the webhooks that would refuse
// the printed cleanup fail open (cleanup.go), and says so. It deletes only objects that carry
// the release's Helm ownership, and holds the cluster's lock while it runs.
func (i *Installer) Uninstall(ctx context.Context, uo UninstallOptions) (*UninstallResult, error) {
	o := Options{ReleaseName: uo.ReleaseName, Namespace: uo.Namespace, Timeout: uo.Timeout}.withDefaults()
	lock, err := i.lockCluster(ctx, release.CmdUninstall, o)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer lock.onLost(cancel)()
	store, _, d, err := i.openRelease(ctx, release.CmdUninstall, o)
	if err != nil {
		return nil, err
	}
	switch d.Step {
	case release.StepRefuse:
		return nil, &RefusedError{Reason: d.Reason, Locked: d.Locked}
	case release.StepNone:
		return &UninstallResult{Result: Result{Release: o.ReleaseName, Namespace: o.Namespace, Step: d.Step, Message: d.Reason}, KeptCRDs: true}, nil
	}
	remaining, err := uninstallgate.Remaining(ctx, i.dynamic)
	if err != nil {
		return nil, fmt.Errorf("uninstall gate: %w", err)
	}
	if len(remaining) > 0 {
		if remaining, err = i.cleanupWithoutManager(ctx, o, remaining); err != nil {
			return nil, err
		}
	}
	act := release.NewUninstall(store.Config(), release.Options{ReleaseName: o.ReleaseName, Namespace: o.Namespace, Timeout: o.Timeout, Wait: uo.waits()})
	resp, err := act.Run(o.ReleaseName)
	if err != nil {
		return nil, fmt.Errorf("uninstall %s: %w", o.ReleaseName, err)
	}
	res := &UninstallResult{Result: Result{Release: o.ReleaseName, Namespace: o.Namespace, Step: release.StepUninstall, Status: "uninstalled"}, KeptCRDs: !uo.DeleteCRDs, Kept: act.Kept()}
	if resp != nil && resp.Release != nil {
		res.Revision = resp.Release.Version
	}
	if uo.DeleteCRDs {
		names, err := crds.Delete(ctx, i.metadata)
		res.DeletedCRDs = names
		if err != nil {
			return res, err
		}
	} else {
		res.Message = "the add-on's CRDs are kept; pass --delete-crds to remove them"
	}
	return res, nil
}

// CustomResources counts the add-on's user custom resources that exist, kind by kind, as the
// uninstall gate counts them; an empty list means none remain.
func (i *Installer) CustomResources(ctx context.Context) ([]uninstallgate.KindCount, error) {
	return uninstallgate.Remaining(ctx, i.dynamic)
}

// cleanupWithoutManager answers remaining users' objects: a refusal naming them. While the
// manager is down it first releases the objects the user already deleted that wait only for the
// manager's finalizers, and lets the webhooks that would refuse the printed cleanup fail open
// (cleanup.go); it returns what still remains after, nil when nothing does.
func (i *Installer) cleanupWithoutManager(ctx context.Context, o Options, remaining []uninstallgate.KindCount) ([]uninstallgate.KindCount, error) {
	refusal := func() *RefusedError {
		return &RefusedError{Reason: uninstallgate.Describe(remaining), Remaining: remaining}
	}
	down, err := i.managerDown(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%w; and reading the manager: %w", refusal(), err)
	}
	if !down {
		return nil, refusal()
	}
	opened, err := i.openCleanup(ctx, o, remaining)
	if err != nil {
		return nil, fmt.Errorf("%w; and with the manager down: %w", refusal(), err)
	}
	released, err := i.releaseHeld(ctx, remaining)
	if err != nil {
		return nil, fmt.Errorf("%w; and with the manager down: %w", refusal(), err)
	}
	if released > 0 {
		if remaining, err = uninstallgate.Remaining(ctx, i.dynamic); err != nil {
			return nil, fmt.Errorf("uninstall gate: %w", err)
		}
		if len(remaining) == 0 {
			return nil, nil
		}
	}
	refused := refusal()
	if len(opened) > 0 {
		refused.Reason += "\n" + openedCleanupNote(opened)
		refused.OpenedWebhooks = opened
	}
	if slices.ContainsFunc(remaining, func(kc uninstallgate.KindCount) bool { return len(kc.Finalizers) > 0 }) {
		refused.Reason += "\n" + heldNote
	}
	return nil, refused
}
