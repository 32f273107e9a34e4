#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make_corpora.sh - generate the archive benchmark corpora, deterministically from a seed.
#
# Usage: bench/make_corpora.sh [--scale S] [--seed N] [--only src,small,...] [DIR]
#   DIR defaults to bench/corpora (scale 1) or bench/corpora/scale-S (any other scale).
#   Corpora (scale 1):
#     src     copy of /usr/include (cp -a; ~8,000 files, ~131 MB; at scale < 1 every k-th file)
#     small   100,000 text files of 5-15 KiB in ~1,000 directories (gen_corpus.c)
#     large   one ~1 GB log-like text file (gen_corpus.c)
#     random  500 MB from xoshiro256** (gen_corpus.c)
#     mixed   ~300 MB Maven-repository-like tree: jars, poms, sha1/md5, png, tgz, gz (make_mixed.py)
#   A corpus whose marker DIR/.NAME.done exists is skipped; the marker records the seed, scale, file
#   count and bytes. Delete DIR/NAME and the marker to regenerate. An interrupted corpus (no marker)
#   is removed and regenerated.
# Uses at most 2 processes. Runs on stock Debian 12: bash, cc, python3, coreutils.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scale=1
seed=1
only=src,small,large,random,mixed
dir=
while [ $# -gt 0 ]; do
	case $1 in
	--scale) scale=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h|--help) sed -n '2,17p' "$0"; exit 0 ;;
	-*) echo "make_corpora: unknown option $1" >&2; exit 2 ;;
	*) dir=$1; shift ;;
	esac
done
if [ -z "$dir" ]; then
	if awk -v s="$scale" 'BEGIN { exit !(s == 1) }'; then dir=$here/corpora; else dir=$here/corpora/scale-$scale; fi
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# scaled integer: scaled N -> round(N * scale), at least MIN
scaled() { awk -v n="$1" -v s="$scale" -v m="${2:-1}" 'BEGIN { v = int(n * s + 0.5); print (v < m ? m : v) }'; }

gen=$dir/.gen_corpus
if [ ! -x "$gen" ] || [ "$here/gen_corpus.c" -nt "$gen" ]; then
	${CC:-cc} -O2 -o "$gen" "$here/gen_corpus.c" -lm
fi

fix_dir_mtimes() { find "$1" -type d -print0 | xargs -0 touch -h -d @1704067200; }

finish() { # name path
	local files bytes
	files=$(find "$2" -type f | wc -l)
	bytes=$(find "$2" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%d", s }')
	printf '{"corpus":"%s","seed":%s,"scale":%s,"files":%s,"bytes":%s}\n' "$1" "$seed" "$scale" "$files" "$bytes" \
		> "$dir/.$1.done"
	printf 'make_corpora: %-6s %8s files %14s bytes  (%s)\n' "$1" "$files" "$bytes" "$2"
}

for name in ${only//,/ }; do
	out=$dir/$name
	if [ -e "$dir/.$name.done" ] && [ -e "$out" ]; then
		echo "make_corpora: $name exists ($(cat "$dir/.$name.done")), skipped"
		continue
	fi
	rm -rf "$out"
	t0=$(date +%s)
	case $name in
	src)
		# A snapshot of this machine's /usr/include (Debian 12 here). At scale < 1 every k-th file
		# in sorted order is copied with its directories, so the shape stays similar.
		if awk -v s="$scale" 'BEGIN { exit !(s >= 1) }'; then
			cp -a /usr/include "$out"
		else
			k=$(awk -v s="$scale" 'BEGIN { k = int(1 / s + 0.5); print (k < 1 ? 1 : k) }')
			mkdir -p "$out"
			(cd /usr/include && find . \( -type f -o -type l \) -print | LC_ALL=C sort |
				awk -v k="$k" 'NR % k == 1 || k == 1' | xargs -d '\n' cp -a --parents -t "$out")
			fix_dir_mtimes "$out" # the parents cp creates get the current time
		fi
		;;
	small)
		n=$(scaled 100000 200)
		"$gen" small "$out" "$seed" "$n" 0 2 &
		"$gen" small "$out" "$seed" "$n" 1 2
		wait $!
		fix_dir_mtimes "$out"
		;;
	large)
		mkdir -p "$out"
		"$gen" large "$out/app.log" "$seed" "$(scaled 1000000000 1000000)"
		fix_dir_mtimes "$out"
		;;
	random)
		mkdir -p "$out"
		"$gen" random "$out/random.bin" "$seed" "$(scaled 500000000 1000000)"
		fix_dir_mtimes "$out"
		;;
	mixed)
		python3 "$here/make_mixed.py" "$out" --seed "$seed" --bytes "$(scaled 300000000 1000000)"
		;;
	*)
		echo "make_corpora: unknown corpus $name" >&2
		exit 2
		;;
	esac
	finish "$name" "$out"
	echo "make_corpora: $name took $(($(date +%s) - t0)) s"
done
