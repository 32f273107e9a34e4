#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cat_breakdown.sh - where the time of `znippy cat ARCHIVE FILE` goes (issue 30's target: at most
# 1 ms above the process start). For three files (bench_cat_places: the one ending nearest the
# start of its block, the middle, the end) against /bin/true and `znippy --version`: CPU time
# and page faults (perf stat -r RUNS; on a loaded machine task-clock is the steadier number),
# and instructions by part (callgrind, inclusive counts: block decoding, index rows and the path
# search, digests; a part may hold a little of another, so "rest" is approximate).
#
# Usage: bench/cat_breakdown.sh ARCHIVE [RUNS] [BUILD]
#   ARCHIVE  e.g. of the 100,000-file corpus: bench/gen_corpus small /dev/shm/small 1 100000,
#            then build/znippy create -o /dev/shm/s1.zn -C /dev/shm small
#   RUNS     perf stat repetitions (default 40)
#   BUILD    the build directory (default build; ZN_BENCH=ON for bench_cat_places)
set -euo pipefail
a=$1
runs=${2:-40}
b=${3:-build}
z=$b/znippy
mapfile -t places < <("$b/bench_cat_places" "$a")
names=(start middle end)
stat() { # label, command...
	local label=$1
	shift
	perf stat -r "$runs" -e task-clock,page-faults "$@" 2>&1 >/dev/null |
		awk -v l="$label" '/task-clock/ {t = $1} /page-faults/ {f = $1} /elapsed/ {e = $1 * 1000}
			END {printf "%-34s task-clock %6.2f ms  page faults %5s  elapsed %6.2f ms\n", l, t, f, e}'
}
stat "/bin/true" /bin/true
stat "znippy --version" "$z" --version
for k in 0 1 2; do
	set -- ${places[$k]}
	stat "cat, file ending at byte $1 (${names[$k]})" "$z" cat "$a" "$2"
done
command -v valgrind >/dev/null || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in 0 1 2; do
	set -- ${places[$k]}
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$z" cat "$a" "$2" >/dev/null 2>&1
	callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg" 2>/dev/null |
		awk -v l="${names[$k]}" '
			/PROGRAM TOTALS/ {gsub(",", "", $1); total = $1}
			/:zn_block_get / {gsub(",", "", $1); dec = $1}
			/:zn_row / {gsub(",", "", $1); row = $1}
			/:zn_reader_find / {gsub(",", "", $1); find = $1}
			/:SHA256_Update / {gsub(",", "", $1); sha = $1}
			/:zn_xxh3 / {gsub(",", "", $1); xxh = $1}
			END {printf "%-7s instructions %5.2f M: block decode %5.2f M, index rows %4.2f M, find %4.2f M, SHA-256 %4.2f M, XXH3 %4.2f M, rest %4.2f M\n",
				l, total / 1e6, dec / 1e6, row / 1e6, find / 1e6, sha / 1e6, xxh / 1e6,
				(total - dec - row - find - sha - xxh) / 1e6}'
done
