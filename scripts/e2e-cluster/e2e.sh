#!/usr/bin/env bash
# The end-to-end run behind `make e2e`: cluster up, images built into an air-gap bundle with the
# chart and mirrored into its registry (`kruise-addon bundle create` and `bundle push`), the
# suite in test/e2e (which installs from that bundle with kruise-addon and drives the
# scenarios), cluster down.
# The cluster goes down on every exit, pass or fail (trap). Prints what passed and failed, the
# wall time, the cluster's memory and where the logs are.
#
# Usage: scripts/e2e-cluster/e2e.sh [workdir]    (default: $E2E_DIR or /tmp/kruise-e2e)
# Env:   E2E_DAEMON auto|1|0  include the daemon image and its scenarios (auto: when cmd/kruise-daemon
#                             has a main package); E2E_RUN  a `go test -run` filter;
#        E2E_NODES            nodes of the cluster (up.sh; 1); E2E_TAGS  build tags of the suite (e2e);
#        E2E_LOGS_DIR         where the logs are copied to (bin/e2e-logs).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${1:-${E2E_DIR:-/tmp/kruise-e2e}}
S=$ROOT/scripts/e2e-cluster
LOGS=${E2E_LOGS_DIR:-$ROOT/bin/e2e-logs}
T0=$(date +%s)
say() { echo "e2e: $*"; }
rss_report() { # the cluster's resident memory now: our pid files, containerd shims and everything below them
  local pids=() f p
  for f in "$W"/*.pid; do [ -f "$f" ] && pids+=("$(cat "$f")"); done
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}; p=${p%/cmdline}
    grep -qsF -- "/run/$(basename "$W")/containerd" "$f" && pids+=("$p")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  ps -e -o pid=,ppid=,rss=,comm= | awk -v roots="${pids[*]}" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { pid[NR] = $1; ppid[$1] = $2; rss[$1] = $3; comm[$1] = $4 }
    END {
      for (i in pid) { p = pid[i]; q = p; while (q > 1) { if (q in keep) { sel[p] = 1; break } q = ppid[q] } }
      for (p in sel) { tot += rss[p]; by[comm[p]] += rss[p] }
      printf "cluster memory (RSS): %.0f MiB total;", tot / 1024
      for (c in by) if (by[c] >= 10240) printf " %s %.0f", c, by[c] / 1024
      printf " MiB\n"
    }'
}
finish() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null && wait "$SAMPLER" 2>/dev/null
  rss_report >>"$W/logs/rss.txt"
  [ -s "$W/logs/rss.txt" ] && say "peak $(sort -t' ' -k4 -n "$W/logs/rss.txt" | tail -1) (sampled every 2 s)"
  mkdir -p "$LOGS" && rm -rf "$LOGS"/* && cp -r "$W/logs/." "$LOGS/" 2>/dev/null
  say "tearing the cluster down"
  "$S/down.sh" "$W" || rc=1
  echo
  say "---------------- summary ----------------"
  if [ -f "$LOGS/suite.log" ]; then
    grep -E '^\s*--- (PASS|FAIL|SKIP)' "$LOGS/suite.log" | sed -E 's/^\s*--- /e2e:   /'
  fi
  say "wall time $(($(date +%s) - T0))s; logs in $LOGS (suite.log, kubelet.log, containerd.log, kube-*.log, pods/<namespace>_<pod>_<uid>/ for container logs)"
  if [ $rc = 0 ]; then say "PASS"; else say "FAIL (exit $rc)"; fi
  exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM

say "bringing the cluster up in $W"
"$S/up.sh" "$W" || exit 1
set -a; . "$W/env"; set +a

daemon=${E2E_DAEMON:-auto} why="E2E_DAEMON=0"
if [ "$daemon" = auto ]; then
  why="no main package in cmd/kruise-daemon"
  if (cd "$ROOT" && go list -f '{{.Name}}' ./cmd/kruise-daemon 2>/dev/null | grep -qx main); then daemon=1; else daemon=0; fi
fi
only=kruise-manager
if [ "$daemon" = 1 ]; then only=kruise-manager,kruise-daemon; else say "kruise-daemon: $why; the daemon is installed disabled and its scenarios are not run"; fi
(cd "$ROOT" && go build -o "$ROOT/bin/kruise-addon" ./cmd/kruise-addon) || exit 1
E2E_BUNDLE=
if [ "$daemon" = 1 ]; then
  # The air-gap path: images into an OCI layout, one bundle of them and the chart, mirrored into
  # the loopback registry (the cluster's only one) by `bundle push`; the suite installs from it.
  say "building images ($only), a bundle of them and the chart, and pushing it to $REGISTRY"
  (cd "$ROOT" && go run ./scripts/images -out "$ROOT/bin/images" -only "$only") || exit 1
  E2E_BUNDLE=$ROOT/bin/e2e-bundle.tar
  "$ROOT/bin/kruise-addon" bundle create --images "$ROOT/bin/images" --out "$E2E_BUNDLE" || exit 1
  "$ROOT/bin/kruise-addon" bundle push --bundle "$E2E_BUNDLE" --registry "$REGISTRY" || exit 1
else
  say "building and pushing images ($only) to $REGISTRY"
  (cd "$ROOT" && go run ./scripts/images -registry "$REGISTRY" -out "$ROOT/bin/images" -only "$only") || exit 1
fi

# Sample the cluster's RSS every 2 s while the suite runs; the summary prints the peak.
( while :; do rss_report >>"$W/logs/rss.txt"; sleep 2; done ) &
SAMPLER=$!
say "running the suite (test/e2e, build tags ${E2E_TAGS:-e2e})"
HELM=$("$ROOT/scripts/helm/build.sh") || exit 1
(cd "$ROOT" && E2E_ENV="$W/env" KRUISE_ADDON="$ROOT/bin/kruise-addon" E2E_DAEMON=$daemon E2E_BUNDLE="$E2E_BUNDLE" HELM="$HELM" \
  go test -tags "${E2E_TAGS:-e2e}" -count=1 -v -timeout 20m ${E2E_RUN:+-run "$E2E_RUN"} ./test/e2e/) 2>&1 | tee "$W/logs/suite.log"
rc=${PIPESTATUS[0]}
"$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG" get pods -A -o wide >"$W/logs/pods.txt" 2>&1
"$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG" get events -A --sort-by=.lastTimestamp >"$W/logs/events.txt" 2>&1
exit "$rc"
