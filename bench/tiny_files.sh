#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tiny_files.sh - many tiny files, as beside every artifact of a Maven repository (a .sha1 of 40
# hex digits): archive size and times of znippy against tar | zstd, and what the index costs.
#
# Usage: bench/tiny_files.sh [FILES] [DIR] [ZNIPPY] [KIND]
#   FILES   number of files (default 100000), 1000 to a directory
#   DIR     scratch directory (default /dev/shm/zn-tiny); the tree is made once, from FILES alone
#   ZNIPPY  the command (default build/znippy)
#   KIND    sha1 (default: file d/f holds the SHA-1 hex digest of "d-f", 40 bytes) or text
#           (32-byte lines that differ little; bench/make_tiny_files.py)
# The tree is deterministic. Times are one run each (a shared machine: compare within a run, not
# across runs). The sizes give issue 30's tiny-files acceptance number: a.zn (the default
# --digest-min-size) against a.tzst (tar | zstd -3), and a-d0.zn (every digest stored, format
# version 1) for comparison; `znippy list --json a.zn` is checked against sha256sum.
# Create time and size against tar | zstd are appended to bench/history/tiny_files.jsonl.
set -euo pipefail
export ZN_BENCH_RUN=${ZN_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} # one run in the history
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-100000}
dir=${2:-/dev/shm/zn-tiny}
z=$(realpath "${3:-build/znippy}")
kind=${4:-sha1}
tree="$dir/t$n"
[ "$kind" = sha1 ] || tree="$dir/t$n-$kind"
mkdir -p "$dir"
if [ ! -e "$tree.done" ]; then
	rm -rf "$tree"
	python3 "$here/make_tiny_files.py" "$tree" "$n" "$kind"
	touch "$tree.done"
fi
t() { # label, command...: wall seconds and peak RSS (the seconds also in $dir/LABEL.s)
	local label=$1
	shift
	/usr/bin/time -f "$label: %e s, peak RSS %M KB" -o "$dir/time.out" "$@"
	cat "$dir/time.out"
	sed 's/.*: \([0-9.]*\) s,.*/\1/' "$dir/time.out" >"$dir/${label// /_}.s"
}
cd "$dir"
name=$(basename "$tree")
echo "$n files of 40 bytes in $tree"
t "znippy create" "$z" create -q -T2 -o a.zn "$name"
t "znippy create --digest none" "$z" create -q -T2 --digest none -o a-nd.zn "$name"
t "znippy create --digest-min-size 0" "$z" create -q -T2 --digest-min-size 0 -o a-d0.zn "$name"
t "tar | zstd -3" sh -c "tar -cf - '$name' | zstd -3 -q -f -o a.tzst"
t "znippy list" sh -c "'$z' list a.zn > /dev/null"
t "znippy verify" "$z" verify -q a.zn
mid=$(printf '%s/d%04d/f%04d.jar.sha1' "$name" $((n / 2000)) $((n / 2 % 1000)))
t "znippy cat (one file)" sh -c "'$z' cat a.zn '$mid' > /dev/null"
ix=$("$z" info a.zn | awk '/^index bytes/ {print $3}')
for f in a.zn a-d0.zn a-nd.zn a.tzst; do
	printf '%-9s %12d bytes  %.3fx tar | zstd -3\n' "$f" "$(stat -c %s "$f")" \
		"$(echo "$(stat -c %s "$f") / $(stat -c %s a.tzst)" | bc -l)"
done
echo "index of a.zn: $ix bytes ($((ix / n)) per file)"
python3 "$here/index_columns.py" a.zn
# Every file's SHA-256 in list --json, as sha256sum has it.
"$z" list --json a.zn | python3 -c '
import hashlib, json, sys
bad = n = 0
for l in sys.stdin:
    r = json.loads(l)
    if r["type"] == "file":
        n += 1
        bad += r.get("sha256") != hashlib.sha256(open(r["path"], "rb").read()).hexdigest()
print("list --json: %d files, %d digests wrong or missing" % (n, bad))
sys.exit(bad != 0)'
record() { python3 "$here/history.py" record tiny_files --command "bench/tiny_files.sh $n" --corpus "tiny $n $kind" "$@"; }
record --op create --peer "tar|zstd" --runs "$(cat "$dir/znippy_create.s")" \
	--peer-runs "$(cat "$dir/tar_|_zstd_-3.s")"
record --op size --peer "tar|zstd" --unit bytes --runs "$(stat -c %s a.zn)" --peer-runs "$(stat -c %s a.tzst)"
rm -f "$dir"/*.s "$dir/time.out"
rm -f a.zn a-d0.zn a-nd.zn a.tzst
