#!/usr/bin/env bash
# Builds the test binaries from the Go module proxy into a cache folder outside the
# repository, named by their versions, and prints that folder on the last line.
#
#   always:          kube-apiserver, kubectl, etcd     (KUBEBUILDER_ASSETS for test/framework)
#   EXTRA_K8S=1:     kube-controller-manager, kube-scheduler, kubelet
#   WITH_TOOLS=1:    kwok, controller-gen (default on), into $CACHE/tools
#   TOOLS_ONLY=1:    only the tools (for code generation)
#
# A warm run finds every binary present and does nothing.
# Environment: TESTBIN_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/kruise-testbin).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
CONTROLLER_GEN_VERSION=${CONTROLLER_GEN_VERSION:-v0.23.0}
# Versions come from the pinned tools modules, so the folder name cannot drift from what is built.
K8S_VERSION=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$HERE/k8s/go.mod")
ETCD_VERSION=$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$HERE/etcd/go.mod")
CACHE=${TESTBIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-testbin}
OUT=$CACHE/k8s-$K8S_VERSION-etcd-$ETCD_VERSION
TOOLS=$CACHE/tools
mkdir -p "$OUT" "$TOOLS"

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
# Without the version ldflags the apiserver reports v0.0.0 and Helm's kubeVersion checks fail.
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
LDF="$LDF -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

timed() { local t0=$SECONDS; "$@"; echo "testbin:   done in $((SECONDS-t0))s" >&2; }

want="kube-apiserver kubectl"
[ "${TOOLS_ONLY:-0}" = 1 ] && want=""
[ "${EXTRA_K8S:-0}" = 1 ] && want="$want kube-controller-manager kube-scheduler kubelet"
for b in $want; do
  [ -x "$OUT/$b" ] && continue
  echo "testbin: building $b $K8S_VERSION (cold build: a few minutes)" >&2
  (cd "$HERE/k8s" && timed go build -trimpath -ldflags "$LDF" -o "$OUT/$b.tmp" "k8s.io/kubernetes/cmd/$b")
  mv "$OUT/$b.tmp" "$OUT/$b"
done
if [ "${TOOLS_ONLY:-0}" != 1 ] && [ ! -x "$OUT/etcd" ]; then
  echo "testbin: building etcd $ETCD_VERSION" >&2
  (cd "$HERE/etcd" && timed go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$OUT/etcd.tmp" "$OUT/etcd"
fi
if [ "${WITH_TOOLS:-1}" = 1 ]; then
  for t in "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"; do
    name=$(basename "${t%@*}"); ver=${t#*@}
    [ -x "$TOOLS/$name-$ver" ] && continue
    echo "testbin: installing $t" >&2
    timed env GOBIN="$TOOLS/.gobin" go install -trimpath -ldflags "-s -w" "$t"
    mv "$TOOLS/.gobin/$name" "$TOOLS/$name-$ver"
  done
fi
echo "$OUT"
