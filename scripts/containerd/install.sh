#!/usr/bin/env bash
# Install Debian's containerd and runc when they are missing. Idempotent: with both present it only
# says so. The CRI integration tests and the daemon benchmark start a private containerd from them.
set -euo pipefail
missing=()
command -v containerd >/dev/null || missing+=(containerd)
command -v runc >/dev/null || missing+=(runc)
if [ ${#missing[@]} -eq 0 ]; then
  echo "containerd and runc present: $(containerd --version | awk '{print $3}'), $(runc --version | head -1)"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "missing ${missing[*]} and no apt-get to install them; install containerd and runc by hand" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing ${missing[*]} with apt-get"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq containerd runc >/dev/null
echo "installed: $(containerd --version | awk '{print $3}'), $(runc --version | head -1)"
