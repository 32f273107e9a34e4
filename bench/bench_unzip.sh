#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_unzip.sh - `znippy unzip` against Info-ZIP unzip, 7-Zip (7zz x) and bsdtar -x: extract and
# test, into tmpfs, runs alternated between the tools, best of N. The acceptance numbers of issue 34:
#   tree   a zip -6 of a system tree (about SIZE_MB, default 200): extract (-T 2) >= 3x unzip,
#          test (-t) >= 3x unzip -t
#   jars   every jar of a folder (default /usr/share/java), each extracted to its own directory
#          by a process of its own (the tools make the directory): >= 3x unzip; and all of them
#          by one process, as Info-ZIP takes a quoted '*.jar', into one directory
#   store  a zip -0 of those jars (STORE-heavy): extract >= 0.8x the speed of cp of the same bytes
#          (the stored entries as files, copied with cp -r into tmpfs)
#
# Usage: bench/bench_unzip.sh ZNIPPY [RUNS] [SIZE_MB] [TREE_DIR] [JAR_DIR]
#   ZNIPPY  the command to measure; RUNS (default 5) alternated runs per tool, the best kept
#   WORK    environment: where archives and outputs go (default /dev/shm/bench_unzip; tmpfs)
#   THREADS environment: znippy's -T (default 2)
# A small run that proves the script works: bench/bench_unzip.sh build/znippy 1 20
# Prints one table per set (seconds, best of RUNS; speed-up over Info-ZIP unzip) and writes the
# same as JSON lines to $WORK/results.jsonl.
set -euo pipefail
Z=$(realpath "${1:?usage: $0 ZNIPPY [RUNS] [SIZE_MB] [TREE_DIR] [JAR_DIR]}")
RUNS=${2:-5}
SIZE_MB=${3:-200}
TREE_DIR=${4:-/usr/lib}
JAR_DIR=${5:-/usr/share/java}
W=${WORK:-/dev/shm/bench_unzip}
TH=${THREADS:-2}
mkdir -p "$W"
: >"$W/results.jsonl"
have() { command -v "$1" >/dev/null; }

# The tree: files of TREE_DIR (regular, readable) up to SIZE_MB, zipped with zip -6.
make_tree_zip() {
	[ -f "$W/tree.zip" ] && [ "$(cat "$W/tree.size" 2>/dev/null)" = "$SIZE_MB $TREE_DIR" ] && return
	rm -f "$W/tree.zip"
	(cd "$TREE_DIR" && find . -type f -readable -printf '%s %p\n' 2>/dev/null | LC_ALL=C sort -k2 |
		awk -v lim=$((SIZE_MB * 1048576)) '{ t += $1; if (t > lim) exit; print substr($0, index($0, " ") + 1) }' |
		zip -q -6 -y "$W/tree.zip" -@) || true
	echo "$SIZE_MB $TREE_DIR" >"$W/tree.size"
}
make_jar_sets() {
	rm -rf "$W/jars" && mkdir -p "$W/jars"
	find "$JAR_DIR" -maxdepth 1 -name '*.jar' -type f -exec cp {} "$W/jars/" \;
	rm -f "$W/store.zip" && (cd "$W/jars" && zip -q -0 ../store.zip ./*.jar)
}

# time_it NAME CMD...: seconds of one run (the output directory emptied before).
time_it() {
	rm -rf "$W/out" && mkdir -p "$W/out"
	sync
	local s e
	s=$(date +%s%N)
	"$@" >/dev/null 2>&1 || echo "warning: $* exited $?" >&2
	e=$(date +%s%N)
	echo "scale=4; ($e - $s) / 1000000000" | bc
}

# bench SET LABEL=CMD ...: alternate the commands RUNS times, keep the best of each.
bench() {
	local set=$1
	shift
	declare -A best
	local labels=()
	for spec in "$@"; do labels+=("${spec%%=*}"); done
	for _ in $(seq "$RUNS"); do
		for spec in "$@"; do
			local l=${spec%%=*} c=${spec#*=} t
			t=$(time_it bash -c "$c")
			if [ -z "${best[$l]:-}" ] || [ "$(echo "$t < ${best[$l]}" | bc)" = 1 ]; then best[$l]=$t; fi
		done
	done
	local base=${best[unzip]:-${best[cp]:-}}
	printf '\n%s (best of %s, seconds)\n' "$set" "$RUNS"
	for l in "${labels[@]}"; do
		local ratio=""
		[ -n "$base" ] && ratio=$(echo "scale=2; $base / ${best[$l]}" | bc)
		printf '  %-22s %8s  %sx\n' "$l" "${best[$l]}" "$ratio"
		printf '{"set":"%s","tool":"%s","seconds":%s,"speedup":%s}\n' "$set" "$l" "${best[$l]}" \
			"${ratio:-null}" >>"$W/results.jsonl"
	done
}

make_tree_zip
make_jar_sets
echo "tree.zip: $(du -h "$W/tree.zip" | cut -f1) compressed, $(unzip -l "$W/tree.zip" | tail -1)"
echo "jars: $(ls "$W/jars" | wc -l) files, $(du -sh "$W/jars" | cut -f1); store.zip $(du -h "$W/store.zip" | cut -f1)"
O=$W/out
tools=("unzip=unzip -q -o $W/tree.zip -d $O" "znippy -T$TH=$Z unzip -q -o -T $TH $W/tree.zip -d $O")
have 7zz && tools+=("7zz x=7zz x -y -o$O $W/tree.zip")
have bsdtar && tools+=("bsdtar -x=bsdtar -xf $W/tree.zip -C $O")
bench "tree: extract" "${tools[@]}"
tools=("unzip=unzip -tq $W/tree.zip" "znippy -T$TH=$Z unzip -t -qq -T $TH $W/tree.zip")
have 7zz && tools+=("7zz t=7zz t $W/tree.zip")
bench "tree: test" "${tools[@]}"
J=$W/jars
each() { echo "for j in $J/*.jar; do $1; done"; }
tools=("unzip=$(each "unzip -q -o \$j -d $O/\$(basename \$j)")"
	"znippy -T$TH=$(each "$Z unzip -q -o -T $TH \$j -d $O/\$(basename \$j)")")
have 7zz && tools+=("7zz x=$(each "7zz x -y -o$O/\$(basename \$j) \$j")")
have bsdtar && tools+=("bsdtar -x=$(each "mkdir -p $O/\$(basename \$j) && bsdtar -xf \$j -C $O/\$(basename \$j)")")
bench "jars: extract each" "${tools[@]}"
bench "jars: one process" "unzip=unzip -qq -o '$J/*.jar' -d $O" \
	"znippy -T$TH=$Z unzip -qq -o -T $TH '$J/*.jar' -d $O"
bench "store: extract" "cp=cp -r $J/. $O/" "unzip=unzip -q -o $W/store.zip -d $O" \
	"znippy -T$TH=$Z unzip -q -o -T $TH $W/store.zip -d $O"
echo
echo "results: $W/results.jsonl"
