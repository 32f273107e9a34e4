#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# callgrind_inflate.sh - repeatable A/B counts: instructions per output byte of each decoder's
# whole-buffer gzip decode, under callgrind (no timing noise). Usage:
#   scripts/callgrind_inflate.sh BUILD_DIR [LEVEL] [DECODERS] [CORPORA]
set -euo pipefail
b=${1:-build}
level=${2:-6}
decoders=${3:-znippy}
corpora=${4:-tar-usr-include english-text x86-64-so base64 fastq int64-runs int64-deltas}
declare -A fn=([znippy]=zn_inflate [libdeflate]=libdeflate_gzip_decompress
	[isa-l]=isal_inflate_stateless [zlib]=inflate)
for c in $corpora; do
	line="$c:"
	for d in $decoders; do
		out=$(valgrind --tool=callgrind --collect-atstart=no --toggle-collect="${fn[$d]}" \
			--callgrind-out-file=/dev/null "$b/bench_inflate" -m 4 -r 1 -l "$level" -c "$c" \
			-d "$d" 2>&1)
		ir=$(grep -o 'Collected : [0-9]*' <<<"$out" | grep -o '[0-9]*$')
		mb=$(grep -o "^| $c | $level | [0-9.]*" <<<"$out" | awk '{print $6}')
		# two decodes ran (the check and one timed run)
		line+=$(awk -v ir="$ir" -v mb="$mb" -v d="$d" 'BEGIN{printf " %s %.3f", d, ir/2/(mb*1e6)}')
	done
	echo "$line"
done
