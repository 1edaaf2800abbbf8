package installer

import (
	"context"
	"encoding/json"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/apis/kinds"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/versions"
)

// Upgrade upgrades the release: validate, check the upgrade path, preflight, render, apply the
// CRDs server-side, then a Helm upgrade that reuses the previous values over the new chart's
// defaults (unless ResetValues). Everything is rendered client-side for the cluster's version
// before anything is applied. An upgrade that fails, Helm's failure or the add-on not ready
// within o.Timeout alike, is rolled back to the last deployed revision (see undo) and returns a
// *RolledBackError; the release is never left pending.
//
// o.Timeout bounds the whole command; when it passes or ctx ends while Helm is applying, the
// upgrade is rolled back, and that rollback may wait up to o.Timeout again.
func (i *Installer) Upgrade(ctx context.Context, o Options) (*Result, error) {
	return i.upgrade(ctx, o, release.CmdUpgrade, nil)
}

// upgrade is Upgrade for cmd: an install that repairs a failed release upgrades it, and is
// undone as an install (back to nothing) when no revision was ever deployed. held is the
// cluster's lock when the caller holds it already (an install); nil takes it here.
func (i *Installer) upgrade(ctx context.Context, o Options, cmd release.Command, held *clusterLock) (res *Result, err error) {
	o = o.withDefaults()
	p, err := prepare(o)
	if err != nil {
		return nil, err
	}
	// Helm gets the caller's context (a signal), not the deadline: its own Timeout ends at the
	// same moment.
	helmCtx, cancelHelm := context.WithCancelCause(ctx)
	defer cancelHelm(nil)
	ctx, cancel := withDeadline(ctx, o.Timeout)
	defer cancel(nil)
	defer func() { err = stopped(ctx, err) }()
	if err := verifyImages(ctx, p, o); err != nil {
		return nil, err
	}
	if held == nil {
		if held, err = i.lockCluster(ctx, cmd, o); err != nil {
			return nil, err
		}
		defer held.release()
	}
	defer held.onLost(cancel)()
	defer held.onLost(cancelHelm)()
	store, last, d, err := i.openRelease(ctx, release.CmdUpgrade, o)
	if err != nil {
		return nil, err
	}
	if d.Step == release.StepRefuse {
		return nil, &RefusedError{Reason: d.Reason, Locked: d.Locked}
	}
	from, to := last.Chart.Metadata.AppVersion, p.chart.Metadata.AppVersion
	if err := i.table.CheckUpgrade(from, to, versions.UpgradeOptions{Force: o.Force}); err != nil {
		return nil, &RefusedError{Reason: err.Error()}
	}
	current := merge(last.Config, p.values)
	if o.ResetValues {
		current = p.values
	}
	if err := validateConfigNamespace(p.chart, current, o.Namespace); err != nil {
		return nil, err
	}
	if err := validateFeatureGates(p.chart, current); err != nil {
		return nil, err
	}
	f, err := i.factsFor(ctx, configNamespace(p.chart, current))
	if err != nil {
		return nil, err
	}
	if err := otherRelease(f, o); err != nil {
		return nil, err
	}
	pf := runPreflight(i.table, p.chart, o, p.resolved, f, current)
	if pf.Report.Refused() {
		return nil, &RefusedError{Preflight: &pf.Report}
	}
	if p, err = withDaemonExclusions(p, o, pf.Report.DaemonExcludeNodes); err != nil {
		return nil, err
	}
	// Render with the values Helm will use: the previous ones under this command's, unless reset.
	effective := p
	if !o.ResetValues {
		effective.values = merge(last.Config, p.values)
	}
	manifest, err := renderForCluster(ctx, effective, o, f.ServerVersion)
	if err != nil {
		return nil, err
	}
	if _, err := i.ensureNamespace(ctx, o.Namespace); err != nil {
		return nil, err
	}
	if crdsManaged(current) {
		if err := i.adoptCRDs(ctx, o, pf.Report.CRDsToAdopt); err != nil {
			return nil, err
		}
		if err := i.applyCRDs(ctx, p.chart); err != nil {
			return nil, err
		}
	}
	helmTimeout := remaining(ctx, o.Timeout)
	act := release.NewUpgrade(store.Config(), release.Options{
		ReleaseName: o.ReleaseName, Namespace: o.Namespace, Timeout: helmTimeout, NoWait: o.NoWait,
		ResetValues: o.ResetValues, Force: o.Force,
	})
	var rel *helmrelease.Release
	err = i.withProgress(ctx, o.Namespace, readinessWait(o, helmTimeout), func() error {
		var err error
		rel, err = act.RunWithContext(helmCtx, o.ReleaseName, p.chart, p.values)
		return err
	})
	if err != nil {
		return nil, i.undo(ctx, store, failedRun{cmd: cmd, o: o, before: last.Version, manifest: manifest, cause: err})
	}
	res = resultOf(rel, release.StepUpgrade)
	res.Preflight = &pf.Report
	res.Webhook = i.webhookAfter(ctx, o)
	return res, nil
}

// crdsManaged reports whether the chart renders the CRDs (crds.managed, on unless turned off).
func crdsManaged(vals map[string]any) bool {
	managed, ok := lookup(vals, "crds", "managed")
	return !ok || managed != false
}

// adoptCRDs gives each named CRD of the add-on this release's Helm ownership metadata, so that
// Helm takes over those CRDs, and only those, instead of taking over every object the release
// renders. names come from preflight: our CRDs (apis/kinds) that exist without a live owner.
func (i *Installer) adoptCRDs(ctx context.Context, o Options, names []string) error {
	for _, name := range names {
		if !kinds.IsOurCRD(name) {
			return fmt.Errorf("adopt crd %s: not one of the add-on's CRDs", name)
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"labels": map[string]string{facts.LabelManagedBy: "Helm"},
			"annotations": map[string]string{
				facts.AnnotationReleaseName:      o.ReleaseName,
				facts.AnnotationReleaseNamespace: o.Namespace,
			},
		}})
		if err != nil {
			return fmt.Errorf("adopt crd %s: %w", name, err)
		}
		_, err = i.metadata.Resource(crdResource()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		switch {
		case apierrors.IsNotFound(err):
			// Gone since the facts were read (a deletion finishing): Helm creates it.
		case err != nil:
			return fmt.Errorf("adopt crd %s: %w", name, err)
		}
	}
	return nil
}

// applyCRDs applies the add-on's CRDs (apis/kinds) from the chart server-side with the
// installer's field manager, so that a changed schema is served before the new manager starts;
// Helm alone never upgrades CRDs reliably. A listed CRD missing from the chart is an error, not
// a silent skip.
func (i *Installer) applyCRDs(ctx context.Context, ch *chart.Chart) error {
	files := map[string][]byte{}
	for _, f := range ch.Files {
		files[f.Name] = f.Data
	}
	for _, k := range kinds.All() {
		name := crdFile(k)
		data, ok := files[name]
		if !ok {
			return fmt.Errorf("apply crd %s: the chart has no %s", k.CRDName(), name)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return fmt.Errorf("parse %s: %w", name, err)
		}
		if obj.GetKind() != "CustomResourceDefinition" || obj.GetName() != k.CRDName() {
			return fmt.Errorf("apply crd %s: %s holds %s %s", k.CRDName(), name, obj.GetKind(), obj.GetName())
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode %s: %w", name, err)
		}
		force := true
		if _, err := i.dynamic.Resource(crdResource()).Patch(ctx, k.CRDName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("apply crd %s: %w", k.CRDName(), err)
		}
	}
	return nil
}

// crdFile is where `make manifests` puts a kind's CRD in the chart.
func crdFile(k kinds.Kind) string { return "files/crds/" + k.Group + "_" + k.Resource + ".yaml" }
