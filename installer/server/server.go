package server

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/versions"
)

//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIDocument is the checked-in OpenAPI document of the API.
func OpenAPIDocument() []byte { return append([]byte(nil), openAPIYAML...) }

// NewInstallerFunc makes the installer for one cluster; installer.New by default.
type NewInstallerFunc func(genericclioptions.RESTClientGetter, ...installer.Option) (*installer.Installer, error)

// Options configure New.
type Options struct {
	Clusters Clusters
	// Access are the callers; TokensFile, when set instead, is read again when it changes.
	Access     *Access
	TokensFile *AccessFile
	// Audit receives the audit log, one JSON line per record.
	Audit io.Writer
	// Context bounds the operations: when it ends, running operations are cancelled and undone
	// as the CLI's are on a signal.
	Context context.Context
	Log     logr.Logger
	// Limits bound the clients (the limits: section of --config); fields left 0 take their
	// defaults.
	Limits Limits
	// TokenReview, when set, authenticates the bearer tokens the tokens file does not know.
	TokenReview *TokenReviewOptions
	// NewInstaller and Now are for tests.
	NewInstaller NewInstallerFunc
	Now          func() time.Time
	// BundleDir holds the air-gap bundles a request may install from, by file name (serve
	// --bundle-dir); "" for none.
	BundleDir string
	// BundleKey is a PEM public key (serve --bundle-key): every bundle of BundleDir a request
	// installs from must carry a signature that verifies with it; "" checks no signature.
	BundleKey string
	// ChartRepository is the URL of a Helm chart repository whose charts of the add-on a
	// request's version may also pick (serve --chart-repo); "" for none.
	ChartRepository string
	// KubeClient makes the client that reads and writes a cluster's operation records (see
	// records.go); by default one from the cluster's kubeconfig. For tests.
	KubeClient func(Cluster) (kubernetes.Interface, error)
}

// Server is the HTTP API.
type Server struct {
	clusters     Clusters
	access       accessSource
	audit        *auditLog
	ops          *operations
	charts       *charts
	ctx          context.Context
	log          logr.Logger
	newInstaller NewInstallerFunc
	now          func() time.Time
	table        *versions.Table
	openAPIJSON  []byte
	mux          *http.ServeMux
	limits       Limits
	metrics      *metrics
	unauth       *unauthenticated
	idem         *idempotency
	reviewer     *tokenReviewer
}

// Route is one route of the API.
type Route struct {
	Method, Pattern string
	// Role is the least role that may call it.
	Role Role
	// Action is the audited action of a mutating route, "" for reads.
	Action string
	// Public routes need no caller: the probes, which say nothing but whether the server
	// serves.
	Public  bool
	handler func(http.ResponseWriter, *http.Request, Caller)
}

// New builds the server.
func New(o Options) (*Server, error) {
	var access accessSource = o.Access
	if o.TokensFile != nil {
		access = o.TokensFile
	} else if o.Access == nil {
		return nil, fmt.Errorf("no access configuration: every route needs an authenticated caller")
	}
	if len(o.Clusters) == 0 {
		return nil, fmt.Errorf("no clusters configured")
	}
	if errs := o.Limits.validate(field.NewPath("limits")); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	s := &Server{clusters: o.Clusters, access: access, ctx: o.Context, log: o.Log, newInstaller: o.NewInstaller, now: o.Now,
		limits: o.Limits.withDefaults(), metrics: newMetrics()}
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	if s.newInstaller == nil {
		s.newInstaller = installer.New
	}
	if s.now == nil {
		s.now = time.Now
	}
	audit := o.Audit
	if audit == nil {
		audit = io.Discard
	}
	s.audit = &auditLog{w: audit, now: s.now, log: s.log}
	store := newRecordStore(o.Clusters)
	if o.KubeClient != nil {
		store.kubeFor = o.KubeClient
	}
	s.ops = newOperations(s.now, store, s.log)
	s.unauth = newUnauthenticated(s.limits, s.now())
	s.idem = newIdempotency()
	if o.TokenReview != nil {
		var err error
		if s.reviewer, err = newTokenReviewer(*o.TokenReview, s.now); err != nil {
			return nil, err
		}
	}
	var err error
	if s.table, err = versions.Load(); err != nil {
		return nil, err
	}
	if s.charts, err = newCharts(s.table.CurrentRow().Addon, o.BundleDir, o.ChartRepository); err != nil {
		return nil, err
	}
	if o.BundleKey != "" {
		if o.BundleDir == "" {
			return nil, fmt.Errorf("a bundle key checks the bundles of a bundle directory: give the directory too")
		}
		if err := bundle.CheckPublicKey([]byte(o.BundleKey)); err != nil {
			return nil, fmt.Errorf("bundle key: %w", err)
		}
	}
	s.charts.bundleKey = o.BundleKey
	if s.openAPIJSON, err = yaml.YAMLToJSON(openAPIYAML); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	s.mux = http.NewServeMux()
	// Requests are counted by route template, never by raw path, so that IDs and unknown paths
	// cannot grow the metrics.
	for _, r := range s.Routes() {
		s.mux.Handle(r.Method+" "+r.Pattern, s.metrics.instrument(r.Pattern, s.guard(r)))
	}
	// Anything else is a JSON 405 on a known path, else 404, after authentication like every
	// route.
	s.mux.Handle("/", s.metrics.instrument(otherRoute, s.guard(Route{Role: ReadOnly, handler: func(w http.ResponseWriter, r *http.Request, _ Caller) {
		if allow := s.methodsFor(r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, ErrorBody{Error: fmt.Sprintf("%s %s: the path answers %s only; see /openapi.yaml", r.Method, r.URL.Path, strings.Join(allow, ", ")),
				Reason: ReasonMethodNotAllowed, ExitCode: installer.ExitError})
			return
		}
		notFound(w, fmt.Sprintf("no route %s %s; see /openapi.yaml", r.Method, r.URL.Path))
	}})))
	return s, nil
}

// Routes lists every route; the OpenAPI document must describe each.
func (s *Server) Routes() []Route {
	return []Route{
		{Method: "GET", Pattern: "/openapi.yaml", Role: ReadOnly, handler: s.openAPI("application/yaml", openAPIYAML)},
		{Method: "GET", Pattern: "/openapi.json", Role: ReadOnly, handler: func(w http.ResponseWriter, r *http.Request, c Caller) {
			s.openAPI("application/json", s.openAPIJSON)(w, r, c)
		}},
		{Method: "GET", Pattern: "/v1/versions", Role: ReadOnly, handler: s.getVersions},
		{Method: "GET", Pattern: "/v1/versions/{version}/schema", Role: ReadOnly, handler: s.getSchema},
		{Method: "GET", Pattern: "/v1/versions/{version}/presets", Role: ReadOnly, handler: s.getPresets},
		{Method: "GET", Pattern: "/v1/clusters", Role: ReadOnly, handler: s.getClusters},
		{Method: "POST", Pattern: "/v1/clusters/{cluster}/preflight", Role: ReadOnly, handler: s.postPreflight},
		{Method: "GET", Pattern: "/v1/clusters/{cluster}/addon", Role: ReadOnly, handler: s.getAddon},
		{Method: "POST", Pattern: "/v1/clusters/{cluster}/addon/install", Role: Operator, Action: "install", handler: s.postApply("install")},
		{Method: "POST", Pattern: "/v1/clusters/{cluster}/addon/upgrade", Role: Operator, Action: "upgrade", handler: s.postApply("upgrade")},
		{Method: "POST", Pattern: "/v1/clusters/{cluster}/addon/uninstall", Role: Operator, Action: "uninstall", handler: s.postUninstall},
		{Method: "POST", Pattern: "/v1/clusters/{cluster}/addon/unlock", Role: Operator, Action: "unlock", handler: s.postUnlock},
		{Method: "POST", Pattern: "/v1/clusters/{cluster}/addon/rollback", Role: Operator, Action: "rollback", handler: s.postRollback},
		{Method: "GET", Pattern: "/v1/operations", Role: ReadOnly, handler: s.getOperations},
		{Method: "GET", Pattern: "/v1/operations/{id}", Role: ReadOnly, handler: s.getOperation},
		{Method: "GET", Pattern: "/v1/operations/{id}/events", Role: ReadOnly, handler: s.getEvents},
		{Method: "GET", Pattern: "/metrics", Role: ReadOnly, handler: s.getMetrics},
		{Method: "GET", Pattern: "/healthz", Public: true, handler: s.getHealthz},
		{Method: "GET", Pattern: "/readyz", Public: true, handler: s.getReadyz},
	}
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Wait blocks until every operation has ended (after Options.Context ended, they undo and end).
func (s *Server) Wait() { s.ops.wait() }

// statusRecorder keeps the status a handler answered with, for the audit log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	body   ErrorBody
	// requestID is the request's X-Request-ID.
	requestID string
	ref       ReleaseRef
	op        string
	// audited is set once the call's audit line is written (an accepted operation's, before
	// the operation runs).
	audited bool
	// keep, when set, receives a copy of the body written (an idempotent call's answer).
	keep *bytes.Buffer
	// replayed is set when the answer is an earlier call's, for the same Idempotency-Key.
	replayed bool
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.keep != nil {
		w.keep.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (an event stream extends its write
// deadline).
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// guard authenticates the caller, checks the route's role, bounds the body, and audits the
// mutating routes of known callers. A request without a known caller is only counted
// (refuseUnauthenticated).
func (s *Server) guard(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := requestID(r)
		w.Header().Set(requestIDHeader, id)
		if rt.Public {
			rt.handler(w, r, Caller{})
			return
		}
		caller, ok, err := s.authenticate(r)
		if err != nil {
			// Never an accept: the caller may retry once the cluster answers again.
			s.log.Error(err, "Caller not authenticated: the token review could not be made")
			unavailable(w, "the token cannot be checked now (the cluster's TokenReview did not answer); retry after Retry-After seconds")
			return
		}
		if !ok {
			s.refuseUnauthenticated(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.limits.MaxBodyBytes)
		rec := &statusRecorder{ResponseWriter: w, requestID: id}
		if rt.Action != "" {
			defer func() {
				if !rec.audited {
					s.auditRequest(rt, r, caller, rec)
				}
			}()
		}
		switch {
		case !may(caller.Role, rt.Role):
			writeError(rec, ErrorBody{Error: fmt.Sprintf("%s is %s; %s %s needs the %s role", caller.Name, caller.Role, rt.Method, rt.Pattern, rt.Role), Reason: ReasonForbidden, ExitCode: installer.ExitError})
		case rt.Action != "" && s.ctx.Err() != nil:
			// The server stops: an operation started now would be cancelled at once.
			unavailable(rec, "the server is stopping and starts no operation; retry after Retry-After seconds, on its successor")
		case r.ContentLength > s.limits.MaxBodyBytes:
			// Refused before a byte of it is read.
			s.bodyTooLarge(rec)
		case rt.Action != "" && r.Header.Get(idempotencyHeader) != "":
			s.idempotent(rt, rec, r, caller)
		default:
			rt.handler(rec, r, caller)
		}
	})
}

func (s *Server) auditRequest(rt Route, r *http.Request, c Caller, rec *statusRecorder) {
	a := AuditRecord{Who: c.Name, Role: c.Role, Via: c.Via, Action: rt.Action, Cluster: r.PathValue("cluster"),
		Phase: "request", HTTPStatus: rec.status, Operation: rec.op, RequestID: rec.requestID, Replayed: rec.replayed}
	a.Namespace, a.Release = rec.ref.Namespace, rec.ref.ReleaseName
	switch {
	case rec.status == http.StatusAccepted:
		a.Result = "accepted"
	case rec.status == http.StatusForbidden:
		a.Result = "denied"
	default:
		a.Result = "rejected"
	}
	if rec.status != http.StatusAccepted {
		a.Reason, a.Error = rec.body.Reason, rec.body.Error
	}
	s.audit.write(a)
}

// note keeps what the audit log says about a call: its release and its operation.
func note(w http.ResponseWriter, ref ReleaseRef, op string) {
	if rec, ok := w.(*statusRecorder); ok {
		rec.ref, rec.op = ref, op
	}
}

func (s *Server) openAPI(contentType string, doc []byte) func(http.ResponseWriter, *http.Request, Caller) {
	return func(w http.ResponseWriter, _ *http.Request, _ Caller) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(doc)
	}
}

// cluster finds the request's cluster, or answers 404.
func (s *Server) cluster(w http.ResponseWriter, r *http.Request) (Cluster, bool) {
	name := r.PathValue("cluster")
	c, ok := s.clusters[name]
	if !ok {
		notFound(w, fmt.Sprintf("no cluster %q in the clusters file; known: %v", name, s.clusters.Names()))
	}
	return c, ok
}

// installer connects to a cluster with the given options.
func (s *Server) installerFor(c Cluster, opts ...installer.Option) (*installer.Installer, error) {
	i, err := s.newInstaller(c.getter, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	return i, nil
}
