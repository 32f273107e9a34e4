#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# create_ab.sh - A/B of `znippy create` between two builds, runs alternated, on one tree.
#
# Usage: bench/create_ab.sh OLD NEW RUNS DIR NAME [CREATE OPTION...]
#   OLD, NEW  the two commands (copy a build's znippy aside before rebuilding)
#   RUNS      runs of each, alternated (old, new, old, ...)
#   DIR NAME  the tree: create -C DIR NAME
#   options   passed to both (default -T2); the archives go to /dev/shm and are compared
# Prints the min and median wall time of each, new/old, and whether the archives are byte-identical
# after the last run (they should be: a change to how files are read must not change the archive).
# Every run is appended to bench/history/create_ab.jsonl (bench/history.py) as NEW against OLD,
# marked "gate": false: an A/B of two builds, not a measurement bench/gate follows.
set -euo pipefail
cmdline="bench/create_ab.sh $*" # for the history
old=$1 new=$2 runs=$3 dir=$4 name=$5
shift 5
[ $# -gt 0 ] || set -- -T2
out=${TMPDIR_AB:-/dev/shm}
for _ in $(seq "$runs"); do
	for b in old new; do
		cmd=$old
		[ $b = new ] && cmd=$new
		s=$(date +%s%N)
		"$cmd" create -q "$@" -o "$out/ab_$b.zn" -C "$dir" "$name" || true
		e=$(date +%s%N)
		echo "$b $(((e - s) / 1000))"
	done
done | python3 "$(dirname "$0")/ab_report.py" create_ab "$cmdline" "$name" "create $*" "$new" "$old"
cmp -s "$out/ab_old.zn" "$out/ab_new.zn" && echo "archives: byte-identical" || echo "archives: DIFFER"
rm -f "$out/ab_old.zn" "$out/ab_new.zn"
