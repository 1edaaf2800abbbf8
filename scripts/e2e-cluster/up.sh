#!/usr/bin/env bash
# Brings up a single-node Kubernetes cluster on this machine for the end-to-end suite:
#   a loopback OCI registry (in memory) with the pause and sample images,
#   containerd + runc (Debian) with bridge CNI, under the work dir,
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler (scripts/testbin, EXTRA_K8S=1),
#   and a real kubelet (node "localhost", cgroupfs, cgroup v1 allowed).
# With E2E_NODES=N (N > 1) it starts N real nodes instead, node-a, node-b, ... in zones zone-a,
# zone-b, ... (topology.kubernetes.io/zone): each node is its own containerd (root, state, socket,
# bridge and subnet) and its own kubelet (root dir, ports, cgroup root), all on this host.
# There is no kube-proxy and no cluster DNS: Service IPs do not route. Host-network pods and
# URL-mode webhooks are reachable (see charts/kruise/README.md, "Control planes outside the pod network").
#
# Usage: scripts/e2e-cluster/up.sh [workdir]   (default: $E2E_DIR or /tmp/kruise-e2e; keep it short,
#        the containerd socket path, /run/<workdir name>/containerd.sock, must stay under 108 bytes)
# Env:   E2E_BRIDGE (kae2e0), E2E_SUBNET (10.253.7.0/24), E2E_CGROUP_ROOT (kruise-e2e), E2E_NODES (1);
#        node i > 0 adds -<i> to the bridge and the cgroup root and 16 i to the subnet's third octet.
# Writes <workdir>/env (KUBECONFIG, REGISTRY, K8S_BIN, NODE_NAMES, ...) and <workdir>/nodes (one line
# per node: index, name, containerd socket, bridge, cgroup root; down.sh reads it), and prints
# `export KUBECONFIG=...` last.
# Stop with scripts/e2e-cluster/down.sh [workdir].
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${1:-${E2E_DIR:-/tmp/kruise-e2e}}
BRIDGE=${E2E_BRIDGE:-kae2e0}
SUBNET=${E2E_SUBNET:-10.253.7.0/24}
CGROOT=${E2E_CGROUP_ROOT:-kruise-e2e}
NODES=${E2E_NODES:-1}
[[ "$NODES" =~ ^[1-9]$ ]] || { echo "e2e-up: E2E_NODES=$NODES: give 1 to 9 nodes" >&2; exit 1; }

t() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(t)" 'BEGIN { printf "%.1fs", b - a }'; }
say() { echo "e2e-up: $*" >&2; }
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
fail() { say "FAILED: $*"; say "logs: $W/logs; tear down with scripts/e2e-cluster/down.sh $W"; exit 1; }
# A port is free when nothing accepts a connection on it.
freeport() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# Node i's names: the single node keeps "localhost" (exec and logs reach its kubelet by that name on
# loopback); several nodes are node-a, node-b, ... and are reached by their InternalIP, this host's
# address, on which each kubelet listens on its own port.
letter() { printf "\\$(printf '%03o' $((97 + $1)))"; }
node_name() { if [ "$NODES" = 1 ]; then echo localhost; else echo "node-$(letter "$1")"; fi; }
sfx() { [ "$1" = 0 ] || echo "-$1"; } # node 0 keeps the single-node paths and names
node_sock() { echo "/run/$(basename "$W")/containerd$(sfx "$1").sock"; }
# Node i's pods get the subnet's third octet plus 16 i: clear of install-local's 10.253.8.0/24.
node_subnet() { echo "$SUBNET" | awk -F. -v i="$1" '{ printf "%s.%s.%d.%s", $1, $2, $3 + 16 * i, $4 }'; }

if [ -f "$W/kubelet.pid" ] && alive "$(cat "$W/kubelet.pid")"; then
  say "cluster already running in $W"
  echo "export KUBECONFIG=$W/kubeconfig"; exit 0
fi
[ "${#W}" -le 40 ] || fail "work dir $W is too long for the containerd socket path; use a shorter one"
[ "$(id -u)" = 0 ] || fail "needs root (containerd, runc, kubelet, mounts and cgroups)"
T0=$(t)

# 0) host packages and binaries
"$ROOT/scripts/containerd/install.sh" >&2
pkgs=()
[ -x /usr/lib/cni/bridge ] || pkgs+=(containernetworking-plugins)
command -v iptables >/dev/null || pkgs+=(iptables)
command -v ip >/dev/null || pkgs+=(iproute2)
command -v openssl >/dev/null || pkgs+=(openssl)
command -v curl >/dev/null || pkgs+=(curl)
if [ ${#pkgs[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || fail "missing ${pkgs[*]} and no apt-get to install them"
  say "installing ${pkgs[*]} with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null || fail "apt-get install ${pkgs[*]}"
fi
K8S_BIN=$(EXTRA_K8S=1 "$ROOT/scripts/testbin/build.sh")
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  [ -x "$K8S_BIN/$b" ] || fail "$K8S_BIN/$b missing (run EXTRA_K8S=1 scripts/testbin/build.sh)"
done
rm -rf "$W" && mkdir -p "$W"/{bin,logs,pki,etcd-data,kas-certs,ctrd}
(cd "$ROOT" && go build -o "$W/bin/registry" ./scripts/e2e-cluster/registry && go build -o "$W/bin/images" ./scripts/images) ||
  fail "building the registry or the image builder"

# 1) registry on a free loopback port, in memory
setsid "$W/bin/registry" -addr 127.0.0.1:0 -addr-file "$W/registry" >"$W/logs/registry.out" 2>"$W/logs/registry.log" &
echo $! >"$W/registry.pid"
for _ in $(seq 100); do [ -s "$W/registry" ] && break; sleep 0.1; done
[ -s "$W/registry" ] || fail "registry did not start"
REG=$(cat "$W/registry")
say "registry $REG"
(cd "$ROOT" && "$W/bin/images" -only pause,sample -registry "$REG" -out "$W/images-base") >"$W/logs/images-base.log" 2>&1 ||
  { cat "$W/logs/images-base.log" >&2; fail "pushing the pause and sample images"; }

# 2) containerd with bridge CNI, one per node, everything under $W/ctrd[-i] but its socket, which
#    lives in /run/<workdir name>: the chart mounts only runtime socket directories into the daemon.
# shellcheck source=scripts/containerd/config.sh
. "$ROOT/scripts/containerd/config.sh"
containerd_up() { # node index
  local i=$1 C=$W/ctrd$(sfx "$1") SOCK BR SN
  SOCK=$(node_sock "$i"); BR=$BRIDGE$(sfx "$i"); SN=$(node_subnet "$i")
  mkdir -p "$C/cni/ipam" "$(dirname "$SOCK")"
  containerd_config "$C" "$SOCK" "$REG/e2e/pause:1.0" overlayfs "$REG"
  for b in bridge host-local loopback; do ln -sf "/usr/lib/cni/$b" "$C/cni/bin/$b"; done
  cat >"$C/cni/conf/10-kruise-e2e.conflist" <<JSON
{"cniVersion":"0.4.0","name":"kruise-e2e","plugins":[{"type":"bridge","bridge":"$BR","isGateway":true,"ipMasq":false,
 "ipam":{"type":"host-local","dataDir":"$C/cni/ipam","ranges":[[{"subnet":"$SN"}]]}}]}
JSON
  setsid containerd --config "$C/config.toml" >"$W/logs/containerd$(sfx "$i").log" 2>&1 &
  echo $! >"$W/containerd$(sfx "$i").pid"
  for _ in $(seq 100); do ctr --address "$SOCK" version >/dev/null 2>&1 && break; alive "$(cat "$W/containerd$(sfx "$i").pid")" || break; sleep 0.1; done
  ctr --address "$SOCK" version >/dev/null 2>&1 || { tail -20 "$W/logs/containerd$(sfx "$i").log" >&2; fail "containerd $i did not start"; }
  say "containerd $i $(containerd --version | awk '{print $3}') pid $(cat "$W/containerd$(sfx "$i").pid")"
}
rm -rf "/run/$(basename "$W")"
: >"$W/nodes"
for i in $(seq 0 $((NODES - 1))); do
  echo "$i $(node_name "$i") $(node_sock "$i") $BRIDGE$(sfx "$i") $CGROOT$(sfx "$i")" >>"$W/nodes"
  containerd_up "$i"
done

# 3) control plane: certificates from one CA, etcd, kube-apiserver, kube-controller-manager, kube-scheduler
P=$W/pki
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 7 -subj "/CN=kruise-e2e-ca" 2>/dev/null
cert() { # name subject [extfile]
  openssl req -newkey rsa:2048 -nodes -keyout "$P/$1.key" -out "$P/$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -out "$P/$1.crt" -days 7 ${3:+-extfile "$3"} 2>/dev/null
}
cert admin "/O=system:masters/CN=admin"
# In-cluster clients trust kube-root-ca.crt (this CA), so the serving cert must be signed by it.
printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' >"$P/apiserver.ext"
cert apiserver "/CN=kube-apiserver" "$P/apiserver.ext"
openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
EP=$(freeport); PP=$(freeport); AP=$(freeport)
# One node listens on loopback and is reached by its name, localhost. Several nodes share this host's
# address (a kubelet refuses a loopback node IP) and differ in their ports.
ADDR_TYPES=Hostname,InternalIP KUBELET_ADDR=127.0.0.1 HOST_IP=
if [ "$NODES" -gt 1 ]; then
  HOST_IP=$(ip -4 route get 1.0.0.0 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "src") { print $(i + 1); exit } }')
  [ -n "$HOST_IP" ] || fail "no IPv4 source address for a default route: several nodes need one to listen on"
  ADDR_TYPES=InternalIP,Hostname KUBELET_ADDR=$HOST_IP
fi
setsid "$K8S_BIN/etcd" --name kruise-e2e --data-dir "$W/etcd-data" \
  --listen-client-urls "http://127.0.0.1:$EP" --advertise-client-urls "http://127.0.0.1:$EP" \
  --listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
  --initial-cluster "kruise-e2e=http://127.0.0.1:$PP" --unsafe-no-fsync >"$W/logs/etcd.log" 2>&1 &
echo $! >"$W/etcd.pid"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$EP/health" >/dev/null && break; sleep 0.1; done
setsid "$K8S_BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$EP" \
  --bind-address=127.0.0.1 --secure-port="$AP" --cert-dir="$W/kas-certs" \
  --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
  --service-cluster-ip-range=10.0.0.0/24 \
  --client-ca-file="$P/ca.crt" \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --service-account-issuer="https://127.0.0.1:$AP" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --kubelet-client-certificate="$P/admin.crt" --kubelet-client-key="$P/admin.key" \
  --kubelet-preferred-address-types="$ADDR_TYPES" \
  --allow-privileged=true >"$W/logs/kube-apiserver.log" 2>&1 &
echo $! >"$W/kas.pid"
ok=0
for _ in $(seq 600); do
  curl -sfk --cert "$P/admin.crt" --key "$P/admin.key" "https://127.0.0.1:$AP/readyz" >/dev/null 2>&1 && { ok=1; break; }
  alive "$(cat "$W/kas.pid")" || break
  sleep 0.1
done
[ $ok = 1 ] || { tail -20 "$W/logs/kube-apiserver.log" >&2; fail "kube-apiserver not ready"; }
kubeconfig() { # file user crt key
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kruise-e2e
  cluster:
    server: https://127.0.0.1:$AP
    certificate-authority: $P/ca.crt
users:
- name: $2
  user:
    client-certificate: $3
    client-key: $4
contexts:
- name: kruise-e2e
  context: {cluster: kruise-e2e, user: $2}
current-context: kruise-e2e
KC
}
kubeconfig "$W/kubeconfig" admin "$P/admin.crt" "$P/admin.key"
setsid "$K8S_BIN/kube-controller-manager" --kubeconfig="$W/kubeconfig" \
  --authentication-kubeconfig="$W/kubeconfig" --authorization-kubeconfig="$W/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$(freeport)" --leader-elect=false \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
  --controllers='*' >"$W/logs/kube-controller-manager.log" 2>&1 &
echo $! >"$W/kcm.pid"
setsid "$K8S_BIN/kube-scheduler" --kubeconfig="$W/kubeconfig" \
  --authentication-kubeconfig="$W/kubeconfig" --authorization-kubeconfig="$W/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$(freeport)" --leader-elect=false >"$W/logs/kube-scheduler.log" 2>&1 &
echo $! >"$W/sched.pid"
say "kube-apiserver https://127.0.0.1:$AP ready after $(since "$T0")"
# In-cluster clients (host-network pods such as the add-on's manager) dial the kubernetes Service,
# 10.0.0.1:443. With no kube-proxy, one DNAT rule in our own chain stands in for it.
iptables -t nat -N KRUISE-E2E 2>/dev/null || iptables -t nat -F KRUISE-E2E
iptables -t nat -A KRUISE-E2E -d 10.0.0.1/32 -p tcp --dport 443 -j DNAT --to-destination "127.0.0.1:$AP"
iptables -t nat -C OUTPUT -j KRUISE-E2E 2>/dev/null || iptables -t nat -A OUTPUT -j KRUISE-E2E

# 4) kubelets, one per node: its own config, root dir, ports, cgroup root, certificate and logs
kubelet_up() { # node index
  local i=$1 NODE SOCK CG x=$(sfx "$1") c
  NODE=$(node_name "$i"); SOCK=$(node_sock "$i"); CG=$CGROOT$(sfx "$i")
  cert "kubelet$x" "/O=system:nodes/CN=system:node:$NODE"
  kubeconfig "$W/kubelet$x.kubeconfig" "system:node:$NODE" "$P/kubelet$x.crt" "$P/kubelet$x.key"
  cat >"$W/kubelet$x-config.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $KUBELET_ADDR
port: $(freeport)
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $(freeport)
containerRuntimeEndpoint: unix://$SOCK
imageServiceEndpoint: unix://$SOCK
cgroupDriver: cgroupfs        # no systemd; containerd runs with SystemdCgroup = false
cgroupRoot: /$CG              # the QoS tree lives under /sys/fs/cgroup/<controller>/$CG
failCgroupV1: false           # kubelet >= 1.35 refuses cgroup v1 unless told
failSwapOn: false
oomScoreAdj: 0                # no CAP_SYS_RESOURCE for -999
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
# The bed shares a machine's disk with others: the default thresholds (15% image filesystem free,
# image GC from 85% used) would taint the node with disk-pressure or delete the images the suite
# pulled. Only a nearly full disk counts here.
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podLogsDir: $W/logs/pods$x     # container logs stay with the cluster's other logs
KCFG
  # The cgroup root must exist in every mounted hierarchy before the kubelet starts.
  for c in /sys/fs/cgroup/*/; do mkdir -p "$c$CG"; done
  if [ -d "/sys/fs/cgroup/cpuset/$CG" ]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$CG/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$CG/cpuset.mems"
  fi
  local extra=()
  [ "$NODES" -gt 1 ] && extra=(--node-ip="$HOST_IP" --node-labels="topology.kubernetes.io/zone=zone-$(letter "$i")")
  setsid "$K8S_BIN/kubelet" --config="$W/kubelet$x-config.yaml" --kubeconfig="$W/kubelet$x.kubeconfig" \
    --hostname-override="$NODE" --root-dir="$W/kubelet-root$x" "${extra[@]}" --v=2 >"$W/logs/kubelet$x.log" 2>&1 &
  echo $! >"$W/kubelet$x.pid"
}
ready_nodes() { "$K" get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null | grep -c '=True$'; }
T1=$(t)
export KUBECONFIG=$W/kubeconfig
K="$K8S_BIN/kubectl"
for i in $(seq 0 $((NODES - 1))); do kubelet_up "$i"; done
ok=0
for _ in $(seq 1200); do
  [ "$(ready_nodes)" = "$NODES" ] && { ok=1; break; }
  for i in $(seq 0 $((NODES - 1))); do
    alive "$(cat "$W/kubelet$(sfx "$i").pid")" || { tail -30 "$W/logs/kubelet$(sfx "$i").log" >&2; fail "kubelet of $(node_name "$i") died"; }
  done
  sleep 0.1
done
[ $ok = 1 ] || fail "$(ready_nodes) of $NODES nodes Ready after 120s"
NODE=$(node_name 0)
NODE_NAMES=$(for i in $(seq 0 $((NODES - 1))); do node_name "$i"; done | paste -sd, -)
say "$NODES node(s) Ready $(since "$T1") after the kubelets started: $NODE_NAMES"
ok=0
for _ in $(seq 600); do "$K" get sa default >/dev/null 2>&1 && { ok=1; break; }; sleep 0.1; done
[ $ok = 1 ] || fail "no default ServiceAccount after 60s"
NODE_IP=$("$K" get node $NODE -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')

cat >"$W/env" <<ENV
KUBECONFIG=$W/kubeconfig
REGISTRY=$REG
K8S_BIN=$K8S_BIN
NODE_NAME=$NODE
NODE_NAMES=$NODE_NAMES
NODE_IP=$NODE_IP
CONTAINERD_SOCK=$(node_sock 0)
E2E_LOGS=$W/logs
ENV
say "cluster up in $(since "$T0"): registry $REG, nodes $NODE_NAMES ($NODE_IP), logs in $W/logs"
echo "export KUBECONFIG=$W/kubeconfig"
