#!/usr/bin/env bash
# Tears down what up.sh started, by PID only, and checks that nothing is left: no process, no mount
# below the work dir, no cgroup under any node's cgroup root, no bridge link or veth, no iptables chain.
# Every node up.sh listed in <workdir>/nodes (one with E2E_NODES unset) is taken down.
# Prints what it removed. Keeps <workdir>/logs (remove it with KEEP_LOGS=0) and deletes the rest.
#
# Usage: scripts/e2e-cluster/down.sh [workdir]   (default: $E2E_DIR or /tmp/kruise-e2e)
# Exit:  0 when everything is gone, 1 when something was left (listed).
set -uo pipefail
W=${1:-${E2E_DIR:-/tmp/kruise-e2e}}
BRIDGE=${E2E_BRIDGE:-kae2e0}
CGROOT=${E2E_CGROUP_ROOT:-kruise-e2e}
left=0
say() { echo "e2e-down: $*" >&2; }
warn() { say "LEFT: $*"; left=1; }
# Alive = exists and is not a zombie (an orphan's zombie can linger until PID 1 reaps it).
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
stop() { # name pid [grace tenths]
  local n=$1 p=$2 g=${3:-100}
  alive "$p" || return 0
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq "$g"); do alive "$p" || { say "stopped $n (pid $p)"; return 0; }; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null
  for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
  if alive "$p"; then warn "$n (pid $p) survived SIGKILL"; else say "killed $n (pid $p)"; fi
}
pidof_file() { [ -f "$W/$1.pid" ] && cat "$W/$1.pid"; }
# Processes whose command line names a path below the work dir (e.g. "$SOCK" for containerd shims).
ours() {
  local pat=${1:-$W/} f p
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}; p=${p%/cmdline}
    { [ "$p" = $$ ] || [ "$p" = "$BASHPID" ]; } && continue
    grep -qsF -- "$pat" "$f" && alive "$p" && echo "$p"
  done
  return 0
}

[ -d "$W" ] || { say "nothing at $W"; exit 0; }
# The nodes: index, name, containerd socket, bridge, cgroup root (as up.sh wrote them).
if [ -s "$W/nodes" ]; then
  mapfile -t nodes <"$W/nodes"
else
  nodes=("0 localhost /run/$(basename "$W")/containerd.sock $BRIDGE $CGROOT")
fi
sfx() { [ "$1" = 0 ] || echo "-$1"; } # node 0 keeps the single-node file names

# 1) the kubelets first, so they do not restart containers
for l in "${nodes[@]}"; do
  read -r i name _ <<<"$l"
  p=$(pidof_file "kubelet$(sfx "$i")") && stop "kubelet $name" "$p"
done

# 2) on every node, every CRI container and sandbox: kill the tasks, delete them (the shims exit),
#    then the containers, then containerd
for l in "${nodes[@]}"; do
  read -r i name SOCK _ <<<"$l"
  if [ -S "$SOCK" ] && p=$(pidof_file "containerd$(sfx "$i")") && alive "$p"; then
    c() { ctr --address "$SOCK" -n k8s.io "$@"; }
    n=0
    for id in $(c tasks ls -q 2>/dev/null); do c tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1; n=$((n + 1)); done
    for id in $(c tasks ls -q 2>/dev/null); do
      for _ in $(seq 50); do c tasks delete "$id" >/dev/null 2>&1 && break; sleep 0.1; done
    done
    for id in $(c containers ls -q 2>/dev/null); do c containers delete "$id" >/dev/null 2>&1; done
    say "removed $n container tasks of $name"
    stop "containerd $name" "$p"
  fi
  # Shims outlive containerd; they are ours when their command line names our socket.
  for p in $(ours "$SOCK"); do stop "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-60)" "$p" 30; done
done

# 3) control plane (its state is thrown away: SIGKILL, no graceful drain), then the registry
for n in kcm sched kas etcd; do p=$(pidof_file $n) && stop $n "$p" 0; done
p=$(pidof_file registry) && stop registry "$p"

# 4) mounts below the work dir (rootfs overlays, netns, shm, projected tokens, the kubelet's rshared root), deepest first
mapfile -t mounts < <(awk -v w="$W/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r)
for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
[ ${#mounts[@]} -gt 0 ] && say "unmounted ${#mounts[@]} mounts below $W"
awk -v w="$W/" 'index($2, w) == 1 {print $2}' /proc/mounts | while read -r m; do echo "e2e-down: LEFT: mount $m" >&2; done
awk -v w="$W/" 'index($2, w) == 1 {f=1} END {exit !f}' /proc/mounts && left=1

# 5) each kubelet's cgroup tree under every hierarchy
for l in "${nodes[@]}"; do
  read -r _ _ _ _ CG <<<"$l"
  n=0
  for c in /sys/fs/cgroup/*/"$CG"; do
    [ -d "$c" ] || continue
    find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
    if [ -d "$c" ]; then warn "cgroup $c"; else n=$((n + 1)); fi
  done
  [ $n -gt 0 ] && say "removed cgroup $CG from $n hierarchies"
done

# 6) network: each node's bridge (its veths went with the pods' netns), and the kubernetes Service DNAT chain
for l in "${nodes[@]}"; do
  read -r _ _ _ BR _ <<<"$l"
  if ip link show "$BR" >/dev/null 2>&1; then
    ip link del "$BR" && say "deleted link $BR"
  fi
  ip link show "$BR" >/dev/null 2>&1 && warn "link $BR"
  veths=$(ip -o link show type veth 2>/dev/null | grep -F "master $BR " || true)
  [ -n "$veths" ] && warn "veths on $BR: $veths"
done
if iptables -t nat -S KRUISE-E2E >/dev/null 2>&1; then
  while iptables -t nat -D OUTPUT -j KRUISE-E2E 2>/dev/null; do :; done
  iptables -t nat -F KRUISE-E2E && iptables -t nat -X KRUISE-E2E && say "deleted iptables nat chain KRUISE-E2E"
fi
iptables -t nat -S KRUISE-E2E >/dev/null 2>&1 && warn "iptables nat chain KRUISE-E2E"

# 7) nothing of ours may still run
for p in $(ours); do warn "process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-100)"; done
for f in "$W"/*.pid; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .pid); p=$(cat "$f")
  alive "$p" && warn "$n (pid $p)"
done

# 8) files: keep the logs unless told otherwise
if [ $left = 0 ]; then
  find "$W" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} + 2>/dev/null
  rm -rf "/run/$(basename "$W")"
  [ "${KEEP_LOGS:-1}" = 0 ] && rm -rf "$W"
  say "down; nothing left running$([ "${KEEP_LOGS:-1}" = 0 ] || echo ", logs kept in $W/logs")"
  exit 0
fi
say "some resources were left (listed above); $W kept for inspection"
exit 1
