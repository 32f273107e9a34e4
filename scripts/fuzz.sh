#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh - build the libFuzzer targets with clang and run each for a while.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s, every target)
# New crashers are left in build-fuzz/crash-*; add a minimised copy to fuzz/<target>/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZN_FUZZ=ON -DZN_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(ls fuzz | grep -v replay.c))
for t in "${targets[@]}"; do
	echo "== fuzzing $t for ${secs}s"
	mkdir -p "build-fuzz/corpus-$t"
	(cd build-fuzz && "./fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 "corpus-$t" "../fuzz/$t/corpus" 2>&1 | tail -n 12)
done
