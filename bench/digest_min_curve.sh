#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# digest_min_curve.sh - archive size against create --digest-min-size: for each corpus, the
# archive at each threshold (0 stores every file's SHA-256, format version 1), its index, the
# files below the threshold, and tar | zstd -3 beside it for scale.
#
# Usage: bench/digest_min_curve.sh ZNIPPY CORPUS_DIR... (thresholds: $SIZES, default below)
# Output lines: corpus threshold archive_bytes index_bytes files_below ratio_to_tar_zstd
set -euo pipefail
z=$(realpath "$1")
shift
sizes=${SIZES:-"0 64 256 1K 4K 16K 64K"}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zn-dmc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bytes() { # 1K -> 1024
	numfmt --from=iec "$1"
}
for c in "$@"; do
	c=$(realpath "$c")
	tz=$(tar -C "$(dirname "$c")" -cf - "$(basename "$c")" | zstd -3 -q -c | wc -c)
	echo "$(basename "$c") tar|zstd-3 $tz"
	for s in $sizes; do
		"$z" create -q -T2 --digest-min-size "$s" -o "$tmp/a.zn" -C "$(dirname "$c")" "$(basename "$c")"
		a=$(stat -c %s "$tmp/a.zn")
		ix=$("$z" info "$tmp/a.zn" | awk '/^index bytes/ {print $3}')
		below=$(find "$c" -type f -size -"$(bytes "$s")"c | wc -l)
		[ "$s" = 0 ] && below=0
		printf '%s %s %d %d %d %.3f\n' "$(basename "$c")" "$s" "$a" "$ix" "$below" \
			"$(echo "$a / $tz" | bc -l)"
	done
done
