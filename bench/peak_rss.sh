#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# peak_rss.sh - peak RSS of znippy create/extract on the large + random + mixed corpora (~1.8 GB at scale 1),
# with tar|zstd beside it for reference; exits 1 if znippy goes over the limit (default 512 MiB).
# Usage: bench/peak_rss.sh [--scale S] [--corpora DIR] [--rss-limit-mib N] [--znippy PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/archive_bench.py" --peak-rss "$@"
