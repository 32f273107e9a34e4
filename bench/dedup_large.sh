#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dedup_large.sh - what storing identical large files once saves, and what a same-size file that
# is not a copy costs.
#
# Usage: bench/dedup_large.sh [CORPORA_DIR] [RUNS]   (defaults bench/corpora, 3)
# Builds three trees in /dev/shm from the `large` corpus's file F (1 GB of log text):
#   copy  F and an identical copy
#   near  F and a copy with one byte changed in the middle (same size, same first and last 4 KiB:
#         the copy is hashed whole before it is found to differ, then read again to be stored)
# and times `znippy create -T2` of each, default against --no-dedup, alternately, RUNS times
# each; prints the best times, their ratio and the archive sizes. Every run is appended to
# bench/history/dedup_large.jsonl (bench/history.py): the default against --no-dedup.
set -euo pipefail
cmdline="bench/dedup_large.sh $*" # for the history
export ZN_BENCH_RUN=${ZN_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} # one run in the history
cd "$(dirname "$0")/.."
C=${1:-bench/corpora}
N=${2:-3}
Z=build/znippy
F=$(ls "$C"/large/* | head -n 1)
T=/dev/shm/zn-dedup-bench
rm -rf "$T"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/copy" "$T/near"
cp "$F" "$T/copy/a"
cp "$F" "$T/copy/b"
cp "$F" "$T/near/a"
cp "$F" "$T/near/b"
size=$(stat -c %s "$F")
printf 'X' | dd of="$T/near/b" bs=1 seek=$((size / 2)) conv=notrunc status=none

secs() { # command... -> wall seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
min() { echo "if ($1 < $2) $1 else $2" | bc; }

echo "load $(cut -d' ' -f1-3 /proc/loadavg); file $(basename "$F"), $size bytes; best of $N"
for tree in copy near; do
	d=999999 n=999999 druns= nruns=
	for _ in $(seq "$N"); do
		s=$(secs "$Z" create -q -T2 -o "$T/d.zn" -C "$T" "$tree")
		druns+=" $s" d=$(min "$s" "$d")
		s=$(secs "$Z" create -q -T2 --no-dedup -o "$T/n.zn" -C "$T" "$tree")
		nruns+=" $s" n=$(min "$s" "$n")
	done
	python3 bench/history.py record dedup_large --command "$cmdline" --corpus "$tree" --op create \
		--peer "znippy --no-dedup" --runs "$druns" --peer-runs "$nruns"
	printf '%s: default %.2f s, %s bytes; --no-dedup %.2f s, %s bytes; time ratio %.2f\n' \
		"$tree" "$d" "$(stat -c %s "$T/d.zn")" "$n" "$(stat -c %s "$T/n.zn")" \
		"$(echo "$d / $n" | bc -l)"
done
