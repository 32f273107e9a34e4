#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# extract_ab.sh - A/B of reading an archive between two builds, runs alternated: `extract` into
# tmpfs, or `cat` of every file to /dev/null (one process).
#
# Usage: bench/extract_ab.sh OLD NEW RUNS ARCHIVE extract|cat [OPTION...]
#   OLD, NEW  the two commands (copy a build's znippy aside before rebuilding)
#   RUNS      runs of each, alternated (old, new, old, ...)
#   extract   extract -C /dev/shm/ab_x OPTION... (default -T2), the tree removed after each run
#             (not timed); the trees of the last runs are compared
#   cat       `znippy cat ARCHIVE PATH...` of every file (xargs: a few processes)
# Prints the min and median wall time of each and new/old. Every run is appended to
# bench/history/extract_ab.jsonl as NEW against OLD, marked "gate": false (an A/B of two builds).
set -euo pipefail
cmdline="bench/extract_ab.sh $*"
old=$1 new=$2 runs=$3 arch=$4 mode=$5
shift 5
[ $# -gt 0 ] || set -- -T2
out=${TMPDIR_AB:-/dev/shm}
list=$(mktemp)
trap 'rm -rf "$list" "$out/ab_x" "$out/ab_old.sum" "$out/ab_new.sum"' EXIT
"$old" list --json "$arch" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "file":
        print(e["path"])' >"$list"
for _ in $(seq "$runs"); do
	for b in old new; do
		cmd=$old
		[ $b = new ] && cmd=$new
		rm -rf "$out/ab_x" && mkdir -p "$out/ab_x"
		s=$(date +%s%N)
		if [ "$mode" = extract ]; then
			"$cmd" extract -q "$@" -C "$out/ab_x" "$arch"
		else
			xargs -d '\n' -a "$list" "$cmd" cat "$arch" >/dev/null
		fi
		e=$(date +%s%N)
		echo "$b $(((e - s) / 1000))"
		if [ "$mode" = extract ]; then
			(cd "$out/ab_x" && find . -type f -print0 | sort -z | xargs -0 -r md5sum) >"$out/ab_$b.sum"
		fi
	done
done | python3 "$(dirname "$0")/ab_report.py" extract_ab "$cmdline" "$(basename "$arch")" "$mode $*" "$new" "$old"
if [ "$mode" = extract ]; then
	cmp -s "$out/ab_old.sum" "$out/ab_new.sum" && echo "trees: the same" || echo "trees: DIFFER"
fi
