#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scaling.sh - create and extract against the thread count, znippy beside tar | zstd -T, on trees
# generated from seeds: the small corpus (100,000 text files of 5-15 KiB), a Maven repository's
# leaves (120,000 files in 20,000 directories) and 200,000 files of 40 bytes.
#
# Usage: bench/scaling.sh [options] WORK OUT
#   WORK   scratch directory for the trees, archives and extractions (tmpfs, such as /dev/shm)
#   OUT    directory for the results: scaling.md (tables) and scaling.tsv (every run)
# Options:
#   -t LIST      thread counts (default "1 2 4 8 16"; those above nproc are left out)
#   -r N         runs of each command; the median is reported (default 3)
#   -s SCALE     the trees' file counts, scaled (default 1; 0.1 for a quick look)
#   -b NAME=CMD  a znippy to measure (repeatable; default znippy=build/znippy). Several are run
#                alternated, and each one's archives compared across thread counts.
#   -p           no peer (tar | zstd)
# Made to be run once on a many-core machine lent for minutes (a 2-core machine cannot show
# scaling): it needs bash, python3, tar and coreutils, a C compiler for the small corpus's
# generator unless GEN_CORPUS names one built elsewhere, and zstd for the peer (for a machine
# without them: bench/device_pack.sh). Times are wall seconds of one command each, the trees in
# the page cache. Every run is appended to bench/history/scaling.jsonl (bench/history.py): each
# znippy against tar | zstd at the same thread count (not gated when several builds are compared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
threads="1 2 4 8 16" runs=3 scale=1 peer=1
bins=()
cmdline="bench/scaling.sh $*" # for the history
while getopts "t:r:s:b:ph" o; do
	case $o in
	t) threads=$OPTARG ;;
	r) runs=$OPTARG ;;
	s) scale=$OPTARG ;;
	b) bins+=("$OPTARG") ;;
	p) peer=0 ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,20p' "$0"; exit 2; }
work=$1 out=$2
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd) out=$(cd "$out" && pwd)
[ ${#bins[@]} -gt 0 ] || bins=("znippy=$here/../build/znippy")
ncpu=$(nproc)
ts=()
for t in $threads; do [ "$t" -le "$ncpu" ] && ts+=("$t"); done
command -v zstd >/dev/null || peer=0
log() { echo "[$(date +%T)] $*" >&2; }

# ---- the trees, made once (a marker records the scale) -----------------------------------------
scaled() { awk -v n="$1" -v s="$scale" 'BEGIN { v = int(n * s + 0.5); print (v < 1 ? 1 : v) }'; }
if [ "$(cat "$work/.trees" 2>/dev/null)" != "$scale" ]; then
	rm -rf "$work/trees" && mkdir -p "$work/trees"
	log "making the trees (scale $scale)"
	if [ -n "${GEN_CORPUS:-}" ]; then # a generator built elsewhere (bench/device_pack.sh)
		cp "$GEN_CORPUS" "$work/trees/.gen_corpus" && touch "$work/trees/.gen_corpus"
	fi
	"$here/make_corpora.sh" --scale "$scale" --only small "$work/trees" >&2
	python3 "$here/make_small_dirs.py" "$work/trees/maven" --groups "$(scaled 200)"
	python3 "$here/make_tiny_files.py" "$work/trees/tiny" "$(scaled 200000)"
	echo "$scale" >"$work/.trees"
fi
trees="small maven tiny"

# ---- the runs ------------------------------------------------------------------------------------
tsv=$out/scaling.tsv
printf 'tree\top\ttool\tthreads\trun\tseconds\n' >"$tsv"
timed() { # tree op tool threads run command...
	local a=("${@:1:5}") s e
	shift 5
	s=$(date +%s%N)
	"$@" || { log "FAILED: $*"; return 1; }
	e=$(date +%s%N)
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${a[@]}" "$(awk -v d=$((e - s)) 'BEGIN { printf "%.4f", d / 1e9 }')" >>"$tsv"
}
x=$work/x
for tree in $trees; do
	log "$tree: reading it once (page cache)"
	tar -cf - -C "$work/trees" "$tree" >/dev/null
	for t in "${ts[@]}"; do
		log "$tree: $t threads"
		for r in $(seq "$runs"); do
			for b in "${bins[@]}"; do
				name=${b%%=*} cmd=${b#*=}
				a=$work/$name-$tree-$t.zn
				rm -f "$a"
				timed "$tree" create "$name" "$t" "$r" "$cmd" create -q -T "$t" -o "$a" -C "$work/trees" "$tree"
				rm -rf "$x" && mkdir -p "$x"
				timed "$tree" extract "$name" "$t" "$r" "$cmd" extract -q -T "$t" "$a" -C "$x"
			done
			if [ $peer = 1 ]; then
				rm -f "$work/p.tzst"
				timed "$tree" create tar-zstd "$t" "$r" sh -c \
					"tar -cf - -C '$work/trees' '$tree' | zstd -q -T$t -3 -o '$work/p.tzst'"
				rm -rf "$x" && mkdir -p "$x"
				timed "$tree" extract tar-zstd "$t" "$r" sh -c "zstd -dc '$work/p.tzst' | tar -xf - -C '$x'"
			fi
		done
	done
	rm -rf "$x"
	# Output never depends on the thread count.
	for b in "${bins[@]}"; do
		name=${b%%=*}
		for t in "${ts[@]}"; do
			cmp -s "$work/$name-$tree-${ts[0]}.zn" "$work/$name-$tree-$t.zn" ||
				log "$tree: $name's archive with $t threads differs from the one with ${ts[0]}"
		done
		rm -f "$work/$name-$tree-"*.zn
	done
done

# ---- the tables ------------------------------------------------------------------------------------
python3 - "$tsv" "$ncpu" >"$out/scaling.md" <<'EOF'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
t = collections.defaultdict(list)
for tree, op, tool, th, _, s in rows:
    t[(tree, op, tool, int(th))].append(float(s))
ths = sorted({k[3] for k in t})
print(f"Median wall seconds (speed-up against 1 thread), {sys.argv[2]} CPUs.\n")
for tree in dict.fromkeys(k[0] for k in t):
    for op in ("create", "extract"):
        tools = list(dict.fromkeys(k[2] for k in t if k[0] == tree and k[1] == op))
        print(f"{tree}, {op}:\n")
        print("| tool | " + " | ".join(f"-T{h}" for h in ths) + " |")
        print("|---|" + "---:|" * len(ths))
        for tool in tools:
            base = t.get((tree, op, tool, ths[0]))
            cells = []
            for h in ths:
                v = t.get((tree, op, tool, h))
                if not v:
                    cells.append("-")
                    continue
                m = statistics.median(v)
                cells.append(f"{m:.3f} ({statistics.median(base) / m:.2f}x)" if base else f"{m:.3f}")
            print(f"| {tool} | " + " | ".join(cells) + " |")
        print()
EOF
cat "$out/scaling.md"

# ---- the history ---------------------------------------------------------------------------------
python3 - "$here" "$tsv" "$cmdline" "$scale" <<'EOF'
import collections, sys
sys.path.insert(0, sys.argv[1])
import history
t = collections.defaultdict(list)
for tree, op, tool, th, _, s in [l.rstrip("\n").split("\t") for l in open(sys.argv[2])][1:]:
    t[(tree, op, tool, int(th))].append(float(s))
run = history.Run("scaling", sys.argv[3])
tools = sorted({k[2] for k in t if k[2] != "tar-zstd"})
for (tree, op, tool, th), runs in t.items():
    peer = t.get((tree, op, "tar-zstd", th))
    if tool != "tar-zstd":
        run.add(f"{tree} -T{th}", op, runs, peer, tool=tool, peer="tar|zstd" if peer else None,
                gate=len(tools) == 1, scale=float(sys.argv[4]))
run.write()
EOF
