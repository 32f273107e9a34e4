#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_symbols.sh - fail if the shared library exports any symbol without the zn_ prefix.
set -euo pipefail
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBRVW]/ {print $3}' | grep -v '^zn_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols without the zn_ prefix in $lib:"
	echo "$bad"
	exit 1
fi
echo "all exported symbols of $lib carry the zn_ prefix ($(nm -D --defined-only "$lib" | grep -c ' T zn_') functions)"
