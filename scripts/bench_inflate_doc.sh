#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_inflate_doc.sh - run the DEFLATE decoding benchmarks and write the "DEFLATE decoding"
# section of docs/BENCHMARKS.md (replacing the section if it exists, keeping everything else),
# and append the results to bench/history/bench_inflate.jsonl (bench/history.py).
# Usage: scripts/bench_inflate_doc.sh [BUILD_DIR] [bench_inflate options...]
#   default options: -m 16 -r 7 (about 3 minutes on 2 shared cores)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/doc_section.sh
b=${1:-build}
shift || true
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(-m 16 -r 7)
doc=docs/BENCHMARKS.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$b/bench_inflate" "${opts[@]}" -j "$tmp/inflate.json" >"$tmp/table.md"

# Process level: a 100 MB+ gzip file (tar of /usr/include, gzip -6), decoded to /dev/null.
big=$tmp/usr-include.tar.gz
tar -cf - /usr/include 2>/dev/null | gzip -6 >"$big"
raw=$(gzip -l "$big" | awk 'NR==2{print $2}')
# Every command once per round, 7 rounds (alternated, so slow spells hit all alike); the best
# wall and CPU (user+sys, from wait4, microsecond resolution) of each.
python3 - "$big" "$raw" "$b/znippy gunzip -c" "igzip -dc" "libdeflate-gunzip -c" "pigz -dc" \
	"gzip -dc" >"$tmp/proc.md" <<'PY'
import os, subprocess, sys, time
big, raw, cmds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
best = {c: [1e9, 1e9] for c in cmds}
for _ in range(7):
    for c in cmds:
        with open(os.devnull, "wb") as null:
            t0 = time.perf_counter()
            p = subprocess.Popen(c.split() + [big], stdout=null)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
        if status:
            sys.exit(f"{c} failed")
        best[c][0] = min(best[c][0], wall)
        best[c][1] = min(best[c][1], ru.ru_utime + ru.ru_stime)
print("| command | wall s (best of 7) | CPU s (best of 7) | MB/s of output per CPU second |")
print("|---|---|---|---|")
for c in cmds:
    w, cpu = best[c]
    name = os.path.basename(c)  # "build/znippy gunzip -c" -> "znippy gunzip -c"
    print(f"| `{name}` | {w:.3f} | {cpu:.3f} | {raw / 1e6 / cpu:.0f} |")
PY

{
	echo "## DEFLATE decoding"
	echo
	echo "znippy's DEFLATE decoder (\`zn_inflate\`, gzip format, CRC-32 and ISIZE checked) against"
	echo "libdeflate $(pkg_version libdeflate0),"
	echo "ISA-L $(pkg_version libisal2) and"
	echo "zlib $(pkg_version zlib1g): whole buffer in memory, one"
	echo "core, every decoder in the same run, timed round-robin, best of N by the thread's CPU time"
	echo "(the machine is shared). Corpora (\`bench/bench_inflate.c\`): a tar of /usr/include, English"
	echo "text (vim's documentation), x86-64 shared objects from /usr/lib, random base64, FASTQ reads"
	echo "from a random genome with 1% errors, an int64 column of repeated values (runs of 1-400) and an"
	echo "int64 column of small increasing deltas; each capped at 16 MB and compressed by zlib's"
	echo "deflateInit2 (gzip wrapper) at levels 1, 6 and 9. The peers are Debian 12's packages;"
	echo "newer releases of libdeflate and ISA-L exist and were not measured."
	echo
	echo "Issue 3's targets are on the geometric mean over all seven corpora. Four of them are"
	echo "generated, and znippy's lead is largest on the run-heavy int64 column, so the two rows after"
	echo "the mean give it without that corpus and over the three real files only. The mean moves by"
	echo "about 2% between runs on this machine (bench/history/bench_inflate.jsonl holds the earlier runs)."
	echo
	echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores (shared with other jobs),"
	echo "$(uname -sr), $(gcc --version | head -1), Release build. Decoder kernel: $(grep -o '"kernel": "[a-z0-9]*"' "$tmp/inflate.json" | cut -d'"' -f4)."
	echo "Date: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)."
	echo
	echo "Command: \`scripts/bench_inflate_doc.sh $b ${opts[*]}\` (which runs \`$b/bench_inflate ${opts[*]}\`)."
	echo
	sed -n '/^| corpus/,$p' "$tmp/table.md"
	echo
	echo "Process level: \`$(basename "$big")\` ($((raw / 1000000)) MB of output, gzip -6), decoded to"
	echo "/dev/null:"
	echo
	cat "$tmp/proc.md"
	echo
	echo "Instruction counts for A/B comparisons of hot-path changes, free of timing noise:"
	echo "\`scripts/callgrind_inflate.sh $b 6 \"znippy libdeflate isa-l\"\` (instructions per output"
	echo "byte of a whole-buffer gzip decode including the CRC, 4 MB corpora at level 6; valgrind runs"
	echo "the AVX2 kernel, as it does not emulate AVX-512):"
	echo
	if command -v valgrind >/dev/null; then
		echo "| corpus | znippy | libdeflate | isa-l |"
		echo "|---|---|---|---|"
		scripts/callgrind_inflate.sh "$b" 6 "znippy libdeflate isa-l" |
			awk '{sub(":", "", $1); printf "| %s | %.2f | %.2f | %.2f |\n", $1, $3, $5, $7}'
	else
		echo "(valgrind is not installed: no counts this run)"
	fi
	echo
	echo "The timing noise on this shared machine is about +-5% per cell between runs; ratios measured"
	echo "in the same run (round-robin) are steadier than the absolute MB/s."
} >"$tmp/section.md"

python3 bench/history.py inflate "$tmp/inflate.json" --command "scripts/bench_inflate_doc.sh $b ${opts[*]}"
replace_doc_section "$doc" "DEFLATE decoding" "$tmp/section.md"
