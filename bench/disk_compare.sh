#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# disk_compare.sh - extraction onto a disk filesystem: znippy vs `zstd -dc | tar -x` vs the
# floor (bench_write_floor: the same tree written from memory by 2 threads), best of RUNS.
#
# Usage: bench/disk_compare.sh CORPORA_DIR CORPUS DISK_DIR [RUNS] [SETTLE_SECONDS]
#   e.g. bench/disk_compare.sh bench/corpora small /work/xdisk 3 10
# Before every timed run the previous tree is removed, the filesystem synced, and the script
# waits SETTLE_SECONDS (default 5): on the development VM (ext4 mounted with `discard`) a run
# started right after deleting 100,000 files pays for that deletion, and the same command then
# takes anywhere from 1x to 8x as long. Archives live in /dev/shm. The runs are appended to
# bench/history/disk_compare.jsonl (bench/history.py).
set -euo pipefail
export ZN_BENCH_RUN=${ZN_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} # one run in the history
C=$1 corp=$2 D=$3 N=${4:-3} W=${5:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
Z=$here/build/znippy F=$here/build/bench_write_floor
mkdir -p "$D"
"$Z" create -q -T2 -o /dev/shm/dc.zn -C "$C" "$corp"
tar -cf - -C "$C" "$corp" | zstd -T0 -3 -q -f -o /dev/shm/dc.tzst
settle() { rm -rf "$D/x" "$D/floor"; sync -f "$D"; sleep "$W"; mkdir -p "$D/x"; sync -f "$D"; }
now() { date +%s.%N; }
best() { tr ' ' '\n' | grep . | sort -g | head -1; }
zt="" tt="" ft=""
for _ in $(seq "$N"); do
	settle; s=$(now); "$Z" extract -q -T2 /dev/shm/dc.zn -C "$D/x"; zt+=" $(echo "$(now) - $s" | bc)"
	settle; s=$(now); zstd -dc /dev/shm/dc.tzst | tar -xf - -C "$D/x"; tt+=" $(echo "$(now) - $s" | bc)"
	settle; ft+=" $("$F" -T 2 -n 1 "$C/$corp" "$D/floor" | sed 's/.*"best_s":\([0-9.]*\).*/\1/')"
done
rm -rf "$D/x" "$D/floor" /dev/shm/dc.zn /dev/shm/dc.tzst
zb=$(best <<<"$zt") tb=$(best <<<"$tt") fb=$(best <<<"$ft")
echo "$corp to $D: znippy$zt | zstd|tar$tt | floor$ft (seconds)"
for peer in "zstd|tar:$tt" "floor:$ft"; do
	gate=()
	[ "${peer%%:*}" = floor ] && gate=(--no-gate)
	python3 "$here/bench/history.py" record disk_compare --command "bench/disk_compare.sh $*" \
		--corpus "$corp" --op extract_disk --peer "${peer%%:*}" --runs "$zt" --peer-runs "${peer#*:}" "${gate[@]}"
done
awk -v z="$zb" -v t="$tb" -v f="$fb" -v c="$corp" 'BEGIN{printf "%s: best znippy %.2f s, zstd|tar %.2f s, floor %.2f s -> %.2fx tar|zstd; znippy takes %.2fx the floor time\n", c, z, t, f, t/z, z/f}'
