package installer

import (
	"context"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// CheckUpgradePath refuses at once, with the *RefusedError the upgrade itself would give
// before applying anything, an upgrade of the release to o's chart (its own, the bundle's or
// ChartPath's) that the version table does not allow (unless o.Force). A release that an
// upgrade would not upgrade (absent, stuck, another's) passes: the upgrade decides it.
func (i *Installer) CheckUpgradePath(ctx context.Context, o Options) error {
	o = o.withDefaults()
	ch, _, err := loadChart(o)
	if err != nil {
		return err
	}
	_, last, d, err := i.openRelease(ctx, release.CmdUpgrade, o)
	if err != nil || d.Step != release.StepUpgrade || last == nil || last.Chart == nil {
		return err
	}
	if err := upgradePath(i.table, last.Chart.Metadata, ch.Metadata.AppVersion, o.Force); err != nil {
		return &RefusedError{Reason: err.Error()}
	}
	return nil
}
