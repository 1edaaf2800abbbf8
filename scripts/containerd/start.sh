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
mkdir -p "$BASE"/{root,state,certs.d,cni/conf,cni/bin,opt,runc,logs}

cat > "$BASE/config.toml" <<TOML
version = 2
root = "$BASE/root"
state = "$BASE/state"
oom_score = 0

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$BASE/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$SANDBOX_IMAGE"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    disable_apparmor = true
    # Without CAP_SYS_RESOURCE runc cannot give the pause container oom_score_adj=-998 and the
    # sandbox fails with "can't get final child's PID from pipe: EOF"; this keeps the adj in range.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$BASE/cni/bin"
      conf_dir = "$BASE/cni/conf"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$SNAPSHOTTER"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$BASE/runc"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$BASE/certs.d"
TOML

# The loopback registry speaks plain HTTP.
mkdir -p "$BASE/certs.d/$REGISTRY"
cat > "$BASE/certs.d/$REGISTRY/hosts.toml" <<TOML
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
TOML

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
