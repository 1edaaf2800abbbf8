#!/usr/bin/env bash
# Stops what scripts/local/up.sh started: the single-node cluster (and checks nothing is left),
# or the control plane without nodes it fell back to.
# Usage: scripts/local/down.sh     Env: LOCAL_DIR (/tmp/kruise-local), DEV_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${LOCAL_DIR:-/tmp/kruise-local}
DEV=${DEV_DIR:-${TMPDIR:-/tmp}/kruise-dev}
export E2E_BRIDGE=${E2E_BRIDGE:-kalocal0} E2E_SUBNET=${E2E_SUBNET:-10.253.8.0/24} E2E_CGROUP_ROOT=${E2E_CGROUP_ROOT:-kruise-local}
rc=0
if [ -d "$W" ]; then KEEP_LOGS=0 "$ROOT/scripts/e2e-cluster/down.sh" "$W" || rc=1; fi
if [ -d "$DEV" ]; then "$ROOT/scripts/controlplane/down.sh" "$DEV" || rc=1; fi
exit $rc
