# Sourced by scripts/containerd/start.sh and scripts/e2e-cluster/up.sh: the one containerd
# configuration both run.
#
# containerd_config DIR SOCK SANDBOX_IMAGE SNAPSHOTTER REGISTRY writes DIR/config.toml, with root,
# state, opt, runc, the CNI directories and certs.d under DIR and the CRI plugin on, and
# DIR/certs.d/REGISTRY/hosts.toml for a loopback registry that speaks plain HTTP.
containerd_config() {
  local dir=$1 sock=$2 sandbox=$3 snapshotter=$4 registry=$5
  mkdir -p "$dir"/{root,state,certs.d,cni/conf,cni/bin,opt,runc}
  cat >"$dir/config.toml" <<TOML
version = 2
root = "$dir/root"
state = "$dir/state"
oom_score = 0

[grpc]
  address = "$sock"

[ttrpc]
  address = "$sock.ttrpc"

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$dir/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$sandbox"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    disable_apparmor = true
    # Without CAP_SYS_RESOURCE runc cannot give the pause container oom_score_adj=-998 and the
    # sandbox fails with "can't get final child's PID from pipe: EOF"; this keeps the adj in range.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$dir/cni/bin"
      conf_dir = "$dir/cni/conf"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$snapshotter"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$dir/runc"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "$dir/certs.d"
TOML
  mkdir -p "$dir/certs.d/$registry"
  cat >"$dir/certs.d/$registry/hosts.toml" <<TOML
server = "http://$registry"
[host."http://$registry"]
  capabilities = ["pull", "resolve"]
TOML
}
