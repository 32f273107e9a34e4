#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# index_export.sh - the cost of `znippy index`: exporting the index of an archive of FILES entries
# as Arrow IPC, JSON Lines and CSV (issue 35's acceptance: 100,000 entries under 0.5 s, Arrow).
#
# Usage: bench/index_export.sh [--tiny|--poms] [FILES] [DIR] [ZNIPPY]
#   FILES   entries (default 100000)
#   DIR     scratch directory (default /dev/shm/zn-index); tree and archive are made once
#   ZNIPPY  the command (default build/znippy)
#   --tiny  the tree of bench/make_tiny_files.py (40-byte files, 1,000 to a directory) instead
#           of gen_corpus's small corpus (~10 KiB text files, 100 to a directory: ~1 GB at
#           100,000); the export reads only the index, so both give the same kind of number
#   --poms  FILES small .pom files in a Maven layout (10 versions of an artifact a directory):
#           every row a package, the package columns full
# Prints the best and the median of RUNS (default 7) runs of each format, and the output sizes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tiny=0
case ${1:-} in
--tiny) tiny=1 && shift ;;
--poms) tiny=2 && shift ;;
esac
n=${1:-100000}
dir=${2:-/dev/shm/zn-index}
z=$(realpath "${3:-build/znippy}")
runs=${RUNS:-7}
mkdir -p "$dir"
tree=$dir/tree-$n-$tiny
if [ ! -e "$tree.done" ]; then
	rm -rf "$tree"
	if [ $tiny = 2 ]; then
		python3 - "$tree" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    g, a, v = i // 1000, i // 10 % 100, i % 10
    d = f"{root}/org/g{g}/art{a}/1.{a}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/art{a}-1.{a}.{v}.pom", "w") as f:
        f.write(f"<project><groupId>org.g{g}</groupId><artifactId>art{a}</artifactId>"
                f"<version>1.{a}.{v}</version></project>\n")
PY
	elif [ $tiny = 1 ]; then
		python3 "$here/make_tiny_files.py" "$tree" "$n"
	else
		cc -O2 -o "$dir/gen_corpus" "$here/gen_corpus.c" -lm
		"$dir/gen_corpus" small "$tree" 42 "$n"
	fi
	touch "$tree.done"
fi
a=$tree.zn
[ -e "$a" ] || "$z" create -q -o "$a" -C "$tree" .
echo "archive: $a, $("$z" list "$a" | wc -l) entries"
for fmt in arrow jsonl csv; do
	times=()
	for _ in $(seq "$runs"); do
		s=$(date +%s.%N)
		"$z" index "$a" --format $fmt -o "$dir/out.$fmt"
		e=$(date +%s.%N)
		times+=("$(echo "$e - $s" | bc)")
	done
	printf '%-6s best %.3f s  median %.3f s  (%s bytes)\n' $fmt \
		"$(printf '%s\n' "${times[@]}" | sort -n | head -1)" \
		"$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")" \
		"$(stat -c %s "$dir/out.$fmt")"
done
