# SPDX-License-Identifier: MIT
# doc_section.sh - sourced by the bench_*_doc.sh scripts.
# replace_doc_section DOC TITLE FILE: put FILE (which starts with the "## TITLE" line) in place of
# the "## TITLE" section of DOC (up to the next "## " heading), or append it when DOC has none.
replace_doc_section() {
	local doc=$1 title=$2 sec=$3 out
	mkdir -p "$(dirname "$doc")"
	[ -f "$doc" ] || printf '# Benchmarks\n\n' >"$doc"
	if grep -qxF "## $title" "$doc"; then
		out=$(mktemp)
		awk -v sec="$sec" -v head="## $title" '
			$0 == head { while ((getline l < sec) > 0) print l; skip = 1; next }
			/^## / && skip { skip = 0; print "" }
			!skip { print }' "$doc" >"$out"
		cp "$out" "$doc"
		rm -f "$out"
	else
		{ echo; cat "$sec"; } >>"$doc"
	fi
	echo "wrote the $title section of $doc"
}

# pkg_version PKG: the installed version of PKG for this machine's architecture (with the arm64
# packages of the aarch64 test stage installed too, a bare query prints both, run together).
pkg_version() {
	dpkg-query -W -f='${Version}' "$1:$(dpkg --print-architecture)" 2>/dev/null ||
		dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo '?'
}
