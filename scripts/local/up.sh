#!/usr/bin/env bash
# The README's main job, behind `make install-local`: the add-on running for real on this
# machine.
#   1. a single-node cluster (scripts/e2e-cluster/up.sh: a loopback registry, containerd and runc,
#      etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a real kubelet);
#   2. the manager and daemon images built without Docker into an air-gap bundle with the chart,
#      mirrored into the loopback registry (`kruise-addon bundle create`, `bundle push`);
#   3. `kruise-addon install --bundle ... --registry ...`, which waits until the add-on is ready;
#   4. the seed CloneSet example (sample-cloneset.yaml), until `kubectl get clone` shows
#      sample 5 5 5 5 5 and `kruise-addon status` is healthy; then how to use and stop it.
# Where this machine cannot run a node (not root, no containerd and no apt-get to install it, a
# read-only cgroup fs, or the node failing to come up), it says so and falls back to a control
# plane without nodes (scripts/controlplane/up.sh), where the add-on is installed but its pods
# stay Pending and nothing reconciles the CloneSet.
#
# Usage: scripts/local/up.sh      Env: LOCAL_DIR (/tmp/kruise-local), DEV_DIR (fallback work dir),
#                                      LOCAL_NODE=0 (take the fallback even where a node could run)
# Stop:  scripts/local/down.sh    (make local-down)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${LOCAL_DIR:-/tmp/kruise-local}
DEV=${DEV_DIR:-${TMPDIR:-/tmp}/kruise-dev}
# Its own work dir, bridge, subnet and cgroup root. Stop it before `make e2e`: both clusters route
# the kubernetes Service through the one NAT chain KRUISE-E2E.
export E2E_BRIDGE=${E2E_BRIDGE:-kalocal0} E2E_SUBNET=${E2E_SUBNET:-10.253.8.0/24} E2E_CGROUP_ROOT=${E2E_CGROUP_ROOT:-kruise-local}
ADDON=$ROOT/bin/kruise-addon
BUNDLE=$ROOT/bin/kruise-addon-bundle.tar
T0=$(date +%s)
say() { echo "install-local: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }

(cd "$ROOT" && go build -o "$ADDON" ./cmd/kruise-addon) || die "building kruise-addon"

why=""
if [ "${LOCAL_NODE:-1}" = 0 ]; then
  why="LOCAL_NODE=0 asked for no node"
elif [ "$(id -u)" != 0 ]; then
  why="not running as root (containerd, runc, the kubelet, mounts and cgroups need it)"
elif ! { command -v containerd && command -v runc; } >/dev/null 2>&1 && ! command -v apt-get >/dev/null 2>&1; then
  why="no containerd and runc here, and no apt-get to install them"
elif [ ! -w /sys/fs/cgroup ]; then
  why="/sys/fs/cgroup is not writable, so the kubelet cannot make cgroups"
fi
if [ -z "$why" ]; then
  say "bringing up a single-node cluster in $W (real kubelet and containerd)"
  # A busy machine can miss one of up.sh's deadlines: one more try before falling back.
  if ! "$ROOT/scripts/e2e-cluster/up.sh" "$W" >/dev/null; then
    "$ROOT/scripts/e2e-cluster/down.sh" "$W" >/dev/null 2>&1
    say "the single-node cluster did not come up; trying once more"
    if ! "$ROOT/scripts/e2e-cluster/up.sh" "$W" >/dev/null; then
      why="the single-node cluster did not come up twice (logs in $W/logs)"
      "$ROOT/scripts/e2e-cluster/down.sh" "$W" >/dev/null 2>&1
    fi
  fi
fi

if [ -n "$why" ]; then
  say "cannot run a node on this machine: $why."
  say "falling back to a control plane without nodes (etcd + kube-apiserver in $DEV). Its limit:"
  say "  the add-on is installed, but no node runs its pods: the manager stays Pending and nothing"
  say "  reconciles the CloneSet, so kubectl get clone shows no ready replicas. With no manager to"
  say "  answer them, the webhooks are installed with failurePolicy Ignore, so manifests are accepted"
  say "  unchecked. kruise-daemon is left out (--daemon=false): with no node it has nothing to do,"
  say "  and its config namespace could not finish terminating here on uninstall."
  "$ROOT/scripts/controlplane/up.sh" "$DEV" >/dev/null || die "the local control plane did not start"
  KUBECONFIG=$DEV/kubeconfig
  K="$("$ROOT/scripts/testbin/build.sh")/kubectl"
  "$ADDON" install --kubeconfig "$KUBECONFIG" --wait=false --daemon=false --set imageRegistry=registry.invalid \
    --set webhookConfiguration.failurePolicy.default=Ignore --set webhookConfiguration.timeoutSeconds=1 || die "kruise-addon install"
  sed "s#REGISTRY#registry.invalid#" "$ROOT/scripts/local/sample-cloneset.yaml" | "$K" --kubeconfig "$KUBECONFIG" apply -f - || die "applying the seed CloneSet"
  "$K" --kubeconfig "$KUBECONFIG" get clone -n default
  "$ADDON" status --kubeconfig "$KUBECONFIG" || true
  cat <<USE

The add-on is installed on a control plane WITHOUT NODES: nothing runs its pods ($why).
  export KUBECONFIG=$KUBECONFIG
  export PATH="$(dirname "$K"):\$PATH"
  kubectl get crd | grep kruise.io        # the API is served; manifests are accepted
Stop it with: make local-down   (or make dev-down)
USE
  exit 0
fi

set -a; . "$W/env"; set +a
K="$K8S_BIN/kubectl --kubeconfig $KUBECONFIG"
say "building the manager and daemon images, bundling them with the chart, pushing to $REGISTRY"
(cd "$ROOT" && go run ./scripts/images -out "$ROOT/bin/images" -only kruise-manager,kruise-daemon) >&2 || die "building the images"
"$ADDON" bundle create --images "$ROOT/bin/images" --out "$BUNDLE" >&2 || die "kruise-addon bundle create"
"$ADDON" bundle push --bundle "$BUNDLE" --registry "$REGISTRY" >&2 || die "kruise-addon bundle push"

# No kube-proxy runs here, so the apiserver calls the webhook on the node's address (URL mode)
# and the manager uses the host network; the daemon finds this cluster's containerd socket.
cmd=install
"$ADDON" status --kubeconfig "$KUBECONFIG" 2>/dev/null | grep -q ': deployed,' && cmd=upgrade
say "kruise-addon $cmd --bundle $BUNDLE --registry $REGISTRY"
"$ADDON" "$cmd" --kubeconfig "$KUBECONFIG" --spec small --bundle "$BUNDLE" --registry "$REGISTRY" \
  --set manager.hostNetwork=true --set "webhookConfiguration.host=$NODE_IP" \
  --set "daemon.socketLocation=$(dirname "$CONTAINERD_SOCK")" --set "daemon.socketFile=$(basename "$CONTAINERD_SOCK")" \
  --timeout 5m || die "kruise-addon $cmd"

# Install returns once the pods are ready; the manager patches its CA into the webhook
# configurations moments later, and until then the apiserver cannot call the webhook.
healthy() {
  st=$("$ADDON" status --kubeconfig "$KUBECONFIG" 2>&1) && grep -q 'manager 1/1' <<<"$st" && grep -q 'webhook: reachable=true' <<<"$st"
}
for _ in $(seq 120); do healthy && break; sleep 1; done
healthy || { echo "$st" >&2; die "kruise-addon status is not healthy after 120 s"; }
say "applying the seed CloneSet example"
sed "s#REGISTRY#$REGISTRY#" "$ROOT/scripts/local/sample-cloneset.yaml" | $K apply -f - >&2 || die "applying the seed CloneSet"
want="5 5 5 5 5"
got=""
for _ in $(seq 180); do
  got=$($K get clone sample -n default -o jsonpath='{.spec.replicas} {.status.replicas} {.status.updatedReplicas} {.status.updatedReadyReplicas} {.status.readyReplicas}' 2>/dev/null)
  [ "$got" = "$want" ] && break
  sleep 1
done
[ "$got" = "$want" ] || { $K get clone,pods -n default -o wide >&2; die "the CloneSet did not reach 5 ready replicas in 180 s (got: $got)"; }
$K get clone -n default
healthy || { echo "$st" >&2; die "kruise-addon status is not healthy"; }
echo "$st"
cat <<USE

The add-on runs on a real single-node cluster ($(($(date +%s) - T0)) s); its only registry is $REGISTRY.
  export KUBECONFIG=$KUBECONFIG
  export PATH="$K8S_BIN:\$PATH"
  kubectl get clone sample                     # NAME DESIRED UPDATED UPDATED_READY READY TOTAL AGE
  kubectl patch clone sample --type merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"$REGISTRY/e2e/sample:v2"}]}}}}'
  kubectl get pods -l app=sample -w            # updated in place: same pods, restartCount 1
  $ADDON status
Stop it with: make local-down
USE
