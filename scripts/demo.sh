#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo.sh - the archive round trip on a generated sample tree, with throughput.
# Usage: scripts/demo.sh [path/to/znippy]
set -euo pipefail
Z=${1:-build/znippy}
Z=$(cd "$(dirname "$Z")" && pwd)/$(basename "$Z")
W=$(mktemp -d /tmp/znippy-demo.XXXXXX)
trap 'rm -rf "$W"' EXIT
now() { date +%s.%N; }
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f MB/s", b / 1e6 / (s > 0 ? s : 1e-9) }'; }

echo "== building a sample tree in $W/tree"
mkdir -p "$W/tree"
cp -a /usr/include "$W/tree/include" 2>/dev/null || true
mkdir -p "$W/tree/logs" "$W/tree/blobs"
for i in $(seq 1 20); do
	awk -v n="$i" 'BEGIN { for (k = 0; k < 20000; k++) printf "2026-11-%02d 12:%02d:%02d INFO worker-%d request %d served in %d ms\n", n, k % 60, k % 60, k % 8, k, (k * 7) % 500 }' >"$W/tree/logs/app-$i.log"
done
head -c 20000000 /dev/urandom >"$W/tree/blobs/random.bin"
bytes=$(du -sb "$W/tree" | cut -f1)
files=$(find "$W/tree" -type f | wc -l)
echo "   $files files, $((bytes / 1000000)) MB"

echo "== znippy create"
t0=$(now); "$Z" create -q -o "$W/sample.zn" -C "$W" tree; t1=$(now)
echo "   $(mbps "$bytes" "$(echo "$t1 - $t0" | bc -l)")"
"$Z" info "$W/sample.zn" | sed 's/^/   /'

echo "== znippy list (first entries)"
{ "$Z" list -l "$W/sample.zn" || true; } | head -5 | sed 's/^/   /'

echo "== znippy cat tree/include/stdio.h (random access: reads the index and one block)"
t0=$(now); "$Z" cat "$W/sample.zn" tree/include/stdio.h >"$W/stdio.h"; t1=$(now)
cmp "$W/stdio.h" "$W/tree/include/stdio.h" && echo "   identical to the original"
t2=$(now)
for i in 1 2 3 4 5 6 7 8 9 10; do "$Z" cat "$W/sample.zn" tree/include/stdio.h >/dev/null; done
t3=$(now)
printf '   %.1f ms the first time, %.1f ms on average over 10 more (whole process, with the\n' \
	"$(echo "($t1 - $t0) * 1000" | bc -l)" "$(echo "($t3 - $t2) * 100" | bc -l)"
echo "   shell's own overhead; bench/cat_latency.py measures it properly)"

echo "== znippy extract"
t0=$(now); "$Z" extract -q "$W/sample.zn" -C "$W/out"; t1=$(now)
echo "   $(mbps "$bytes" "$(echo "$t1 - $t0" | bc -l)")"
diff -r --no-dereference "$W/tree" "$W/out/tree" && echo "   extracted tree is identical"

echo "== znippy verify"
t0=$(now); "$Z" verify "$W/sample.zn"; t1=$(now)
echo "   $(mbps "$bytes" "$(echo "$t1 - $t0" | bc -l)")"
