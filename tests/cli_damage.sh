#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_damage.sh - damaged archives end to end: verify, extract and cat name the damage,
# keep what is intact, and truncated or foreign files are refused.
. "$(dirname "$0")/clitest_lib.sh"
make_tree

# ---- damaged archives ----------------------------------------------------------------------------------
cp "$A" "$T/bad.zn"
printf '\x55' | dd of="$T/bad.zn" bs=1 seek=100 conv=notrunc 2>/dev/null
code 1 "verify names damage" "$Z" verify "$T/bad.zn"
check "verify message names a file" grep -q 'damaged' "$T/stderr"
code 1 "extract of a damaged archive" "$Z" extract -q "$T/bad.zn" -C "$T/bad-out"
good=0 badfiles=0
while IFS= read -r -d '' f; do
	if cmp -s "$f" "$S/${f#"$T/bad-out/"}"; then good=$((good + 1)); else badfiles=$((badfiles + 1)); fi
done < <(find "$T/bad-out" -type f -print0)
check "undamaged files still extracted ($good), no damaged file left ($badfiles)" test "$good" -gt 40 -a "$badfiles" -eq 0
# Below a symlink already in the destination nothing is created, and every kind of entry says why.
mkdir -p "$T/sl/src/d/sub" "$T/sl/dst" "$T/sl/elsewhere" && echo 1 >"$T/sl/src/d/f1" && ln -s f1 "$T/sl/src/d/link"
"$Z" create -q -o "$T/sl/a.zn" -C "$T/sl/src" . && ln -s ../elsewhere "$T/sl/dst/d"
code 3 "extract of a directory, a file and a symlink below a symlink in the destination" \
	"$Z" extract "$T/sl/a.zn" -C "$T/sl/dst" d/sub d/f1 d/link
check "...names each as not followed, and writes nothing through it" sh -c 'test "$(grep -c \
	"not created: a symlink on its path is not followed" "$1")" = 3 && test -z "$(ls "$2")"' - "$T/stderr" "$T/sl/elsewhere"
# One flipped byte in a block of packed small files costs the file it is in: the others are
# judged by their own SHA-256 and kept; the block is named once. Without digests, the block.
mkdir -p "$T/sv/in" && for i in 01 02 03 04 05 06 07 08 09 10 11 12 13; do
	head -c 3000 /dev/urandom >"$T/sv/in/r$i"; done
"$Z" create -q -o "$T/sv/a.zn" -C "$T/sv/in" . && "$Z" create -q --digest none -o "$T/sv/n.zn" -C "$T/sv/in" .
printf 'X' | dd of="$T/sv/a.zn" bs=1 seek=20000 conv=notrunc status=none
printf 'X' | dd of="$T/sv/n.zn" bs=1 seek=20000 conv=notrunc status=none
code 1 "verify of a damaged block of small files" "$Z" verify "$T/sv/a.zn"
check "...names the one file and the block" sh -c 'test "$(grep -c "damaged: content does not match" "$1")" = 1 &&
	grep -q "1 data block does not match its checksum; the files held whole in it whose SHA-256 matches are intact" "$1"' \
	- "$T/stderr"
code 1 "extract of it" "$Z" extract "$T/sv/a.zn" -C "$T/sv/x"
check "...extracts the other 12, intact" sh -c 'test "$(ls "$1" | wc -l)" = 12 && for f in "$1"/*; do
	cmp -s "$f" "$2/${f##*/}" || exit 1; done' - "$T/sv/x" "$T/sv/in"
check "...cat gives those 12 too, each whole, and refuses the damaged one" sh -c 'bad=0; for f in "$2"/*; do
	"$1" cat "$3" "${f##*/}" >"$4" 2>/dev/null; case $?-$(cmp -s "$f" "$4"; echo $?) in
	0-0) ;; 1-*) bad=$((bad + 1)) ;; *) exit 1 ;; esac; done; test $bad = 1' - "$Z" "$T/sv/in" "$T/sv/a.zn" "$T/sv/o"
code 1 "cat of the damaged file, then of a good one into a full output: damage outranks the write error" \
	sh -c 'for f in $(ls "$2"); do "$1" cat "$3" "$f" >/dev/null 2>&1 || bad=$f; done; good=r01
	test "$bad" = r01 && good=r02; exec "$1" cat "$3" "$bad" "$good" >/dev/full' - "$Z" "$T/sv/in" "$T/sv/a.zn"
check "...and names both" sh -c 'grep -q "r[01][0-9]: checksum mismatch" "$1" && grep -q "write error on standard output" "$1"' \
	- "$T/stderr"
code 1 "extract of it without digests (--digest none)" "$Z" extract "$T/sv/n.zn" -C "$T/sv/y"
check "...extracts nothing of the block" test -z "$(ls "$T/sv/y" 2>/dev/null)"
head -c 1000 "$A" >"$T/trunc.zn"
code 1 "truncated archive" "$Z" list "$T/trunc.zn"
check "message says truncated" grep -q 'truncated' "$T/stderr"
printf 'not an archive at all, just text padding padding padding padding padding padding\n' >"$T/text.zn"
code 1 "not an archive" "$Z" info "$T/text.zn"

finish
