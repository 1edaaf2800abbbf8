// Package server is the HTTP API of `kruise-addon serve`: a console's backend that manages the
// add-on on many clusters through the installer library, the same calls the CLI makes.
//
// What it owns:
//   - the clusters it may act on, named in a configuration file of kubeconfigs (plus, optionally,
//     the cluster it runs in); a request names a cluster and never carries a kubeconfig, a server
//     URL or a file path;
//   - authentication (bearer tokens from a tokens file, TLS client certificates, or a token the
//     cluster's TokenReview accepts, its role from its groups) and two roles, read-only and
//     operator; the tokens file and the serving certificate are read again when they change on
//     disk (reload.go); an audit log of every mutating call of a known caller as JSON lines;
//   - the limits it holds its clients to (Limits, the limits: section of the clusters file):
//     read, write and idle timeouts on the http.Server, caps on the connections open per client
//     address and in all (connLimiter closes one over its client's cap as soon as it is
//     accepted, before TLS; at the total cap it makes room by closing the connection that has
//     waited longest for a request), bodies bounded in size (413) and time (408), and requests
//     without a known caller rate-limited per address (429 with Retry-After), their connections
//     closed once answered, counted at /metrics and summed up in the audit log once per
//     interval instead of a line each;
//   - asynchronous operations (install, upgrade, uninstall, unlock, rollback): one per cluster release at a
//     time, with their progress as events a client can stream (Server-Sent Events, resumable with
//     Last-Event-ID) or poll;
//   - the charts it installs (charts.go): its own, the air-gap bundles of its bundle directory
//     (serve --bundle-dir, each install's signature checked with serve --bundle-key when given),
//     named by file name and never by a path of the request's, and those of
//     a Helm chart repository (serve --chart-repo); a request's version picks among them;
//   - health issues with codes, derived from installer.Status (health.go, pure);
//   - its own probes (/healthz, /readyz: no caller needed) and metrics (/metrics: requests
//     counted and timed by route template, method and code);
//   - the OpenAPI 3.1 document of the API (openapi.yaml), served at /openapi.yaml and
//     /openapi.json.
//
// Errors are JSON {error, reason, exitCode, refused?, rolledBack?}: the reason and the exit-code
// class are the CLI's (installer.ExitClass): BadInput (400, exit 2), Refused (exit 3),
// RolledBack (exit 4); the limits' are RequestTimeout (408), PayloadTooLarge (413) and
// TooManyRequests (429).
//
// Operations outlive the server: each is recorded, state and events, in a ConfigMap beside its
// release (records.go: its shape, bounds and pure decisions; recordstore.go: the cluster's reads
// and writes), written while it runs. A restarted server, or another of the same clusters,
// answers for it from that record and resumes its event stream; one whose record its server
// stopped writing while it ran is reported interrupted, with the ReleaseStuck and unlock
// advice, and the release's own history still tells what became of it.
//
// It must not import `installer/cli`. It must not import Helm's action package
// (`helm.sh/helm/v3/pkg/action`) directly, or run any command in a shell.
package server
