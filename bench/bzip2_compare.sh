#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bzip2_compare.sh - znippy bunzip2 -T1/-T2 against bzip2 -dc, lbzip2 -n1/-n2, ibzip2 -P2 and
# pbzip2, on a bzip2 -9 file and an lbzip2 file of one input: runs alternated, best of N wall
# and CPU (user + system) per command, every output checked against the input, and the ratios
# the acceptance of issue 33 names.
#
# Usage: bench/bzip2_compare.sh [-b BUILD] [-i FILE] [-m MB] [-r REPS] [-o OUTDIR]
#   -b BUILD  the build directory holding znippy (default build)
#   -i FILE   the uncompressed input (default: a tar of /usr/include, /usr/share and /usr/lib cut
#             to MB megabytes, made once in OUTDIR)
#   -m MB     the size of that tar (default 130, as in the issue)
#   -r REPS   runs of each command (default 3; the best is kept)
#   -o OUTDIR where the inputs and the report go (default bench/out/bzip2)
# Peers missing from PATH (or /tmp/peers/bin for ibzip2, built by ../shared/peers/build.sh) are
# left out. The report (markdown) is printed and written to OUTDIR/report.md; when bench/history
# exists it is also appended to bench/history/bzip2.md with the date and the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build input= mb=130 reps=3 outdir=bench/out/bzip2
while getopts b:i:m:r:o: opt; do
	case $opt in
	b) build=$OPTARG ;;
	i) input=$OPTARG ;;
	m) mb=$OPTARG ;;
	r) reps=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) sed -n 7,13p "$0" >&2; exit 2 ;;
	esac
done
zn=$(realpath "$build/znippy")
[ -x "$zn" ] || { echo "bzip2_compare: no $build/znippy (build first)" >&2; exit 1; }
mkdir -p "$outdir"
if [ -z "$input" ]; then
	input=$outdir/input-${mb}M.tar
	[ -s "$input" ] || tar cf - /usr/include /usr/share /usr/lib 2>/dev/null |
		head -c $((mb * 1000000)) >"$input" || true
fi
[ -s "$input" ] || { echo "bzip2_compare: empty input $input" >&2; exit 1; }
want=$(sha256sum <"$input" | cut -d' ' -f1)
base=$outdir/$(basename "$input")
[ "$base.9.bz2" -nt "$input" ] || bzip2 -9 -c "$input" >"$base.9.bz2"
if command -v lbzip2 >/dev/null; then
	[ "$base.lbz.bz2" -nt "$input" ] || lbzip2 -9 -n 2 -c "$input" >"$base.lbz.bz2"
	files=("$base.9.bz2" "$base.lbz.bz2")
else
	files=("$base.9.bz2")
fi

ibzip2=$(command -v ibzip2 || echo /tmp/peers/bin/ibzip2)
names=() cmds=()
add() { # NAME COMMAND (run as COMMAND FILE > out), if its program exists
	local prog=${2%% *}
	command -v "$prog" >/dev/null || [ -x "$prog" ] || return 0
	names+=("$1") cmds+=("$2")
}
add "znippy -T1" "$zn bunzip2 -c -T 1"
add "znippy -T2" "$zn bunzip2 -c -T 2"
add "bzip2 -dc" "bzip2 -dc"
add "lbzip2 -n1" "lbzip2 -dc -n 1"
add "lbzip2 -n2" "lbzip2 -dc -n 2"
add "ibzip2 -P2" "$ibzip2 -d -c -P 2"
add "pbzip2 -p2" "pbzip2 -dc -p2"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report=$outdir/report.md
{
	echo "## bzip2 decoding, $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null)"
	echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); input $input ($(stat -c %s "$input") bytes);"
	echo "best of $reps, commands alternated; CPU = user + system"
} | tee "$report"
for f in "${files[@]}"; do
	declare -A wall=() cpu=()
	for ((r = 0; r < reps; r++)); do
		for i in "${!cmds[@]}"; do
			/usr/bin/time -f "%e %U %S" -o "$tmp/t" ${cmds[$i]} "$f" >"$tmp/out" ||
				{ echo "bzip2_compare: ${names[$i]} failed on $f" >&2; exit 1; }
			got=$(sha256sum <"$tmp/out" | cut -d' ' -f1)
			[ "$got" = "$want" ] ||
				{ echo "bzip2_compare: ${names[$i]}: wrong output on $f" >&2; exit 1; }
			read -r w u s <"$tmp/t"
			c=$(echo "$u + $s" | bc)
			if [ -z "${wall[$i]:-}" ] || [ "$(echo "$w < ${wall[$i]}" | bc)" = 1 ]; then
				wall[$i]=$w
			fi
			if [ -z "${cpu[$i]:-}" ] || [ "$(echo "$c < ${cpu[$i]}" | bc)" = 1 ]; then
				cpu[$i]=$c
			fi
		done
	done
	size=$(stat -c %s "$input")
	{
		echo
		echo "### $(basename "$f") ($(stat -c %s "$f") bytes)"
		echo
		echo "| command | wall s | CPU s | MB/s |"
		echo "|---|---:|---:|---:|"
		for i in "${!cmds[@]}"; do
			printf '| `%s` | %.2f | %.2f | %.1f |\n' "${cmds[$i]/$zn/znippy}" "${wall[$i]}" \
				"${cpu[$i]}" "$(echo "$size / ${wall[$i]} / 1000000" | bc -l)"
		done
		echo
		echo "| acceptance (wall) | ratio | wanted |"
		echo "|---|---:|---:|"
		ratio() { # ZNIPPY_NAME PEER_NAME WANTED
			local a= b=
			for i in "${!names[@]}"; do
				[ "${names[$i]}" = "$1" ] && a=${wall[$i]}
				[ "${names[$i]}" = "$2" ] && b=${wall[$i]}
			done
			[ -n "$a" ] && [ -n "$b" ] || return 0
			printf '| %s vs %s | %.2fx | %sx |\n' "$1" "$2" "$(echo "$b / $a" | bc -l)" "$3"
		}
		ratio "znippy -T1" "bzip2 -dc" 1.5
		ratio "znippy -T1" "lbzip2 -n1" 1.1
		ratio "znippy -T2" "lbzip2 -n2" 1.2
		ratio "znippy -T2" "ibzip2 -P2" 1.2
	} | tee -a "$report"
	unset wall cpu
done
if [ -d bench/history ]; then
	cat "$report" >>bench/history/bzip2.md
	echo "(appended to bench/history/bzip2.md)"
fi
