#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_completion.sh - the bash completion script: contrib/znippy.bash is what `znippy
# --bash-completion` makes from the commands' option tables, it names every option each command's
# --help names and no other, and completing with it offers commands, options and their values.
. "$(dirname "$0")/clitest_lib.sh"
SCRIPT=$(realpath "$(dirname "$0")/../contrib/znippy.bash")

"$Z" --bash-completion >"$T/made.bash"
check "contrib/znippy.bash is what --bash-completion makes (regenerate it: znippy --bash-completion)" \
	cmp "$T/made.bash" "$SCRIPT"
check "...and bash reads it" bash -n "$SCRIPT"

# The options the script offers after COMMAND, one a line.
offered() { awk -v c="$1" '$1 ~ ("^" c "[|)]") { getline; sub(/^[ \t]*opts=./, ""); sub(/.$/, ""); print }' \
	"$SCRIPT" | tr ' ' '\n' | sort -u; }
for c in $(commands); do
	check "$c: every option its --help names is offered" \
		test -z "$(comm -23 <(help_options "$c") <(offered "$c"))"
	check "$c: every option offered is in its --help" \
		test -z "$(comm -13 <(help_options "$c") <(offered "$c"))"
done
check "the top level: every option its --help names is offered" test -z "$(comm -23 <(help_options) \
	<(sed -n "s/.*compgen -W '\([^']*\)'.*/\1/p" "$SCRIPT" | head -1 | tr ' ' '\n' | grep '^-' | sort -u))"

# complete WORD...: what the script offers for the last WORD of "znippy WORD...", one a line.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=(znippy "$@"); COMP_CWORD=$#; _znippy; printf "%s\n" "${COMPREPLY[@]}"' \
		- "$SCRIPT" "$@" | sort
}
mkdir -p "$T/cd/subdir" && : >"$T/cd/file"
cd "$T/cd" || exit 1
check "znippy cr<TAB>: create" test "$(complete_words cr)" = create
check "znippy ex<TAB>: extract" test "$(complete_words ex)" = extract
check "znippy create --le<TAB>: --level" test "$(complete_words create --le)" = --level
check "znippy c --digest <TAB>: its kinds" test "$(complete_words c --digest '' | tr '\n' ' ')" = "none sha256 "
check "znippy list --json=<TAB>: its formats" test "$(complete_words list --json = '' | tr '\n' ' ')" = "array lines "
check "znippy extract a.zn -C <TAB>: directories only" test "$(complete_words extract a.zn -C '')" = subdir
check "znippy create -l <TAB>: nothing (a number)" test -z "$(complete_words create -l '')"
check "znippy list <TAB>: files" test "$(complete_words list '' | tr '\n' ' ')" = "file subdir "
check "znippy gunzip --su<TAB>: --suffix" test "$(complete_words gunzip --su)" = --suffix

finish
