#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_same_owner.sh - extract --same-owner as a user who may not give files away (uid 65534, run
# from root): each entry whose stored owner cannot be given is named, one line says how many,
# and the exit status is 3 (red-team finding 7 of issue 30: it was 0; tar exits with 2, its
# status for any failure). Skipped where the test cannot switch users.
. "$(dirname "$0")/clitest_lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "skip: needs root and setpriv to run extract as another user (uid $(id -u))"
	finish
	exit
fi
O=$T/own
mkdir -p "$O/in/sub"
printf 'a\n' >"$O/in/a" && printf 'b\n' >"$O/in/sub/b" && ln -s a "$O/in/link"
chown -h 12345:12345 "$O/in/a" "$O/in/sub/b" "$O/in/link" "$O/in/sub"
code 0 "create (owners 12345 and root)" "$Z" create -q -o "$O/own.zn" -C "$O" in
unpriv_setup
chmod 755 "$O" && chmod 644 "$O/own.zn"
mkdir "$O/x" && chown 65534:65534 "$O/x"
run_unpriv "$T/znippy-unpriv" extract --same-owner -C "$O/x" "$O/own.zn" >/dev/null 2>"$T/stderr"
check "--same-owner as uid 65534: exit 3" test $? -eq 3
check "...each entry named (the file, the directory, the symlink, the one below)" \
	test "$(grep -c "cannot give it its stored owner 12345:12345: Operation not permitted" "$T/stderr")" = 4
check "...and the root-owned directory too" \
	grep -q "in: cannot give it its stored owner 0:0: Operation not permitted" "$T/stderr"
check "...one line says how many and why" grep -qF \
	"$O/x: 5 entries kept the extracting user as owner: the stored owners could not be given (that takes root, or CAP_CHOWN)" \
	"$T/stderr"
check "...the files are there, the user's" test "$(stat -c %u "$O/x/in/sub/b")" = 65534 -a "$(cat "$O/x/in/sub/b")" = b
check "...no summary beyond it" test "$(grep -c 'not everything' "$T/stderr")" = 0
mkdir "$O/q" && chown 65534:65534 "$O/q"
run_unpriv "$T/znippy-unpriv" extract -q --same-owner -C "$O/q" "$O/own.zn" >/dev/null 2>"$T/stderr"
check "-q: still exit 3" test $? -eq 3
check "...and still said" grep -q "kept the extracting user as owner" "$T/stderr"
mkdir "$O/n" && chown 65534:65534 "$O/n"
run_unpriv "$T/znippy-unpriv" extract -C "$O/n" "$O/own.zn" >/dev/null 2>"$T/stderr"
check "without --same-owner: exit 0, nothing said" test $? -eq 0 -a ! -s "$T/stderr"
code 0 "as root, --same-owner gives them" "$Z" extract --same-owner -C "$O/r" "$O/own.zn"
check "...the stored owners" test "$(stat -c %u:%g "$O/r/in/sub/b")" = 12345:12345 -a \
	"$(stat -c %u "$O/r/in/link")" = 12345
finish
