#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_list.sh - the read side of the command end to end: list (names, -l, --json),
# cat, info and verify of a tree with every entry type and odd names, PATTERNs and paths as typed,
# archives on pipes, and messages that name the right thing.
. "$(dirname "$0")/clitest_lib.sh"
make_tree

# ---- list, info and verify of the tree -------------------------------------------------------------
code 0 "info" "$Z" info "$A"
code 0 "verify" "$Z" verify -q "$A"
"$Z" list "$A" >"$T/list.txt"
check "list shows the escaped newline name" grep -qF 'new\nline' "$T/list.txt"
check "list has every entry" test "$(wc -l <"$T/list.txt")" -eq "$(cd "$S" && find . -mindepth 1 -printf . | wc -c)"
"$Z" list -l "$A" >"$T/long.txt"
check "list -l shows symlink targets" grep -q 'symlink -> hello.txt' "$T/long.txt"
check "list -l shows setuid" grep -q -- '-rwsr-xr-x .* empty-file' "$T/long.txt"
check "list --json gives the mtime as a string too, to the nanosecond" \
	"$Z" list --json "$A" hello.txt | grep -q '"mtime":"2001-02-03T[0-9][0-9]:05:06.123456789Z"'
"$Z" list --json "$A" >"$T/list.json"
if command -v python3 >/dev/null; then
	check "list --json is valid JSON, one object per line" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
names = {r.get("path") for r in rows}
assert any("path_hex" in r for r in rows), "non-UTF-8 name has path_hex"
assert any(r["type"] == "hardlink" for r in rows)
assert all(len(r["sha256"]) == 64 for r in rows if r["type"] == "file")
' "$T/list.json"
fi
check "list --json=lines is --json" cmp "$T/list.json" <("$Z" list --json=lines "$A")
check "list --json=array: one JSON document, which python3 -m json.tool takes" \
	sh -c '"$1" list --json=array "$2" | python3 -m json.tool >/dev/null' - "$Z" "$A"
check "...whose elements are --json's lines" python3 -c '
import json, subprocess, sys
rows = json.loads(subprocess.run([sys.argv[1], "list", "--json=array", sys.argv[2]], capture_output=True).stdout)
assert rows == [json.loads(l) for l in open(sys.argv[3])], "array and lines differ"
' "$Z" "$A" "$T/list.json"
check "...while json.tool refuses JSON Lines of several rows (hence =array)" \
	sh -c '! python3 -m json.tool <"$1" >/dev/null 2>&1' - "$T/list.json"
check "list --json=array of nothing is []" test "$("$Z" list --json=array --exclude '*' "$A")" = "[]"
code 2 "list --json=yaml" "$Z" list --json=yaml "$A"
if command -v jq >/dev/null; then
	ex=$("$Z" list --help | grep -o "jq -r '[^']*'" | sed "s/^jq -r //; s/'//g")
	check "the jq example of list's help: the files over 1 MB" \
		test "$("$Z" list --json "$A" | jq -r "$ex" | sort | tr '\n' ' ')" = "hardlink-to-numbers "
fi


# ---- random access and patterns ---------------------------------------------------------------------
check "cat one file" cmp <("$Z" cat "$A" numbers.txt) "$S/numbers.txt"
check "cat two files" cmp <("$Z" cat "$A" hello.txt ./hello.txt) <(cat "$S/hello.txt" "$S/hello.txt")
check "cat through a hardlink" cmp <("$Z" cat "$A" hardlink-to-numbers) "$S/numbers.txt"
code 1 "cat of a missing path" "$Z" cat "$A" no/such/file
code 1 "cat of a directory" "$Z" cat "$A" empty-dir
P=$T/pat
code 0 "extract with a pattern" "$Z" extract -q "$A" -C "$P" 'dir with*'
check "pattern selected the directory's files" test -f "$P/dir with spaces/file name.txt"
check "pattern selected nothing else" test ! -e "$P/hello.txt"
code 1 "pattern matching nothing" "$Z" extract -q "$A" -C "$P" 'nothing-*'


# ---- the read side: patterns and paths as typed, messages that name the right thing -----------------------
R=$T/rd
mkdir -p "$R/dir" && printf 'a\n' >"$R/dir/a.txt"
printf 'x' >"$R/"$'\xe0\x80\x80-overlong' && printf 'x' >"$R/"$'\xed\xa0\x80-surrogate'
"$Z" create -q -o "$R.zn" -C "$R" .
check "a pattern with a trailing slash selects the directory" \
	test "$("$Z" list "$R.zn" dir/ | tr '\n' ' ')" = "dir dir/a.txt "
check "cat of 'dir//a.txt' finds dir/a.txt" test "$("$Z" cat "$R.zn" dir//a.txt)" = a
check "cat of 'dir/./a.txt' and '/./dir/a.txt' find dir/a.txt" \
	test "$("$Z" cat "$R.zn" dir/./a.txt /./dir/a.txt | tr -d "\n")" = aa
code 1 "a pattern with a trailing slash does not name a file" "$Z" list "$R.zn" dir/a.txt/
if command -v python3 >/dev/null; then
	check "list --json is strict UTF-8 (overlong forms and surrogates go to path_hex)" \
		python3 -c 'import sys, json
for l in open(sys.argv[1], "rb"): json.loads(l.decode("utf-8", "strict"))' <("$Z" list --json "$R.zn")
fi
printf 'not a dir\n' >"$R/afile"
code 3 "extract -C onto a file" "$Z" extract -q "$R.zn" -C "$R/afile"
check "...names the directory" grep -q "afile: cannot use as the target directory" "$T/stderr"
check "...in one line, with no summary after it" test "$(wc -l <"$T/stderr")" -eq 1
check "an archive on a pipe named by path" \
	test "$(cat "$R.zn" | "$Z" list /dev/stdin | wc -l)" = "$("$Z" list "$R.zn" | wc -l)"
mkfifo "$R.fifo"
(sleep 0.2; cat "$R.zn" >"$R.fifo") &
check "an archive through a FIFO" test "$("$Z" cat "$R.fifo" dir/a.txt)" = a
wait
(head -c 1000 /dev/zero; cat "$R.zn") >"$R.behind"
check "'-' on a file part-way through reads what follows (as tar does)" test "$(
	{ dd bs=1000 count=1 of=/dev/null 2>/dev/null; "$Z" cat - dir/a.txt; } <"$R.behind")" = a
code 1 "extract of patterns that match nothing" "$Z" extract -q "$R.zn" -C "$R/none-made" nothere
check "...does not make -C DIR" test ! -e "$R/none-made"
"$Z" create -q --digest none -o "$R.nd.zn" -C "$R" dir
"$Z" extract --check-digest "$R.nd.zn" -C "$R/nd" 2>"$T/stderr"
check "--check-digest on an archive without digests warns" grep -q "has no file digests" "$T/stderr"
code 3 "a directory as ARCHIVE" "$Z" list "$R"
check "...says why" grep -q "not a regular file, a pipe or standard input" "$T/stderr"
mkdir -p "$R/ix" && (cd "$R/ix" && for i in $(seq 1000 1999); do echo $i >f$i; done)
"$Z" create -q -o "$R.ix.zn" -C "$R/ix" . && cp "$R.ix.zn" "$R.ixd.zn"
# a byte of the block_offset column (17): the rows on that page cannot be placed, so not read
python3 - "$R.ixd.zn" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
ixoff, ixsize = struct.unpack_from("<QQ", b, len(b) - 64)
for c in range(struct.unpack_from("<I", b, ixoff + 4)[0]):
    cid, off = struct.unpack_from("<I4xQ", b, ixoff + 64 + 32 * c)
    if cid == 17:
        b[ixoff + off + 100] ^= 0x41
open(sys.argv[1], "wb").write(b)
PY
code 1 "list PATTERN over an index with a damaged page" "$Z" list "$R.ixd.zn" nothere
check "...says the pattern was not found among the readable entries, and names the damaged ones in one line" \
	sh -c 'grep -q "nothere: not found among the entries that can be read ([0-9]* of the index" "$1" &&
	grep -q "entries [0-9]*-[0-9]*: corrupt data" "$1" && test $(wc -l <"$1") = 2' - "$T/stderr"
cat "$R.zn" "$R.zn" >"$R.twice"
code 1 "two archives concatenated" "$Z" list "$R.twice"
check "...says so" grep -q "other data before it (archives concatenated?)" "$T/stderr"
{ cat "$R.zn"; head -c 10000 /dev/zero; } >"$R.padded"
code 0 "an archive padded with zero bytes (dd conv=sync) still reads" "$Z" verify -q "$R.padded"
{ cat "$R.zn"; printf 'x'; } >"$R.junk"
code 1 "...but not one with other bytes after it" "$Z" list "$R.junk"
check "...which are named as such, not as a truncation" grep -q "1 byte of other data after the archive's end" "$T/stderr"
if [ -w /dev/full ]; then
	"$Z" cat "$R.zn" dir/a.txt >/dev/full 2>"$T/stderr"
	check "cat to a full device: exit 3" test $? -eq 3
	check "...blames standard output" grep -q "write error on standard output" "$T/stderr"
	"$Z" info "$R.zn" >/dev/full 2>"$T/stderr"
	check "info to a full device: exit 3" test $? -eq 3
	"$Z" extract --help >/dev/full 2>"$T/stderr"
	check "--help to a full device: exit 3" test $? -eq 3
fi
if [ "$(id -u)" -eq 0 ] && ! getent group 54321 >/dev/null; then
	mkdir -p "$R/own" && printf 'o\n' >"$R/own/f" && chown nobody:54321 "$R/own/f"
	"$Z" create -q -o "$R/own.zn" -C "$R" own
	check "list -l: a user name with a group number" grep -q ' nobody/54321 ' <("$Z" list -l "$R/own.zn" own/f)
fi
# verify names a damaged index page and still checks everything else
mkdir -p "$R/vi" && for i in $(seq 2000); do printf 'file %s\n' "$i" >"$R/vi/f$i"; done
"$Z" create -q -o "$R/vi.zn" -C "$R" vi
# flip one bit in the middle of the index (its offset and size: the footer's first 16 bytes)
size=$(stat -c %s "$R/vi.zn")
read -r ioff isz < <(tail -c 64 "$R/vi.zn" | od -An -t u8 -N 16 | tr -s ' ' | sed 's/^ //')
at=$((ioff + isz / 2))
byte=$(od -An -t u1 -j "$at" -N 1 "$R/vi.zn" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 64)))" | dd of="$R/vi.zn" bs=1 seek="$at" conv=notrunc 2>/dev/null
check "damaging one index byte keeps the size" test "$(stat -c %s "$R/vi.zn")" -eq "$size"
code 1 "verify with a damaged index page" "$Z" verify "$R/vi.zn"
check "...names the page" grep -q 'index damaged: page [0-9]* (index bytes' "$T/stderr"
check "...and the entries it costs, not all of them" \
	test "$(grep -c 'unreadable in the index' "$T/stderr")" -lt 2000
# a hardlink whose target was not overwritten still gets the archive's content
mkdir -p "$R/hx/dir" && printf 'content\n' >"$R/hx/dir/a.txt" && ln "$R/hx/dir/a.txt" "$R/hx/hl"
"$Z" create -q -o "$R/hx.zn" -C "$R/hx" .
mkdir -p "$R/hxo/dir" && printf 'old\n' >"$R/hxo/dir/a.txt"
"$Z" extract -q "$R/hx.zn" -C "$R/hxo" hl dir/a.txt 2>/dev/null
check "hardlink beside a target that was not overwritten" test "$(cat "$R/hxo/hl")" = content
check "...and the existing target is kept" test "$(cat "$R/hxo/dir/a.txt")" = old
code 3 "an existing file" "$Z" extract "$R/hx.zn" -C "$R/hxo" dir/a.txt
check "...is not overwritten, and the way to is named" \
	grep -qx "znippy: dir/a.txt: not overwritten: File exists (use --overwrite)" "$T/stderr"
code 3 "an existing file with -k" "$Z" extract -k "$R/hx.zn" -C "$R/hxo" dir/a.txt
check "...is named without the hint that -k asked not to take" \
	grep -qx "znippy: dir/a.txt: not overwritten: File exists" "$T/stderr"
# cat: a trailing '/' names a directory (as for cat(1)); messages name the argument as given
code 1 "cat of a file named with a trailing slash" "$Z" cat "$R/hx.zn" dir/a.txt/
check "...is refused as not a directory, as cat(1) says" grep -q '^znippy: dir/a.txt/: not a directory' "$T/stderr"
code 1 "cat of a directory" "$Z" cat "$R/hx.zn" dir
check "...says it is one" grep -q '^znippy: dir: is a directory' "$T/stderr"
code 1 "cat of a missing path" "$Z" cat "$R/hx.zn" ./no//such/
check "...names it as given" grep -q '^znippy: ./no//such/: not found in archive' "$T/stderr"
# a directory where a file goes: --overwrite would not help, so it is not suggested
mkdir -p "$R/hxd/dir/a.txt"
code 3 "a directory in place of a file" "$Z" extract "$R/hx.zn" -C "$R/hxd" dir/a.txt
check "...says so, without suggesting --overwrite" sh -c \
	'grep -q "a.txt: cannot create: Is a directory" "$1" && ! grep -q "use --overwrite" "$1"' - "$T/stderr"
code 0 "--overwrite replaces an empty directory where a file goes (as tar)" \
	"$Z" extract --overwrite "$R/hx.zn" -C "$R/hxd" dir/a.txt
check "...with the file" test "$(cat "$R/hxd/dir/a.txt")" = content
rm -f "$R/hxd/dir/a.txt" && mkdir -p "$R/hxd/dir/a.txt/keep"
code 3 "...but never one that holds something" "$Z" extract --overwrite "$R/hx.zn" -C "$R/hxd" dir/a.txt
check "...which is kept" test -d "$R/hxd/dir/a.txt/keep"
# a tree whose paths are longer than PATH_MAX extracts whole (openat2 refuses such paths)
(mkdir -p "$R/deep" && cd "$R/deep" && for i in $(seq 40); do
	d=$(printf 'D%.0s' $(seq 120)); mkdir "$d" && cd "$d"; done && printf 'leaf\n' >leaf)
"$Z" create -q -o "$R/deep.zn" -C "$R" deep
rm -rf "$R/xdeep"
code 0 "extract paths over PATH_MAX" "$Z" extract -q "$R/deep.zn" -C "$R/xdeep"
check "...the leaf is there" test "$(find "$R/xdeep" -name leaf | wc -l)" -eq 1
code 0 "diff of that tree against its archive: no difference" "$Z" diff "$R/deep.zn" -C "$R"

finish
