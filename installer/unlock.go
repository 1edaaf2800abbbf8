package installer

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"

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
	cfg, err := i.helmConfig(o.Namespace)
	if err != nil {
		return nil, err
	}
	last, err := readRelease(ctx, cfg, o.ReleaseName)
	if err != nil {
		return nil, err
	}
	d := release.Decide(release.CmdUnlock, release.StateOf(last), o.ReleaseName)
	if d.Step != release.StepUnlock {
		res := &Result{Release: o.ReleaseName, Namespace: o.Namespace, Step: d.Step, Message: d.Reason}
		if last != nil {
			res = resultOf(last, d.Step)
			res.Message = d.Reason
		}
		return res, nil
	}
	was := last.Info.Status
	if err := unlock(cfg, last); err != nil {
		return nil, err
	}
	res := resultOf(last, release.StepUnlock)
	res.Message = fmt.Sprintf("release %s revision %d was stuck %s and is now marked failed; run `kruise-addon upgrade` (or uninstall) to continue", last.Name, last.Version, was)
	return res, nil
}

func unlock(cfg *action.Configuration, r *helmrelease.Release) error {
	was := r.Info.Status
	r.Info.Status = helmrelease.StatusFailed
	r.Info.Description = fmt.Sprintf("unlocked by kruise-addon: was %s", was)
	if err := cfg.Releases.Update(r); err != nil {
		return fmt.Errorf("unlock release %s: %w", r.Name, err)
	}
	return nil
}
