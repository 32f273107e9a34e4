#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_checksum_doc.sh - run bench_checksum and write the "Checksums" section of
# docs/BENCHMARKS.md (replacing the section if it exists, keeping everything else), and append the
# results to bench/history/bench_checksum.jsonl (bench/history.py).
# Usage: scripts/bench_checksum_doc.sh [BUILD_DIR] [bench_checksum options...]   (about 30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/doc_section.sh
b=${1:-build}
shift || true
doc=docs/BENCHMARKS.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$b/bench_checksum" "$@" -j "$tmp/checksum.json" >"$tmp/table.md"
{
	echo "## Checksums"
	echo
	echo "CRC-32 and Adler-32 throughput (MB/s = 10^6 bytes per second of the thread's CPU time,"
	echo "best of N) of znippy's dispatched functions and of every kernel this CPU runs, against"
	echo "zlib $(pkg_version zlib1g),"
	echo "libdeflate $(pkg_version libdeflate0) and"
	echo "ISA-L $(pkg_version libisal2), on random bytes:"
	echo "1 MiB (in cache) and 64 MiB (memory-bound, so sensitive to other jobs on the machine)."
	echo
	echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores (shared with other jobs),"
	echo "$(uname -sr), $(gcc --version | head -1), Release build."
	echo "Date: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)."
	echo "Command: \`scripts/bench_checksum_doc.sh\` (which runs \`$b/bench_checksum $*\`)."
	echo
	cat "$tmp/table.md"
} >"$tmp/section.md"
python3 bench/history.py checksum "$tmp/checksum.json" --command "scripts/bench_checksum_doc.sh $b $*"
replace_doc_section "$doc" "Checksums" "$tmp/section.md"
