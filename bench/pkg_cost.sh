#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pkg_cost.sh - what package detection costs create (issue 35: within 5%): `znippy create` of a
# tree with detection (the default) against --no-packages, runs alternated (bench/create_ab.sh,
# which appends them to bench/history/create_ab.jsonl as "packages" against "no-packages").
#
# Usage: bench/pkg_cost.sh [RUNS] [DIR NAME] [ZNIPPY]
#   RUNS      runs of each (default 9)
#   DIR NAME  the tree, create -C DIR NAME (default the mixed corpus, a Maven-like artifact tree:
#             /work/corpora mixed; bench/make_mixed.py makes it)
#   ZNIPPY    the command (default build/znippy)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-9}
dir=${2:-/work/corpora}
name=${3:-mixed}
z=$(realpath "${4:-build/znippy}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Two commands for create_ab.sh: the same binary, without and with detection.
printf '#!/bin/sh\nexec "%s" "$@" --no-packages\n' "$z" >"$tmp/no-packages"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$z" >"$tmp/packages"
chmod +x "$tmp/no-packages" "$tmp/packages"
"$here/create_ab.sh" "$tmp/no-packages" "$tmp/packages" "$runs" "$dir" "$name" -T2 |
	sed 's/archives: DIFFER/archives: differ (the package columns), as they should/'
