#!/usr/bin/env bash
# Builds the plain helm CLI (helm.sh/helm/v3/cmd/helm) at a pinned version into a cache folder
# outside the repository, named by the version, and prints the binary's path on the last line.
# A warm run finds the binary present and does nothing.
#
# The version ldflags matter: without them `helm version` prints a bare minor ("v3.22") and the
# default Kubernetes version helm assumes for lint and client-only rendering is v1.20, which our
# chart's kubeVersion range rejects.
#
# Environment: HELM_VERSION (default v3.22.0, the SDK version pinned in go.mod),
# TESTBIN_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/kruise-testbin; shared with scripts/testbin).
set -euo pipefail
HELM_VERSION=${HELM_VERSION:-v3.22.0}
CACHE=${TESTBIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-testbin}
TOOLS=$CACHE/tools
BIN=$TOOLS/helm-$HELM_VERSION
mkdir -p "$TOOLS"

if [ ! -x "$BIN" ]; then
  echo "helm: installing helm.sh/helm/v3/cmd/helm@$HELM_VERSION (cold build: a few minutes)" >&2
  t0=$SECONDS
  # The Kubernetes minor helm assumes by default follows the client-go it is built with,
  # as helm's own Makefile does it.
  gomod=$(cd "$TOOLS" && GOFLAGS=-mod=mod go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  cgo=$(awk '$1=="k8s.io/client-go" {print $2; exit}' "$gomod")
  minor=${cgo#v0.}; minor=${minor%%.*}
  LDF="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in pkg/lint/rules pkg/chartutil; do
    LDF="$LDF -X helm.sh/helm/v3/$p.k8sVersionMajor=1 -X helm.sh/helm/v3/$p.k8sVersionMinor=$minor"
  done
  gobin=$(mktemp -d "$TOOLS/.helm-gobin.XXXXXX")
  trap 'rm -rf "$gobin"' EXIT
  (cd "$TOOLS" && GOBIN="$gobin" go install -trimpath -ldflags "$LDF" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
  mv "$gobin/helm" "$BIN"
  echo "helm:   done in $((SECONDS-t0))s" >&2
fi
echo "$BIN"
