package installer

import (
	"context"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// openRelease is how every command starts: it opens the release storage of o.Namespace, reads
// the latest revision of o.ReleaseName, and decides what cmd does from its state.
func (i *Installer) openRelease(ctx context.Context, cmd release.Command, o Options) (*release.Store, *helmrelease.Release, release.Decision, error) {
	store, err := release.Open(i.getter, o.Namespace, func(string, ...any) {})
	if err != nil {
		return nil, nil, release.Decision{}, err
	}
	last, err := store.Last(ctx, o.ReleaseName)
	if err != nil {
		return nil, nil, release.Decision{}, err
	}
	return store, last, release.Decide(cmd, release.StateOf(last), o.ReleaseName), nil
}
