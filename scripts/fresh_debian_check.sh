#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fresh_debian_check.sh - run `make test` (or another target) from a clean clone inside a fresh
# Debian 12 chroot, to check that the project's own files install everything it needs.
#
# Usage (as root): scripts/fresh_debian_check.sh [MAKE_TARGET] [DIR]
#   MAKE_TARGET defaults to test; DIR (default /tmp/znippy-fresh) is created by debootstrap
#   --variant=minbase (a smaller system than a standard install) and removed at the end.
# Only make and git are installed by hand first (a system must have make to run `make`); every
# other package must come from the project's scripts. Needs debootstrap (installed if missing)
# and the Debian archive of /etc/apt. The chroot shares this kernel, so kernel-dependent checks
# (io_uring, tmpfs mounts) behave as they do here.
set -euo pipefail
target=${1:-test}
dir=${2:-/tmp/znippy-fresh}
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "fresh_debian_check: run as root" >&2; exit 2; }
[ ! -e "$dir" ] || { echo "fresh_debian_check: $dir exists" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
cleanup() {
	umount -R "$dir/dev" "$dir/sys" 2>/dev/null || true
	umount "$dir/proc" 2>/dev/null || true
	if ! mount | grep -q " $dir/"; then rm -rf "$dir"; fi
}
trap cleanup EXIT
debootstrap --variant=minbase bookworm "$dir" http://deb.debian.org/debian >/dev/null
if [ -d /etc/apt/sources.list.d ] && ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
	cp /etc/apt/sources.list.d/*.sources "$dir/etc/apt/sources.list.d/"
	rm -f "$dir/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$dir/etc/resolv.conf"
mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --rbind /dev "$dir/dev"
git clone -q "$repo" "$dir/root/znippy"
chroot "$dir" /bin/bash -c "apt-get update -q >/dev/null && apt-get install -y -q make git >/dev/null &&
	cd /root/znippy && time make $target"
