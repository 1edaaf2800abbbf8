// Package versions owns the add-on's compatibility table: which add-on version supports which
// cluster minors, which community (OpenKruise) version it matches, on which container runtimes
// its daemon runs, and which upgrade paths are allowed. The table is data (table.yaml, embedded);
// this package loads it and answers queries with pure functions.
//
// It must not import Helm (`helm.sh/...`), client-go (`k8s.io/client-go/...`), controller-runtime
// (`sigs.k8s.io/controller-runtime/...`) or anything under `installer/...` or `controllers/...`:
// the installer, the CLI and the chart tests import it, never the other way round.
package versions
