#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_archive_bench.sh - the archive benchmark: znippy against tar|zstd, squashfs, 7z and zip.
#
# Usage: bench/run_archive_bench.sh [--corpora DIR] [--scale S] [--only src,small,large,random,mixed]
#            [--peers znippy,tarzst,squashfs,7z,zip] [--out bench/out] [--reps N] [--threads N]
#            [--znippy build/znippy] [--no-znippy] [--no-disk] [--no-floor] [--no-cat]
#            [--tmpfs /dev/shm] [--disk /tmp] [--peak-rss [--rss-limit-mib 512]]
# Missing corpora are generated first (bench/make_corpora.sh; the full set takes a few minutes and
# ~3.5 GB). Quick run: bench/run_archive_bench.sh --scale 0.05
# Writes markdown to stdout and OUT/archive_bench.md, JSON lines to OUT/archive_bench.json.
# The method is described at the top of bench/archive_bench.py and in docs/BENCHMARKS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/archive_bench.py" "$@"
