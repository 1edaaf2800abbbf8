#!/usr/bin/env bash
# Stops a control plane started by up.sh and removes its work dir.
# Usage: scripts/controlplane/down.sh [workdir]
set -euo pipefail
W=${1:-${TMPDIR:-/tmp}/kruise-dev}
for f in kas etcd; do
  [ -f "$W/$f.pid" ] || continue
  pid=$(cat "$W/$f.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
done
rm -rf "$W"
echo "control plane in $W stopped" >&2
