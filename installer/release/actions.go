package release

import (
	"io"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/kruise-addon/kruise-addon/installer/facts"
)

// Options are the installer's Helm-level choices.
type Options struct {
	ReleaseName string
	Namespace   string
	Timeout     time.Duration
	// Wait waits for the release's objects to be ready (install, upgrade) or gone (uninstall);
	// without it an install or upgrade only applies, and Recover then leaves a failure in place.
	Wait bool
	// ResetValues drops the previous user values on upgrade; by default they are reused on top
	// of the new chart's defaults (reset-then-reuse).
	ResetValues bool
	// Force replaces resources that cannot be patched, as helm's --force.
	Force bool
	// KubeVersion is used for client-only renders.
	KubeVersion *chartutil.KubeVersion
	// MaxHistory bounds stored revisions; 0 keeps Helm's default.
	MaxHistory int
}

// NewInstall is an install that waits (with Wait) and records a failure as a failed
// revision. It is not Helm-atomic: the installer undoes a failure itself, as Recover decides,
// because Helm's wait is not the add-on's readiness and both failures must end the same way.
func NewInstall(cfg *action.Configuration, o Options) *action.Install {
	a := action.NewInstall(cfg)
	a.ReleaseName, a.Namespace = o.ReleaseName, o.Namespace
	// The installer creates and labels the namespace itself, before any webhook exists.
	a.CreateNamespace = false
	a.Timeout = o.Timeout
	a.Wait = o.Wait
	// Never TakeOwnership: it would adopt every rendered object that exists, a namespace
	// included, and the uninstall would then delete it. The installer adopts the add-on's own
	// CRDs one by one before the action instead.
	return a
}

// RenderConfig is a Helm configuration for client-only renders: its release storage is in
// memory and its client prints nothing, so nothing reaches a cluster.
func RenderConfig() *action.Configuration {
	return &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
}

// NewRender is a client-only install that only renders, for a given cluster version.
func NewRender(cfg *action.Configuration, o Options) *action.Install {
	a := action.NewInstall(cfg)
	a.ReleaseName, a.Namespace = o.ReleaseName, o.Namespace
	a.DryRun, a.DryRunOption = true, "client"
	a.ClientOnly = true
	a.Replace = true
	a.IncludeCRDs = true
	a.KubeVersion = o.KubeVersion
	return a
}

// NewUpgrade is an upgrade that waits (with Wait), removes what it created when it fails,
// and reuses the previous user values on top of the new chart's defaults unless ResetValues.
// Like NewInstall it is not Helm-atomic: Recover decides the rollback.
func NewUpgrade(cfg *action.Configuration, o Options) *action.Upgrade {
	a := action.NewUpgrade(cfg)
	a.Namespace = o.Namespace
	a.Timeout = o.Timeout
	a.Wait = o.Wait
	a.CleanupOnFail = true
	a.ResetValues = o.ResetValues
	a.ResetThenReuseValues = !o.ResetValues
	a.Force = o.Force
	a.MaxHistory = o.MaxHistory
	// Never TakeOwnership; see NewInstall.
	return a
}

// Uninstall is Helm's uninstall on a kube client that deletes only the release's own objects.
type Uninstall struct {
	*action.Uninstall
	client *ownedOnly
}

// Kept describes the objects of the release's manifest the uninstall left in place because they
// carry another release's ownership, or none, now: "ClusterRole kruise-manager-role (owned by
// release cb/kruise-addon)". Set once Run returned.
func (u *Uninstall) Kept() []string { return u.client.Kept() }

// NewUninstall removes release o.ReleaseName of namespace o.Namespace and waits (o.Wait) for its
// objects to go. It deletes only objects that carry that release's Helm ownership: Helm alone
// deletes every name in the manifest, whoever owns it now. CRDs carry helm.sh/resource-policy:
// keep, so Helm leaves them.
func NewUninstall(cfg *action.Configuration, o Options) *Uninstall {
	client := &ownedOnly{Interface: cfg.KubeClient, owner: facts.Owner{Release: o.ReleaseName, Namespace: o.Namespace}}
	owned := *cfg
	owned.KubeClient = client
	a := action.NewUninstall(&owned)
	a.Timeout = o.Timeout
	a.Wait = o.Wait
	// The installer runs the uninstall gate in Go before calling Helm; the chart's pre-delete
	// hook is for plain `helm uninstall` users, and a failing hook would leave the release stuck
	// uninstalling.
	a.DisableHooks = true
	return &Uninstall{Uninstall: a, client: client}
}

// NewRollback goes back to a revision, waiting for it. The chart's only hook is the
// pre-delete gate, which a rollback never runs.
func NewRollback(cfg *action.Configuration, o Options, revision int) *action.Rollback {
	a := action.NewRollback(cfg)
	a.Version = revision
	a.Timeout = o.Timeout
	a.Wait = true
	a.CleanupOnFail = true
	a.MaxHistory = o.MaxHistory
	return a
}
