#!/usr/bin/env bash
# Start a private containerd (CRI plugin on) for the daemon's integration tests and benchmark.
# Usage: BASE=/tmp/kd-xyz REGISTRY=127.0.0.1:5000 scripts/containerd/start.sh
#   BASE        work dir holding root, state, config, logs and the socket. Keep it short: the socket
#               path must fit in a unix socket address (108 bytes), so use something like /tmp/kd-XXXX.
#   REGISTRY    loopback registry host:port, served over plain HTTP; the sandbox image comes from it.
#   SANDBOX_IMAGE  default $REGISTRY/pause:latest.
#   SNAPSHOTTER overlayfs (default) or native.
# Prints "socket unix://<path>" on success. Callers creating host-network sandboxes must leave the
# sandbox hostname empty: containerd refuses to set a hostname in the host's UTS namespace.
set -euo pipefail
BASE=${BASE:?BASE must name a short work dir}
REGISTRY=${REGISTRY:-127.0.0.1:5000}
SNAPSHOTTER=${SNAPSHOTTER:-overlayfs}
SANDBOX_IMAGE=${SANDBOX_IMAGE:-$REGISTRY/pause:latest}
SOCK="$BASE/containerd.sock"
if [ ${#SOCK} -gt 100 ]; then
  echo "socket path $SOCK is too long for a unix socket; use a shorter BASE" >&2
  exit 1
fi
mkdir -p "$BASE/logs"
# shellcheck source=scripts/containerd/config.sh
. "$(dirname "$0")/config.sh"
containerd_config "$BASE" "$SOCK" "$SANDBOX_IMAGE" "$SNAPSHOTTER" "$REGISTRY"

containerd --config "$BASE/config.toml" >"$BASE/logs/containerd.log" 2>&1 &
echo $! > "$BASE/containerd.pid"
for _ in $(seq 1 200); do
  if ctr --address "$SOCK" version >/dev/null 2>&1; then break; fi
  if ! kill -0 "$(cat "$BASE/containerd.pid")" 2>/dev/null; then
    echo "containerd exited during start" >&2
    tail -20 "$BASE/logs/containerd.log" >&2
    exit 1
  fi
  sleep 0.1
done
ctr --address "$SOCK" version >/dev/null
echo "containerd pid $(cat "$BASE/containerd.pid") socket unix://$SOCK"
