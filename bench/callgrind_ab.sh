#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# callgrind_ab.sh - instructions executed by two builds of znippy for create -T1, extract -T1, cat
# of one file and gunzip -c, counted by valgrind's callgrind: repeatable where wall time is noise
# (a shared or loaded machine), so a refactor can show it costs nothing.
#
# Usage: bench/callgrind_ab.sh OLD NEW [DIR NAME...]
#   OLD, NEW   the two commands (copy a build's znippy aside before rebuilding)
#   DIR NAME   the tree: create -C DIR NAME...; default three directories of /usr/include
# Prints one line per command: the counts of each build and new/old.
set -euo pipefail
old=$1 new=$2
shift 2
dir=${1:-/usr/include}
shift || true
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(X11 GL linux)
work=$(mktemp -d "${TMPDIR:-/dev/shm}/zn-cgab.XXXXXX")
trap 'rm -rf "$work"' EXIT

ir() { # instructions of one run of "$@" (its output thrown away)
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		awk '/Collected/ { print $4 }'
}

tar -cf - -C "$dir" "${names[@]}" | gzip -6 >"$work/in.gz"
one=$(cd "$dir" && find "${names[@]}" -type f | sort | head -1)
declare -A count
for z in "$old" "$new"; do
	rm -rf "$work/a.zn" "$work/x" && mkdir "$work/x"
	count[$z,create]=$(ir "$z" create -q -T1 -o "$work/a.zn" -C "$dir" "${names[@]}")
	count[$z,extract]=$(ir "$z" extract -q -T1 -C "$work/x" "$work/a.zn")
	count[$z,cat]=$(ir "$z" cat "$work/a.zn" "$one")
	count[$z,gunzip]=$(ir "$z" gunzip -c "$work/in.gz")
done
for c in create extract cat gunzip; do
	awk -v c="$c" -v a="${count[$old,$c]}" -v b="${count[$new,$c]}" \
		'BEGIN { printf "%-8s old %14d  new %14d  new/old %.4f\n", c, a, b, b / a }'
done
