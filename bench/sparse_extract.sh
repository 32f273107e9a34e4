#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse_extract.sh - extracting a mostly-empty file (a disk image's shape): znippy's default,
# which leaves zero runs as holes, against --no-sparse and zstd -d | tar -x, which write them.
#
# Usage: bench/sparse_extract.sh [DIR] [ZNIPPY]
#   DIR     scratch directory on the file system to measure (default /tmp/zn-sparse)
#   ZNIPPY  the command (default build/znippy)
# The file is 1 GiB: 16 MiB of random bytes at 0, 256 MiB and 1008 MiB, holes elsewhere.
# Wall times of one run each, with the page cache flushed to disk (sync) inside the timing.
# Appended to bench/history/sparse_extract.jsonl (bench/history.py): znippy's extract against
# --no-sparse's and zstd -d | tar -x's.
set -euo pipefail
cmdline="bench/sparse_extract.sh $*" # for the history
export ZN_BENCH_RUN=${ZN_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} # one run in the history
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/tmp/zn-sparse}
z=$(realpath "${2:-build/znippy}")
mkdir -p "$dir"
cd "$dir"
rm -rf in out-*
mkdir in
truncate -s 1G in/image
for mib in 0 256 1008; do
	head -c 16M /dev/urandom | dd of=in/image bs=1M seek="$mib" conv=notrunc status=none
done
"$z" create -q -o a.zn in
tar -cf - in | zstd -T0 -3 -q -f -o a.tzst
t() { # label, command...: wall seconds, and the blocks the file takes
	local label=$1 s e
	shift
	sync
	s=$(date +%s.%N)
	"$@"
	sync
	e=$(date +%s.%N)
	awk -v l="$label" -v s="$s" -v e="$e" 'BEGIN { printf "%-28s %6.2f s\n", l, e - s }'
	secs+=("$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }')")
}
secs=()
t "znippy extract" "$z" extract -q a.zn -C out-sparse
t "znippy extract --no-sparse" "$z" extract -q --no-sparse a.zn -C out-full
mkdir out-tar
t "zstd -d | tar -x" sh -c 'zstd -dc a.tzst | tar -xf - -C out-tar'
cmp in/image out-sparse/in/image && cmp in/image out-full/in/image && cmp in/image out-tar/in/image
du -k --apparent-size in/image | sed 's/^/apparent KiB: /'
for d in out-sparse out-full out-tar; do
	printf '%-12s %8s KiB on disk\n' "$d" "$(du -k "$d/in/image" | cut -f1)"
done
for i in 1 2; do
	python3 "$here/history.py" record sparse_extract --command "$cmdline" --corpus "1 GiB, 48 MiB data" \
		--op extract --peer "$([ $i = 1 ] && echo "znippy --no-sparse" || echo "zstd -d | tar -x")" \
		--runs "${secs[0]}" --peer-runs "${secs[$i]}"
done
rm -rf in out-* a.zn a.tzst
