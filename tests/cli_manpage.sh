#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_manpage.sh - docs/znippy.1 is true to the command: each command's section has an entry
# (.TP) for every option its --help names and for no other, the general options are the top
# level's, every command has a section, and groff reads the page without a warning.
. "$(dirname "$0")/clitest_lib.sh"
PAGE=$(realpath "$(dirname "$0")/../docs/znippy.1")

# The options of the entries (.TP and its tag line) of section SECTION of the page, one a line.
man_options() {
	awk -v s="$1" '/^\.SH / { sub(/^\.SH +/, ""); gsub(/"/, ""); in_s = ($0 == s) }
		in_s && tag { print; tag = 0 } in_s && /^\.TP/ { tag = 1 }' "$PAGE" |
		grep -oE '(\\-){1,2}[A-Za-z][A-Za-z0-9]*(\\-[A-Za-z0-9]+)*' | sed 's/\\-/-/g' | sort -u
}
same_options() { # description, section, command (empty: the top level)
	check "$1: every option of its --help has an entry" \
		test -z "$(comm -23 <(help_options $3) <(man_options "$2"))"
	check "$1: every entry is an option of its --help" \
		test -z "$(comm -13 <(help_options $3) <(man_options "$2"))"
}
same_options "the general options" "GENERAL OPTIONS" ""
for c in $(commands); do
	case $c in
	gunzip | zcat) section="GUNZIP, ZCAT" ;;
	unzstd | zstdcat) section="UNZSTD, ZSTDCAT" ;;
	bunzip2 | bzcat) section="BUNZIP2, BZCAT" ;;
	*) section=$(echo "$c" | tr a-z A-Z) ;;
	esac
	check "$c has a section" grep -q "^\.SH \"*$section\"*\$" "$PAGE"
	same_options "$c" "$section" "$c"
done
# and the other way: each command's section is one of the commands
for s in $(sed -n 's/^\.SH "*\([A-Z0-9]*\)[",]*.*/\1/p' "$PAGE"); do
	case $s in NAME | SYNOPSIS | DESCRIPTION | GENERAL | PATTERNS | STANDARD | EXIT | ENVIRONMENT | FILES | EXAMPLES | SEE) continue ;; esac
	check "section $s is a command" sh -c 'commands() { "$1" --help | sed -n "s/^  \([a-z][a-z0-9]*\)  .*/\1/p"; }
		commands "$1" | grep -qx "$2"' - "$Z" "$(echo "$s" | tr A-Z a-z)"
done
if command -v groff >/dev/null; then
	check "groff reads it without a warning" test -z "$(groff -man -Tutf8 -ww -z "$PAGE" 2>&1)"
fi

finish
