#!/usr/bin/env bash
# Tear down what start.sh started under BASE: its containers and shims, containerd itself, leftover
# mounts, and the work dir (KEEP=1 keeps the dir, e.g. to read logs/containerd.log).
set -uo pipefail
BASE=${BASE:?BASE must name the dir given to start.sh}
SOCK="$BASE/containerd.sock"
PIDF="$BASE/containerd.pid"
if [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null; then
  # Kill and delete every task, so the shims exit and unmount the rootfs.
  for t in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr --address "$SOCK" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1
  done
  for t in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    for _ in $(seq 1 50); do
      ctr --address "$SOCK" -n k8s.io tasks delete "$t" >/dev/null 2>&1 && break
      sleep 0.1
    done
  done
  P=$(cat "$PIDF")
  kill -TERM "$P"
  for _ in $(seq 1 100); do kill -0 "$P" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$P" 2>/dev/null && kill -KILL "$P"
fi
# Shims this containerd started carry its socket address on their command line; end only those.
for d in /proc/[0-9]*; do
  if tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF -- "-address $SOCK "; then
    kill -KILL "${d#/proc/}" 2>/dev/null
  fi
done
# Unmount whatever is left below BASE, deepest first.
grep -F " $BASE/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
[ "${KEEP:-0}" = 1 ] || rm -rf "$BASE"
echo "stopped containerd under $BASE"
