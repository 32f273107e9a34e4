#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# device_pack.sh - put what bench/scaling.sh needs into .dev/, for a machine that has no Debian
# -dev packages and nothing to fetch them from (the many-core machine the device tool lends):
# znippy builds (they link their libraries statically: only libc is needed), the small corpus's
# generator, and zstd with its libraries for the peer. .dev/ is ignored by git
# (.git/info/exclude); the device tool's `run` takes it along when `carry` names it.
#
# Usage: bench/device_pack.sh [REF...]
#   build/znippy (made by `make` if missing) goes as .dev/znippy-main; each git REF (a branch or
#   commit) is built in a temporary worktree and goes as .dev/znippy-REF ('/' in REF made '-').
# Prints the command to give `run`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dev=$root/.dev
rm -rf "$dev" && mkdir -p "$dev/bin" "$dev/lib"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >>.git/info/exclude
[ -x build/znippy ] || make >/dev/null
cp build/znippy "$dev/znippy-main"
names=(main)
for ref in "$@"; do
	name=${ref//\//-}
	wt=$(mktemp -d)
	git worktree add -q --detach "$wt" "$ref"
	cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$wt/build" -j "$(nproc)" --target znippy_cli >/dev/null
	cp "$wt/build/znippy" "$dev/znippy-$name"
	git worktree remove --force "$wt"
	names+=("$name")
done
for z in "$dev"/znippy-*; do
	if ldd "$z" | grep -v -e linux-vdso -e libc.so -e ld-linux -e libm.so -e libpthread >/dev/null; then
		echo "device_pack: $z needs more than libc:" >&2
		ldd "$z" >&2
	fi
done
${CC:-cc} -O2 -o "$dev/gen_corpus" bench/gen_corpus.c -lm
zstd_bin=$(command -v zstd)
cp "$zstd_bin" "$dev/bin/zstd"
ldd "$zstd_bin" | awk '$3 ~ /^\// && $1 !~ /^(libc|libm|ld-linux)/ { print $3 }' |
	while read -r lib; do cp -L "$lib" "$dev/lib/"; done
du -sh "$dev" >&2
bins=
for n in "${names[@]}"; do bins+=" -b $n=.dev/znippy-$n"; done
cat <<EOF
run(carry=[".dev"], timeout_s=540, command=
w=/dev/shm/zs; [ "\$(df -Pk /dev/shm | awk 'NR==2 {print \$4}')" -gt 12000000 ] || w=/tmp/zs;
export PATH=\$PWD/.dev/bin:\$PATH LD_LIBRARY_PATH=\$PWD/.dev/lib GEN_CORPUS=\$PWD/.dev/gen_corpus;
nproc; bash bench/scaling.sh -r 2$bins "\$w" "\$OUT" 2>&1 | tee "\$OUT/log")
EOF
