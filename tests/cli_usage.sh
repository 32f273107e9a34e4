#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_usage.sh - the command's usage errors, exit codes, --help and --version, and
# messages for closed and full outputs.
. "$(dirname "$0")/clitest_lib.sh"
make_tree

# ---- usage errors ------------------------------------------------------------------------------------
code 2 "no command" "$Z"
code 2 "unknown command" "$Z" frobnicate
check "...named, with no command near it to suggest" test "$(cat "$T/stderr")" = "znippy: unknown command 'frobnicate'
Try 'znippy --help'."
for typo in craete:create extarct:extract lsit:list vrify:verify zact:zcat gunzp:gunzip unzpi:unzip compar:diff; do
	code 2 "a mistyped command: ${typo%:*}" "$Z" "${typo%:*}" "$A"
	check "...suggests ${typo#*:}" grep -qx "Did you mean '${typo#*:}'?" "$T/stderr"
done

# ---- tar's bundled letters: cf, xf, tf (with v; k, m, p, O for x) --------------------------------------
code 0 "cf OUT PATH" "$Z" cf "$T/b1.zn" -C "$S" .
"$Z" create -o "$T/b2.zn" -C "$S" .
check "...is create -o OUT PATH, byte for byte" cmp "$T/b1.zn" "$T/b2.zn"
check "tf ARCHIVE is list" cmp <("$Z" tf "$T/b1.zn") <("$Z" list "$T/b1.zn")
check "tvf ARCHIVE is list -v" cmp <("$Z" tvf "$T/b1.zn") <("$Z" list -v "$T/b1.zn")
code 0 "xf ARCHIVE -C DIR" "$Z" xf "$T/b1.zn" -C "$T/bx"
check "...extracts it" diff -r --no-dereference "$S" "$T/bx"
check "xvf names what it extracts, as extract -v" cmp <("$Z" xvf "$T/b1.zn" -C "$T/bxv") <("$Z" list "$T/b1.zn")
code 0 "xOf ARCHIVE PATH writes the file to standard output" "$Z" xOf "$T/b1.zn" hello.txt
check "...as extract -O" cmp <("$Z" xOf "$T/b1.zn" hello.txt) "$S/hello.txt"
check "-cvf (tar's dash) names what it stores" \
	test "$("$Z" -cvf "$T/b3.zn" -C "$S" hello.txt symlink | tr '\n' ' ')" = "hello.txt symlink "
code 2 "czf: tar's z is not taken" "$Z" czf "$T/b4.zn" "$S"
check "...said so" grep -q "^znippy: 'czf': tar's 'z' is not taken: an archive is compressed by znippy itself" "$T/stderr"
code 2 "cf without the ARCHIVE" "$Z" cf
check "...said so" grep -q "^znippy: 'cf': f needs the ARCHIVE's name after it" "$T/stderr"
code 2 "ckf: k is extract's" "$Z" ckf "$T/b5.zn" "$S"
code 2 "create without -o" "$Z" create "$S"
code 2 "bad level" "$Z" create -o "$T/x.zn" -l 99 "$S"
code 2 "bad chunk size" "$Z" create -o "$T/x.zn" --chunk-size 1K "$S"
code 0 "--help" "$Z" create --help
code 0 "--version" "$Z" --version
code 0 "--version after a command, as tar's" "$Z" info --version
check "...prints the version" test "$("$Z" info --version)" = "$("$Z" --version)"
for c in list create gunzip zcat; do
	check "-V and --version after '$c'" \
		test "$("$Z" $c -V)" = "$("$Z" --version)" -a "$("$Z" $c --version)" = "$("$Z" --version)"
done
code 2 "info: an unknown option" "$Z" info "$A" --frob
check "...named as one" grep -qx "znippy info: unrecognized or ambiguous option '--frob'" "$T/stderr"
code 2 "cat: an unknown option before ARCHIVE" "$Z" cat --frob "$A" x
code 1 "cat: after ARCHIVE, '-' starts a PATH" "$Z" cat "$A" --frob
code 3 "missing archive (an I/O error, as a missing input of create is)" "$Z" list "$T/none.zn"
code 2 "unknown option" "$Z" create -x -o "$T/x.zn" "$S"
check "...named once, by the command" test "$(cat "$T/stderr")" = "znippy create: invalid option -- 'x'
Try 'znippy create --help'."
code 2 "unknown long option" "$Z" list --frob "$A"
check "...named" grep -qx "znippy list: unrecognized or ambiguous option '--frob'" "$T/stderr"
code 2 "unknown option in a group after a long one" "$Z" list --json -xl "$A"
check "...names the letter, not the long option" grep -qx "znippy list: invalid option -- 'x'" "$T/stderr"
code 2 "a value for an option that takes none" "$Z" create -o "$T/x.zn" --quiet=3 "$S"
check "...named" grep -qx "znippy create: option '--quiet' takes no value" "$T/stderr"
code 2 "option without its value" "$Z" create "$S" -o
check "...named" grep -qx "znippy create: option '-o' requires an argument" "$T/stderr"
code 2 "empty OUT" "$Z" create -o '' "$S"
code 2 "empty -C DIR" "$Z" extract "$A" -C ''
code 2 "empty -C DIR, create" "$Z" create -o "$T/x.zn" -C '' "$S"
code 2 "empty -C DIR, diff" "$Z" diff "$A" -C ''
# A file that ends before the size the walk saw is stored as read, with exit status 1, as tar's:
# a sysfs file says 4096 bytes and holds a line.
SYSF=/sys/kernel/mm/transparent_hugepage/enabled
if [ -r "$SYSF" ] && [ "$(stat -c %s "$SYSF")" -gt "$(wc -c <"$SYSF")" ]; then
	code 1 "a file that changed while read" "$Z" create -o "$T/sys.zn" "$SYSF"
	check "...named, and the status said" grep -q "changed or removed while read" "$T/stderr"
	check "...stored as read" sh -c '[ "$("$1" cat "$2" "${3#/}")" = "$(cat "$3")" ]' - "$Z" "$T/sys.zn" "$SYSF"
fi
if [ -w /dev/full ]; then
	code 3 "list to a full device" sh -c '"$1" list "$2" >/dev/full' - "$Z" "$A"
	check "...names the reason" grep -q 'write error on standard output: No space left' "$T/stderr"
fi
mkdir -p "$T/slsrc/t/a" "$T/slout/t" "$T/sltarget" && echo 1 >"$T/slsrc/t/a/f"
ln -s "$T/sltarget" "$T/slout/t/a"
"$Z" create -q -o "$T/sl.zn" -C "$T/slsrc" t
code 3 "a symlink in the destination where a directory goes" "$Z" extract "$T/sl.zn" -C "$T/slout"
check "...is named as such, with the file below it" grep -q \
	"t/a: not overwritten: something that is not a directory stands where .*; the entry below it is not extracted" \
	"$T/stderr"
check "...and nothing was written through it" test -z "$(ls "$T/sltarget")"
code 0 "cat takes -- before the PATHs" "$Z" cat "$A" -- hello.txt
code 0 "info takes -- before ARCHIVE" "$Z" info -- "$A"
"$Z" create -o "$T/closed.zn" "$S" "$T/none" 2>&-
check "create with standard error closed: exit 3 for the missing input" test $? -eq 3
code 0 "...and its messages did not go into the archive" "$Z" verify "$T/closed.zn"

finish
