// Package preflight decides, from cluster facts and the user's choices, whether an install or
// upgrade may go ahead: the cluster version is supported, no foreign installation is present,
// the daemon can run on every node's runtime, the placement can be scheduled, and what the
// webhook risks are. Every check is a pure function of its input. It must not import Helm's
// action package (`helm.sh/helm/v3/pkg/action`). It must not import a cluster client
// (`k8s.io/client-go/...`, `sigs.k8s.io/controller-runtime/...`) directly: the facts package,
// whose types it decides from, holds the reads.
package preflight
