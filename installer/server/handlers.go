package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
	"github.com/kruise-addon/kruise-addon/versions"
)

// VersionsResponse is the compatibility table for a cluster.
type VersionsResponse struct {
	installer.VersionsResult
	// Recommended is the version to install: the newest supporting the cluster, when a cluster
	// is named, else this server's.
	Recommended string `json:"recommended"`
	// Installable is the version of this server's own chart.
	Installable string `json:"installable"`
	// InstallableVersions are every version this server has a chart for: its own, then the
	// bundles it was given; a request's version picks among them.
	InstallableVersions []Installable `json:"installableVersions"`
	// ChartRepositoryError says why the chart repository's versions are missing.
	ChartRepositoryError string `json:"chartRepositoryError,omitempty"`
}

// getVersions lists versions, only those supporting ?clusterVersion= or the version of
// ?cluster= when given.
func (s *Server) getVersions(w http.ResponseWriter, r *http.Request, _ Caller) {
	cv := r.URL.Query().Get("clusterVersion")
	if name := r.URL.Query().Get("cluster"); name != "" {
		if cv != "" {
			badInput(w, errors.New("query: give cluster or clusterVersion, not both"))
			return
		}
		c, ok := s.clusters[name]
		if !ok {
			notFound(w, fmt.Sprintf("no cluster %q in the clusters file; known: %v", name, s.clusters.Names()))
			return
		}
		i, err := s.installerFor(c)
		if err != nil {
			fail(w, err)
			return
		}
		if cv, err = i.ServerVersion(); err != nil {
			fail(w, fmt.Errorf("cluster %s: server version: %w", name, err))
			return
		}
	}
	res, err := installer.Versions(cv)
	if err != nil {
		fail(w, err)
		return
	}
	if res.Rows == nil {
		// No version supports the cluster: the document's rows is an array, never null.
		res.Rows = []versions.Row{}
	}
	out := VersionsResponse{VersionsResult: res, Recommended: res.Current, Installable: res.Current}
	if out.InstallableVersions, err = s.charts.installable(r.Context()); err != nil {
		// The repository's versions are missing; the others are listed.
		out.ChartRepositoryError = err.Error()
	}
	if res.Cluster != "" {
		out.Recommended = ""
		parsed, _ := versions.ParseClusterVersion(res.Cluster)
		if row, err := s.table.NewestCompatible(parsed); err == nil {
			out.Recommended = row.Addon
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// servedVersion checks the server has a chart of the path's version.
func (s *Server) servedVersion(w http.ResponseWriter, r *http.Request) bool {
	v := r.PathValue("version")
	var have []string
	all, _ := s.charts.installable(r.Context())
	for _, i := range all {
		if i.Version == v {
			return true
		}
		have = append(have, i.Version)
	}
	notFound(w, fmt.Sprintf("this server carries the chart of add-on %s only, not %q", strings.Join(have, ", "), v))
	return false
}

// getSchema answers the values.schema.json of the version's chart.
func (s *Server) getSchema(w http.ResponseWriter, r *http.Request, _ Caller) {
	if !s.servedVersion(w, r) {
		return
	}
	schema, err := s.charts.schema(r.Context(), r.PathValue("version"))
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/schema+json")
	_, _ = w.Write(schema)
}

// Preset is a manager size as install applies it.
type Preset struct {
	spec.Spec
	Description string `json:"description"`
	// Overridable is true for custom, whose replicas and resources a request sets.
	Overridable bool `json:"overridable"`
}

// PresetsResponse lists the presets of a version.
type PresetsResponse struct {
	Version string   `json:"version"`
	Presets []Preset `json:"presets"`
	// Default is the preset install uses when none is given.
	Default spec.Preset `json:"default"`
}

func (s *Server) getPresets(w http.ResponseWriter, r *http.Request, _ Caller) {
	if !s.servedVersion(w, r) {
		return
	}
	out := PresetsResponse{Version: r.PathValue("version"), Default: spec.Small}
	for _, p := range []struct {
		preset spec.Preset
		desc   string
	}{
		{spec.Small, fmt.Sprintf("one manager replica, for clusters under %d nodes", spec.LargeClusterNodes)},
		{spec.Large, "HA: several replicas over zones, with a disruption budget"},
		{spec.Custom, "replicas and resources from the request; the rest as small"},
	} {
		sp, err := spec.For(p.preset, spec.Overrides{})
		if err != nil {
			fail(w, err)
			return
		}
		out.Presets = append(out.Presets, Preset{Spec: sp, Description: p.desc, Overridable: p.preset == spec.Custom})
	}
	writeJSON(w, http.StatusOK, out)
}

// ClustersResponse lists the configured clusters.
type ClustersResponse struct {
	Clusters []Cluster `json:"clusters"`
}

func (s *Server) getClusters(w http.ResponseWriter, _ *http.Request, _ Caller) {
	out := ClustersResponse{Clusters: []Cluster{}}
	for _, n := range s.clusters.Names() {
		out.Clusters = append(out.Clusters, s.clusters[n])
	}
	writeJSON(w, http.StatusOK, out)
}

// PreflightResponse is preflight's result; Refused says whether install would be refused (the
// CLI's exit code 3).
type PreflightResponse struct {
	installer.PreflightResult
	Refused bool `json:"refused"`
}

func (s *Server) postPreflight(w http.ResponseWriter, r *http.Request, _ Caller) {
	c, ok := s.cluster(w, r)
	if !ok {
		return
	}
	var req ApplyRequest
	if err := decode(r.Body, &req); err != nil {
		s.badBody(w, err)
		return
	}
	// Preflight checks the values it is given, as install would.
	o, err := req.checkedOptions(r.Context(), s.charts)
	if err != nil {
		fail(w, err)
		return
	}
	i, err := s.installerFor(c)
	if err != nil {
		fail(w, err)
		return
	}
	res, err := i.Preflight(r.Context(), o)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, PreflightResponse{PreflightResult: preflightForConsole(res), Refused: res.Report.Refused()})
}

// AddonResponse is the add-on on a cluster, with its health.
type AddonResponse struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Release   string `json:"release"`
	// Healthy is true when there is no issue (an absent release with nothing left is healthy).
	Healthy bool    `json:"healthy"`
	Issues  []Issue `json:"issues"`
	// Operation is the operation running on the release, if any.
	Operation string           `json:"operation,omitempty"`
	Status    installer.Status `json:"status"`
	// FactsError says why the nodes could not be read for the runtime check.
	FactsError string `json:"factsError,omitempty"`
}

func (s *Server) getAddon(w http.ResponseWriter, r *http.Request, _ Caller) {
	c, ok := s.cluster(w, r)
	if !ok {
		return
	}
	ref := ReleaseRef{ReleaseName: r.URL.Query().Get("release"), Namespace: r.URL.Query().Get("namespace")}
	if errs := ref.validate(); len(errs) > 0 {
		badInput(w, errs.ToAggregate())
		return
	}
	ref = ref.withDefaults()
	i, err := s.installerFor(c)
	if err != nil {
		fail(w, err)
		return
	}
	out, err := s.addon(r.Context(), i, c.Name, ref)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// addon reads the status, the facts (for the runtime check) and, when the release is gone or
// going, the custom resources left, and derives the health issues.
func (s *Server) addon(ctx context.Context, i *installer.Installer, cluster string, ref ReleaseRef) (*AddonResponse, error) {
	st, err := i.Status(ctx, installer.Options{ReleaseName: ref.ReleaseName, Namespace: ref.Namespace})
	if err != nil {
		return nil, err
	}
	// The advice names CLI commands; a console reads the same from issues, by code.
	st.Advice = ""
	out := &AddonResponse{Cluster: cluster, Namespace: ref.Namespace, Release: ref.ReleaseName, Status: *st,
		Operation: s.ops.runningOn(releaseKey{cluster, ref.Namespace, ref.ReleaseName})}
	in := healthInput{Namespace: ref.Namespace, Release: ref.ReleaseName, Status: *st, Table: s.table, RunningOperation: out.Operation}
	state := release.State(st.State)
	if state == release.Absent || state == release.Uninstalling {
		var remaining []uninstallgate.KindCount
		if remaining, err = i.CustomResources(ctx); err != nil {
			return nil, fmt.Errorf("count custom resources: %w", err)
		}
		in.Remaining = remaining
	} else if st.Readiness.DaemonPresent {
		var f facts.Facts
		if f, err = i.Facts(ctx); err != nil {
			out.FactsError = err.Error()
		} else {
			in.Facts = &f
		}
	}
	out.Issues = healthIssues(in)
	out.Healthy = len(out.Issues) == 0
	return out, nil
}

// OperationResponse answers an accepted operation (202).
type OperationResponse struct {
	Operation Operation `json:"operation"`
}

// postApply starts an install or upgrade.
func (s *Server) postApply(action string) func(http.ResponseWriter, *http.Request, Caller) {
	return func(w http.ResponseWriter, r *http.Request, caller Caller) {
		var req ApplyRequest
		c, ok := s.request(w, r, &req, &req.ReleaseRef)
		if !ok {
			return
		}
		o, err := req.checkedOptions(r.Context(), s.charts)
		if err != nil {
			fail(w, err)
			return
		}
		if o.AddonVersion != "" {
			// A version the request chose is checked at once: 409 with the reason an
			// operation would fail with.
			if err := s.checkVersion(r.Context(), c, action, o); err != nil {
				fail(w, err)
				return
			}
		}
		s.startOperation(w, caller, c, action, req.ReleaseRef.withDefaults(), func(ctx context.Context, i *installer.Installer) (any, error) {
			if action == "install" {
				return i.Install(ctx, o)
			}
			return i.Upgrade(ctx, o)
		})
	}
}

// checkVersion refuses a chosen version the cluster's version does not support, and an
// upgrade to it the version table's path rules do not allow, as the operation would.
func (s *Server) checkVersion(ctx context.Context, c Cluster, action string, o installer.Options) error {
	i, err := s.installerFor(c)
	if err != nil {
		return err
	}
	cv, err := i.ServerVersion()
	if err != nil {
		return fmt.Errorf("cluster %s: server version: %w", c.Name, err)
	}
	parsed, err := versions.ParseClusterVersion(cv)
	if err != nil {
		return fmt.Errorf("cluster %s: server version %q: %w", c.Name, cv, err)
	}
	if ok, _ := s.table.Supported(o.AddonVersion, parsed); !ok {
		return &installer.RefusedError{Reason: s.table.Explain(o.AddonVersion, parsed)}
	}
	if action != "upgrade" {
		return nil
	}
	return i.CheckUpgradePath(ctx, o)
}

func (s *Server) postUninstall(w http.ResponseWriter, r *http.Request, caller Caller) {
	postOnRelease[UninstallRequest](s, w, r, caller, "uninstall", func(ctx context.Context, i *installer.Installer, uo installer.UninstallOptions) (any, error) {
		// The timeout bounds the whole uninstall, the gate's reads included, as the CLI's does.
		ctx, cancel := context.WithTimeoutCause(ctx, uo.Timeout, &installer.TimeoutError{Timeout: uo.Timeout})
		defer cancel()
		return i.Uninstall(ctx, uo)
	})
}

func (s *Server) postUnlock(w http.ResponseWriter, r *http.Request, caller Caller) {
	var req ReleaseRef
	c, ok := s.request(w, r, &req, &req)
	if !ok {
		return
	}
	if errs := req.validate(); len(errs) > 0 {
		badInput(w, errs.ToAggregate())
		return
	}
	ref := req.withDefaults()
	s.startOperation(w, caller, c, "unlock", ref, func(ctx context.Context, i *installer.Installer) (any, error) {
		return i.Unlock(ctx, installer.Options{ReleaseName: ref.ReleaseName, Namespace: ref.Namespace})
	})
}

func (s *Server) postRollback(w http.ResponseWriter, r *http.Request, caller Caller) {
	postOnRelease[RollbackRequest](s, w, r, caller, "rollback", func(ctx context.Context, i *installer.Installer, ro installer.RollbackOptions) (any, error) {
		return i.Rollback(ctx, ro)
	})
}

// postOnRelease answers a call that runs action on one release: it decodes the body into a Req,
// turns that into the action's options O (answering 400 when they are invalid) and starts run
// with them.
func postOnRelease[Req any, PReq interface {
	*Req
	release() *ReleaseRef
	options() (O, error)
}, O any](s *Server, w http.ResponseWriter, r *http.Request, caller Caller, action string, run func(context.Context, *installer.Installer, O) (any, error)) {
	req := PReq(new(Req))
	c, ok := s.request(w, r, req, req.release())
	if !ok {
		return
	}
	o, err := req.options()
	if err != nil {
		fail(w, err)
		return
	}
	s.startOperation(w, caller, c, action, req.release().withDefaults(), func(ctx context.Context, i *installer.Installer) (any, error) {
		return run(ctx, i, o)
	})
}

// request finds the cluster of a mutating call and decodes its body into v, whose release
// ref is then noted for the audit log; it answers 404 or 400 itself.
func (s *Server) request(w http.ResponseWriter, r *http.Request, v any, ref *ReleaseRef) (Cluster, bool) {
	c, ok := s.cluster(w, r)
	if !ok {
		return c, false
	}
	if err := decode(r.Body, v); err != nil {
		s.badBody(w, err)
		return c, false
	}
	note(w, ref.withDefaults(), "")
	return c, true
}

// startOperation runs f on its own installer, whose progress becomes the operation's events,
// and answers 202, or 409 with the operation already running on the release.
func (s *Server) startOperation(w http.ResponseWriter, caller Caller, c Cluster, action string, ref ReleaseRef, f func(context.Context, *installer.Installer) (any, error)) {
	op := Operation{Action: action, Cluster: c.Name, Namespace: ref.Namespace, Release: ref.ReleaseName, Caller: caller.Name}
	reqID := requestIDOf(w)
	run := func(ctx context.Context, rec *recorder) (any, error) {
		i, err := s.installerFor(c, installer.WithProgress(rec), installer.WithReadiness(rec.readiness))
		if err != nil {
			return nil, err
		}
		return f(ctx, i)
	}
	done := func(fin Operation) {
		a := AuditRecord{Who: caller.Name, Role: caller.Role, Via: caller.Via, Action: action, Cluster: c.Name,
			Namespace: ref.Namespace, Release: ref.ReleaseName, Operation: fin.ID, Phase: "finished", Result: fin.State, RequestID: reqID}
		if fin.Error != nil {
			a.Reason, a.Error = fin.Error.Reason, fin.Error.Error
		}
		s.audit.write(a)
		s.log.Info("Operation finished", "operation", fin.ID, "action", action, "cluster", c.Name, "state", fin.State)
	}
	// The request's audit line is written once the operation exists and before it runs, so the
	// log never tells an operation's end before its acceptance.
	accepted := func(o Operation) {
		note(w, ref, o.ID)
		if rec, ok := w.(*statusRecorder); ok {
			rec.audited = true
		}
		s.audit.write(AuditRecord{Who: caller.Name, Role: caller.Role, Via: caller.Via, Action: action, Cluster: c.Name,
			Namespace: ref.Namespace, Release: ref.ReleaseName, Operation: o.ID, Phase: "request", HTTPStatus: http.StatusAccepted, Result: "accepted", RequestID: reqID})
	}
	started, running, ok := s.ops.start(s.ctx, op, run, accepted, done)
	if !ok {
		note(w, ref, running)
		writeError(w, ErrorBody{
			Error:  fmt.Sprintf("operation %s is running on release %s/%s of cluster %s; wait for it (GET /v1/operations/%s) and retry", running, ref.Namespace, ref.ReleaseName, c.Name, running),
			Reason: ReasonOperationInProgress, ExitCode: installer.ExitRefused, Operation: running,
		})
		return
	}
	note(w, ref, started.ID)
	w.Header().Set("Location", "/v1/operations/"+started.ID)
	writeJSON(w, http.StatusAccepted, OperationResponse{Operation: started})
}

// OperationsResponse lists operations, newest first.
type OperationsResponse struct {
	Operations []Operation `json:"operations"`
}

func (s *Server) getOperations(w http.ResponseWriter, r *http.Request, _ Caller) {
	clusters := s.clusters.Names()
	if c := r.URL.Query().Get("cluster"); c != "" {
		clusters = []string{c}
	}
	writeJSON(w, http.StatusOK, OperationsResponse{Operations: s.ops.list(r.Context(), clusters)})
}

// operation finds the path's operation: this server's, or one whose record a cluster keeps.
func (s *Server) operation(w http.ResponseWriter, r *http.Request) (*operation, bool) {
	id := r.PathValue("id")
	if o, ok := s.ops.get(id); ok {
		return o, true
	}
	o, ok, err := s.ops.lookup(r.Context(), id)
	if !ok {
		msg := fmt.Sprintf("no operation %q on this server, nor a record of it in any cluster's release namespace (a release keeps its latest %d); GET the cluster's addon for the release's state", id, maxStoredOperations)
		if err != nil {
			msg += "; clusters not read: " + err.Error()
		}
		notFound(w, msg)
	}
	return o, ok
}

func (s *Server) getOperation(w http.ResponseWriter, r *http.Request, _ Caller) {
	o, ok := s.operation(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, o.snapshot())
}
