package installer

import (
	"context"
	"fmt"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// Unlock frees a release stuck in pending-install, pending-upgrade, pending-rollback or
// uninstalling (an interrupted run): its latest revision is marked failed, which Helm's next
// upgrade, install repair or uninstall accepts. Nothing in the cluster is changed.
func (i *Installer) Unlock(ctx context.Context, o Options) (*Result, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	// A release that looks stuck may be one another installer is still changing: the lock
	// says so, and unlock waits for it to end or go stale.
	lock, err := i.lockCluster(ctx, release.CmdUnlock, o)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	store, last, d, err := i.openRelease(ctx, release.CmdUnlock, o)
	if err != nil {
		return nil, err
	}
	if d.Step != release.StepUnlock {
		res := &Result{Release: o.ReleaseName, Namespace: o.Namespace, Step: d.Step, Message: d.Reason}
		if last != nil {
			res = resultOf(last, d.Step)
			res.Message = d.Reason
		}
		return res, nil
	}
	was := last.Info.Status
	if err := store.MarkFailed(last, fmt.Sprintf("unlocked by kruise-addon: was %s", was)); err != nil {
		return nil, err
	}
	res := resultOf(last, release.StepUnlock)
	res.Message = fmt.Sprintf("release %s revision %d was stuck %s and is now marked failed; run `kruise-addon upgrade` (or uninstall) to continue", last.Name, last.Version, was)
	return res, nil
}
