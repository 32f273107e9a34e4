#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deep_extract.sh - create and extract of a chain of directories DEPTH deep ("d/d/.../d", a file
# and a symlink at the bottom), against tar; the time of each, so that a cost growing with the
# square of the depth shows (extract of 3,000 levels took 51 s where every parent was resolved
# from the target again, fs_beneath.c).
#
# Usage: bench/deep_extract.sh [DEPTH] [DIR] [ZNIPPY]
#   DEPTH   levels (default 3000)
#   DIR     scratch directory (default /dev/shm/zn-deep; tmpfs, so that mkdir is not the disk's)
#   ZNIPPY  the command (default build/znippy)
set -euo pipefail
depth=${1:-3000}
dir=${2:-/dev/shm/zn-deep}
z=$(realpath "${3:-build/znippy}")
rm -rf "$dir"
mkdir -p "$dir/src"
python3 - "$dir/src" "$depth" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for _ in range(int(sys.argv[2])):
    os.mkdir("d", 0o755, dir_fd=fd)
    n = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = n
f = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(f, b"bottom\n")
os.close(f)
os.symlink("f", "l", dir_fd=fd)
PY
cd "$dir"
t() { # label, command...: its times, and its exit status when not 0
	local label=$1
	shift
	/usr/bin/time -o t.out -f "$label: %e s wall, %U s user, %S s sys" "$@" || true
	cat t.out
}
t "znippy create ($depth levels)" "$z" create -q -o deep.zn src
t "znippy extract ($depth levels)" "$z" extract -q -C x deep.zn
t "tar -c ($depth levels)" tar -cf deep.tar src
mkdir tx
# GNU tar 1.34 fails past PATH_MAX ("File name too long", exit 2): its time is for what it did.
t "tar -x ($depth levels)" tar -xf deep.tar -C tx 2>/dev/null
# The trees are removed by the next run's rm -rf, which walks by descriptors (any depth).
