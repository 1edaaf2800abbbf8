#!/usr/bin/env bash
# Starts a local control plane (etcd + kube-apiserver from scripts/testbin) on loopback, installs
# the add-on's CRDs and writes a kubeconfig. Stop it with down.sh.
#
# The CRDs carry Helm's ownership of release kruise in kruise-system (DEV_RELEASE and
# DEV_RELEASE_NAMESPACE change it), so the chart README's `helm upgrade --install kruise ...
# -n kruise-system` and `kruise-addon install` take them over as they are.
#
# Usage: scripts/controlplane/up.sh [workdir]     (default: ${TMPDIR:-/tmp}/kruise-dev)
# Prints: export KUBECONFIG=<workdir>/kubeconfig
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${1:-${TMPDIR:-/tmp}/kruise-dev}
BIN=$("$ROOT/scripts/testbin/build.sh")
if [ -f "$W/kas.pid" ] && kill -0 "$(cat "$W/kas.pid")" 2>/dev/null; then
  echo "control plane already running in $W" >&2
  echo "export KUBECONFIG=$W/kubeconfig"; exit 0
fi
rm -rf "$W" && mkdir -p "$W"/{pki,etcd-data,kas-certs}

# A port is free when nothing accepts a connection on it.
freeport() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
  done
}
EP=$(freeport); PP=$(freeport); AP=$(freeport)
P=$W/pki
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 30 -subj "/CN=kruise-dev-ca" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$P/admin.key" -out "$P/admin.csr" -subj "/O=system:masters/CN=admin" 2>/dev/null
openssl x509 -req -in "$P/admin.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -out "$P/admin.crt" -days 30 2>/dev/null
openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null

echo "starting etcd on 127.0.0.1:$EP" >&2
setsid "$BIN/etcd" --name kruise-dev --data-dir "$W/etcd-data" \
  --listen-client-urls "http://127.0.0.1:$EP" --advertise-client-urls "http://127.0.0.1:$EP" \
  --listen-peer-urls "http://127.0.0.1:$PP" --initial-advertise-peer-urls "http://127.0.0.1:$PP" \
  --initial-cluster "kruise-dev=http://127.0.0.1:$PP" --unsafe-no-fsync \
  >"$W/etcd.log" 2>&1 &
echo $! >"$W/etcd.pid"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$EP/health" >/dev/null && break; sleep 0.1; done

echo "starting kube-apiserver on 127.0.0.1:$AP" >&2
# The apiserver calls webhooks on loopback (a manager run on the host) and in the service range
# (kruise-webhook-service): never through a proxy this shell may have set.
SERVICE_RANGE=10.0.0.0/24
NO_PROXY_LIST="127.0.0.1,localhost,::1,$SERVICE_RANGE,.svc,.svc.cluster.local${NO_PROXY:+,$NO_PROXY}"
export NO_PROXY="$NO_PROXY_LIST" no_proxy="$NO_PROXY_LIST"
# No endpoints reconciler: the advertise address is loopback, which it would refuse.
setsid "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$EP" \
  --bind-address=127.0.0.1 --secure-port="$AP" --cert-dir="$W/kas-certs" \
  --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
  --service-cluster-ip-range="$SERVICE_RANGE" --client-ca-file="$P/ca.crt" \
  --authorization-mode=RBAC --allow-privileged=true \
  --service-account-issuer="https://127.0.0.1:$AP" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --disable-admission-plugins=ServiceAccount \
  >"$W/kas.log" 2>&1 &
echo $! >"$W/kas.pid"
for i in $(seq 600); do
  curl -sfk --cert "$P/admin.crt" --key "$P/admin.key" "https://127.0.0.1:$AP/readyz" >/dev/null 2>&1 && break
  kill -0 "$(cat "$W/kas.pid")" 2>/dev/null || { echo "kube-apiserver exited; last log lines:" >&2; tail -20 "$W/kas.log" >&2; exit 1; }
  [ "$i" = 600 ] && { echo "kube-apiserver not ready after 60s; see $W/kas.log" >&2; exit 1; }
  sleep 0.1
done

cat >"$W/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kruise-dev
  cluster:
    server: https://127.0.0.1:$AP
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate: $P/admin.crt
    client-key: $P/admin.key
contexts:
- name: kruise-dev
  context: {cluster: kruise-dev, user: admin}
current-context: kruise-dev
KC

echo "installing CRDs from charts/kruise/files/crds" >&2
KUBECTL=("$BIN/kubectl" --kubeconfig "$W/kubeconfig")
"${KUBECTL[@]}" apply --server-side -f "$ROOT/charts/kruise/files/crds" >&2
"${KUBECTL[@]}" label --overwrite -f "$ROOT/charts/kruise/files/crds" app.kubernetes.io/managed-by=Helm >/dev/null
"${KUBECTL[@]}" annotate --overwrite -f "$ROOT/charts/kruise/files/crds" \
  meta.helm.sh/release-name="${DEV_RELEASE:-kruise}" \
  meta.helm.sh/release-namespace="${DEV_RELEASE_NAMESPACE:-kruise-system}" >/dev/null
"${KUBECTL[@]}" wait --for=condition=Established --timeout=60s -f "$ROOT/charts/kruise/files/crds" >&2
echo "control plane ready in $W (logs: $W/etcd.log, $W/kas.log); stop it with scripts/controlplane/down.sh $W" >&2
echo "export KUBECONFIG=$W/kubeconfig"
