#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_archive.sh - the znippy command end to end: a tree with every entry type and odd names goes
# through create -> list -> cat -> extract -> verify and comes back exactly; exit codes, patterns,
# determinism, standard output, damaged archives and unreadable inputs.
set -uo pipefail
Z=$(realpath "${1:?usage: cli_archive.sh path/to/znippy}")
T=$(mktemp -d /tmp/zncli.XXXXXX)
trap 'umount "$T/ofs/t/hosts" "$T/ofs/t/mnt" 2>/dev/null; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { # description, command...
	local d=$1
	shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}
code() { # expected exit code, description, command...
	local want=$1 d=$2
	shift 2
	"$@" >/dev/null 2>"$T/stderr"
	local got=$?
	if [ "$got" -eq "$want" ]; then pass "$d (exit $got)"; else
		fail "$d: exit $got, want $want"
		cat "$T/stderr"
	fi
}

# ---- a tree with every entry type and odd names ---------------------------------------------------
S=$T/src
mkdir -p "$S/dir with spaces" "$S/empty-dir" "$S/deep"
printf 'hello\n' >"$S/hello.txt"
: >"$S/empty-file"
printf 'spaces\n' >"$S/dir with spaces/file name.txt"
printf 'newline\n' >"$S/new"$'\n'"line"
printf 'latin1\n' >"$S/"$'\xe9\xff'"-bytes"
long=$(printf 'L%.0s' $(seq 1 255))
printf 'long name\n' >"$S/$long"
d="$S/deep"
for i in $(seq 1 40); do d="$d/level$i"; done
mkdir -p "$d" && printf 'deep\n' >"$d/leaf"
head -c 300000 /dev/urandom >"$S/random.bin"
seq 1 200000 >"$S/numbers.txt"              # larger than the 64K chunk used below
ln "$S/numbers.txt" "$S/hardlink-to-numbers"
ln -s hello.txt "$S/symlink"
ln -s does/not/exist "$S/dangling"
chmod 0751 "$S/dir with spaces"
chmod 0600 "$S/hello.txt"
chmod 4755 "$S/empty-file"
touch -d '2001-02-03 04:05:06.123456789' "$S/hello.txt"
for i in $(seq 1 50); do printf 'small file %d\n' "$i" >"$S/empty-dir/../s$i.txt"; done
cp "$S/s7.txt" "$S/copy-of-s7"       # identical small files: stored once, extracted as copies
cp "$S/hello.txt" "$S/z-copy-of-hello"
head -c 40000 /dev/urandom >"$S/rand40k" && cp "$S/rand40k" "$S/z-copy-of-rand40k"

A=$T/a.zn
code 0 "create" "$Z" create -q -o "$A" --chunk-size 64K -T 2 -C "$S" .
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

# ---- extract and compare ----------------------------------------------------------------------------
O=$T/out
code 0 "extract" "$Z" extract -q "$A" -C "$O" -T 3
check "content identical (diff -r)" diff -r --no-dereference "$S" "$O"
check "mode kept" test "$(stat -c %a "$O/dir with spaces")" = 751
check "setuid kept" test "$(stat -c %a "$O/empty-file")" = 4755
check "mtime kept to the nanosecond" test "$(stat -c %y "$O/hello.txt")" = "$(stat -c %y "$S/hello.txt")"
check "hardlink is a hardlink" test "$(stat -c %i "$O/numbers.txt")" = "$(stat -c %i "$O/hardlink-to-numbers")"
check "dangling symlink kept" test "$(readlink "$O/dangling")" = does/not/exist
check "empty dir kept" test -d "$O/empty-dir"
code 3 "extract again refuses to overwrite" "$Z" extract -q "$A" -C "$O"
code 0 "extract --overwrite" "$Z" extract -q --overwrite "$A" -C "$O"
check "still identical after overwrite" diff -r --no-dereference "$S" "$O"
check "an identical file is an independent copy, not a link" \
	test "$(stat -c %h:%s "$O/copy-of-s7")" = "1:$(stat -c %s "$S/s7.txt")"
"$Z" create -o "$T/dedup.zn" --progress --chunk-size 64K -C "$S" . 2>"$T/dedup.err"
check "create names how many identical files it stored once" grep -q '(3 identical files stored once)' "$T/dedup.err"
check "info counts them" grep -q '^stored once: *3 files' <("$Z" info "$T/dedup.zn")
mkdir -p "$T/big/e" && { head -c 200000 /dev/zero; head -c 300000 /dev/urandom; } >"$T/big/e/f" &&
	seq 1 100000 >"$T/big/e/g"
"$Z" create -q --chunk-size 64K -o "$T/big.zn" -C "$T/big" e
check "list -l: the stored sizes of files over several blocks add up to the blocks" \
	test "$("$Z" list -l "$T/big.zn" | awk '{s += $4} END {print s}')" = \
	"$("$Z" info "$T/big.zn" | sed -n 's/^blocks: .*), \([0-9]*\) bytes$/\1/p')"
check "list -l gives the copy no stored bytes, its original all of them" \
	test "$("$Z" list -l "$T/dedup.zn" rand40k z-copy-of-rand40k | awk '{print ($4 > 30000) ($4 == 0)}' | tr -d '\n')" = "1001"
"$Z" create -q -o "$T/nodedup.zn" --no-dedup --chunk-size 64K -C "$S" .
check "--no-dedup stores every copy" \
	test "$(stat -c %s "$T/nodedup.zn")" -gt "$(($(stat -c %s "$T/dedup.zn") + 39000))"
check "cat of a file stored once for two" cmp <("$Z" cat "$A" z-copy-of-hello) "$S/hello.txt"
code 0 "extract of a copy alone" "$Z" extract -q "$A" -C "$T/copyonly" z-copy-of-rand40k
check "the copy alone is whole" cmp "$T/copyonly/z-copy-of-rand40k" "$S/rand40k"
check "and its original was not extracted" test ! -e "$T/copyonly/rand40k"
mkdir -p "$T/chain"
code 0 "extract -C A -C B: into A/B, as tar" "$Z" extract -q "$A" -C "$T/chain" -C sub hello.txt
check "...there" cmp "$T/chain/sub/hello.txt" "$S/hello.txt"
code 0 "diff -C A -C B" "$Z" diff "$A" -C "$T/chain" -C sub hello.txt

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

# ---- determinism, stdout, exclude -----------------------------------------------------------------
"$Z" create -q -o "$T/t1.zn" -T 1 --chunk-size 64K -C "$S" . &&
	"$Z" create -q -o "$T/t4.zn" -T 4 --chunk-size 64K -C "$S" .
check "byte-identical with 1 and 4 threads" cmp "$T/t1.zn" "$T/t4.zn"
ZN_DISABLE_URING=1 "$Z" create -q -o "$T/plain.zn" -T 2 --chunk-size 64K -C "$S" .
check "byte-identical with and without io_uring" cmp "$T/t1.zn" "$T/plain.zn"
# Small files of many directories are read in batches that hold each directory open; with few
# descriptors allowed, the walk still gets what it needs, and the archive is the same.
mkdir -p "$T/fds" && for d in $(seq 60); do mkdir -p "$T/fds/d$d/s" &&
	for f in 1 2 3; do echo "$d $f" >"$T/fds/d$d/f$f" && echo "s $d $f" >"$T/fds/d$d/s/g$f"; done; done
"$Z" create -q -o "$T/fds.zn" -T 4 -C "$T" fds
for n in 10 16 48 100; do
	code 0 "create under ulimit -n $n" sh -c 'ulimit -n "$1" && "$2" create -q -T 4 -o "$3" -C "$4" fds' \
		sh "$n" "$Z" "$T/fds$n.zn" "$T"
	check "...the same archive" cmp "$T/fds.zn" "$T/fds$n.zn"
done
"$Z" create -q -o - --chunk-size 64K -C "$S" . >"$T/stdout.zn"
check "-o - writes the same archive to stdout" cmp "$T/t1.zn" "$T/stdout.zn"
"$Z" list "$T/t1.zn" >"$T/list-file.txt"
"$Z" create -q -o - --chunk-size 64K -C "$S" . | "$Z" list - >"$T/list-pipe.txt"
check "list - reads an archive piped in" cmp "$T/list-file.txt" "$T/list-pipe.txt"
check "list - reads an archive redirected in" cmp "$T/list-file.txt" <("$Z" list - <"$T/t1.zn")
rm -rf "$T/x-pipe" && mkdir "$T/x-pipe"
cat "$T/t1.zn" | "$Z" extract -q - -C "$T/x-pipe" hello.txt
check "extract - PATTERN from a pipe" cmp "$S/hello.txt" "$T/x-pipe/hello.txt"
check "cat - from a pipe" cmp "$S/numbers.txt" <(cat "$T/t1.zn" | "$Z" cat - numbers.txt)
code 0 "verify - from a pipe" bash -c 'cat "$1" | "$2" verify -q -' _ "$T/t1.zn" "$Z"
code 1 "a truncated archive piped in" bash -c 'head -c 5000 "$1" | "$2" list -' _ "$T/t1.zn" "$Z"
check "...is named '-'" grep -q "^znippy: -: " "$T/stderr"
code 3 "a pipe with no room for it in TMPDIR" \
	bash -c 'cat "$1" | TMPDIR="$3/none" "$2" list -' _ "$T/t1.zn" "$Z" "$T"
check "...says where it tried" grep -q "temporary file in $T/none" "$T/stderr"
"$Z" create -q -o "$T/ex.zn" --exclude '*.txt' --exclude deep -C "$S" .
check "exclude" test -z "$("$Z" list "$T/ex.zn" | grep -E '\.txt$|^deep')"
mkdir -p "$T/ex/t/a/b" && touch "$T/ex/t/a/b/f.o" "$T/ex/t/a/keep"
"$Z" create -q -o "$T/ex2.zn" --exclude a/b -C "$T/ex" t
check "exclude a/b leaves out t/a/b and its contents (a tail of the path, as tar)" \
	test "$("$Z" list "$T/ex2.zn" | tr '\n' ' ')" = "t t/a t/a/keep "
"$Z" create -q -o "$T/ex3.zn" --exclude "$T/ex/t/a" "$T/ex/t"
check "exclude of a path given as the PATH was (absolute)" test "$("$Z" list "$T/ex3.zn" | wc -l)" -eq 1
mkdir -p "$T/ex/u/tmp" "$T/ex/u/d" && touch "$T/ex/u/tmp/f" "$T/ex/u/d/tmp"
"$Z" create -q -o "$T/ex4.zn" --exclude /tmp -C "$T/ex" u
check "exclude with a leading / is anchored: it leaves u/tmp alone" test "$("$Z" list "$T/ex4.zn" | wc -l)" -eq 5
mkdir -p "$T/ex/c1" "$T/ex/c2" && echo one >"$T/ex/c1/f" && echo two >"$T/ex/c2/f"
code 3 "create: a different file under a path already stored (-C a f -C b f)" \
	"$Z" create -q -o "$T/ex/c.zn" -C "$T/ex/c1" f -C "$T/ex/c2" f
check "...is named, the first kept" sh -c 'grep -q "f: a different file was stored under this path first" "$1" &&
	test "$("$2" cat "$3" f)" = one' - "$T/stderr" "$Z" "$T/ex/c.zn"
code 0 "...while the same file met twice is a warning" "$Z" create -q -o "$T/ex/c.zn" -C "$T/ex/c1" f f
L255=$T/ex/$(printf 'o%.0s' $(seq 255))
code 0 "create -o OUT with a 255-byte name (its temporary name is shorter)" \
	sh -c '"$1" create -q -o "$2" -C "$3" u && "$1" create -q -o "$2" -C "$3" u && "$1" verify -q "$2"' \
	- "$Z" "$L255" "$T/ex"
rm -f "$L255"
mkdir -p "$T/ex/w/build" "$T/ex/w/src/build" && : >"$T/ex/w/build/o" && : >"$T/ex/w/src/build/k"
"$Z" create -q -o "$T/ex4b.zn" --exclude ./build -C "$T/ex/w" .
check "exclude with a leading ./ is anchored too: only the top build goes (as tar)" \
	test "$("$Z" list "$T/ex4b.zn" | tr '\n' ' ')" = "src src/build src/build/k "
"$Z" create -q -o "$T/ex5.zn" --exclude tmp/ -C "$T/ex" u
check "exclude with a trailing / leaves out directories only" \
	test "$("$Z" list "$T/ex5.zn" | tr '\n' ' ')" = "u u/d u/d/tmp "
"$Z" create -q -o "$T/ex6.zn" --exclude t/a -C "$T/ex" t/a/b t/a/keep t
check "a PATH below an excluded directory is left out too (as tar)" \
	test "$("$Z" list "$T/ex6.zn" | tr '\n' ' ')" = "t "
"$Z" create -q -o "$T/ex7.zn" --exclude b -C "$T/ex" t/a/b/f.o t/a/keep
check "...whichever part of its path the pattern matches" test "$("$Z" list "$T/ex7.zn")" = t/a/keep
printf 'keep\n\n*.o\n' >"$T/ex/patterns"
"$Z" create -q -o "$T/ex8.zn" -X "$T/ex/patterns" -C "$T/ex" t
check "-X FILE: a pattern a line" test "$("$Z" list "$T/ex8.zn" | tr '\n' ' ')" = "t t/a t/a/b "
printf 'keep \r\n*.o\t\r\n' >"$T/ex/patterns-crlf"
"$Z" create -q -o "$T/ex8b.zn" -X "$T/ex/patterns-crlf" -C "$T/ex" t
check "...trailing blanks and CR are not part of it (as tar)" test "$("$Z" list "$T/ex8b.zn" | tr '\n' ' ')" = "t t/a t/a/b "
code 3 "-X with a missing FILE" "$Z" create -q -o "$T/ex9.zn" -X "$T/ex/nope" -C "$T/ex" t
check "...names it" grep -q "ex/nope: cannot open: No such file" "$T/stderr"

mkdir -p "$T/self" && printf 'x\n' >"$T/self/x"
(cd "$T/self" && "$Z" create -q -o self.zn .) 2>"$T/stderr"
check "the archive is not archived into itself" test "$("$Z" list "$T/self/self.zn")" = x

# ---- usage errors ------------------------------------------------------------------------------------
code 2 "no command" "$Z"
code 2 "unknown command" "$Z" frobnicate
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

# ---- a write error cancels the rest and leaves no partial or empty files behind -------------------------
W=$T/wsrc
mkdir -p "$W"
head -c 150000 /dev/urandom >"$W/a" && head -c 100000 /dev/urandom >"$W/b"
head -c 100000 /dev/urandom >"$W/c" && : >"$W/d" && head -c 300000 /dev/urandom >"$W/e"
"$Z" create -q --chunk-size 64K -o "$T/w.zn" -C "$W" . >/dev/null
for limit in 120 200; do # KiB: the first, or a later, file does not fit
	rm -rf "$T/wout" && mkdir "$T/wout"
	(trap '' XFSZ; ulimit -f "$limit"; "$Z" extract -q -T1 -C "$T/wout" "$T/w.zn") 2>"$T/stderr"
	check "write error (limit $limit KiB): exit 3" test $? -eq 3
	check "write error (limit $limit KiB): the file is named" grep -q 'write failed' "$T/stderr"
	left=0
	for f in "$T/wout"/*; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$W/${f##*/}" || left=1
	done
	check "write error (limit $limit KiB): every file left is complete" test "$left" -eq 0
done

# ---- a file where the archive has a directory: named once, with what it costs ---------------------
K=$T/cascade
mkdir -p "$K/s/d/e" && for i in 1 2 3; do echo "$i" >"$K/s/d/f$i"; echo "$i" >"$K/s/d/e/g$i"; done
printf 'x\n' >"$K/s/d.txt" # sorts between d and d/...
"$Z" create -q -o "$K/a.zn" -C "$K/s" .
mkdir -p "$K/x" && printf 'blocker\n' >"$K/x/d"
code 3 "a file where the archive has a directory" "$Z" extract "$K/a.zn" -C "$K/x"
check "...is named once, with the entries below it" \
	sh -c 'test "$(grep -c "" "$1")" -eq 2 && grep -q "^znippy: d: .*the 7 entries below it" "$1"' - "$T/stderr"
check "...and the rest is extracted" test "$(cat "$K/x/d.txt")" = x

# ---- --one-file-system: a mount point below a PATH is stored empty (as root, where tmpfs mounts) ---
M=$T/ofs
mkdir -p "$M/t/mnt" && printf 'here\n' >"$M/t/here"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=1m zn-test "$M/t/mnt" 2>/dev/null; then
	printf 'there\n' >"$M/t/mnt/there" && printf 'bound\n' >"$M/t/mnt/bound"
	printf 'hosts\n' >"$M/t/hosts" && mount --bind "$M/t/mnt/bound" "$M/t/hosts"
	"$Z" create -q --one-file-system -o "$M/a.zn" -C "$M" t
	umount "$M/t/hosts"
	check "--one-file-system stores the mount point, not what is on it (a bind-mounted file stays)" \
		test "$("$Z" list "$M/a.zn" | tr '\n' ' ')" = "t t/here t/hosts t/mnt "
	"$Z" create -q --one-file-system -o "$M/b.zn" -C "$M" t/mnt
	check "...but a PATH given on another file system is walked" \
		test "$("$Z" list "$M/b.zn" | tr '\n' ' ')" = "t/mnt t/mnt/bound t/mnt/there "
	"$Z" create -q -o "$M/c.zn" -C "$M" t
	check "...and without it the walk goes in" test "$("$Z" list "$M/c.zn" | wc -l)" -eq 6
	umount "$M/t/mnt"
fi

# ---- a file too large for the target (EFBIG) is named and skipped; the others are extracted ------------
F=$T/fbig
mkdir -p "$F/s" && head -c 300000 /dev/urandom >"$F/s/a_big" && for i in 1 2 3; do echo "$i" >"$F/s/m$i"; done
"$Z" create -q -o "$F/a.zn" --chunk-size 64K -C "$F" s # a_big's blocks come first
(ulimit -f 100; "$Z" extract -T 1 "$F/a.zn" -C "$F/x" >/dev/null 2>"$T/stderr"; echo $? >"$F/rc")
check "a file over the file size limit: exit 3" test "$(cat "$F/rc")" = 3
check "...named" grep -q "s/a_big: write failed: File too large" "$T/stderr"
check "...and the others are extracted" test "$(cat "$F/x/s/m1" "$F/x/s/m3" | tr -d '\n')" = 13
check "...while it is not left half-written" test ! -e "$F/x/s/a_big"

# ---- the output file --------------------------------------------------------------------------------------
O=$T/osrc
mkdir -p "$O/in" && printf 'x\n' >"$O/in/f"
"$Z" create -q -o "$O/in/a.zn" -C "$O" in && "$Z" create -q -o "$O/in/a.zn" -C "$O" in
check "an archive inside the tree does not take in the one it replaces" \
	test "$("$Z" list "$O/in/a.zn" | tr '\n' ' ')" = "in in/f "
check "no temporary file left beside the archive" test "$(ls -A "$O/in" | tr '\n' ' ')" = "a.zn f "
printf 'old\n' >"$O/target" && ln -s target "$O/link.zn"
"$Z" create -q -o "$O/link.zn" -C "$O" in
check "a symlink OUT is written through, as tar does" test -L "$O/link.zn"
check "...and holds the archive" "$Z" verify -q "$O/link.zn"
mkfifo "$O/fifo.zn"
(cat "$O/fifo.zn" >"$O/from-fifo.zn") &
"$Z" create -q -o "$O/fifo.zn" -C "$O" in
wait
check "a FIFO OUT is written in place" "$Z" verify -q "$O/from-fifo.zn"
mkdir -p "$O/pc/in" && printf 'x\n' >"$O/pc/in/f"
"$Z" create -q -o "$O/c.zn" -C "$O/pc" in -C in f
check "-C is positional and relative to the one before, as with tar" \
	test "$("$Z" list "$O/c.zn" | tr '\n' ' ')" = "f in in/f "
code 3 "-C naming a missing directory" "$Z" create -q -o "$O/d.zn" -C "$O/pc" in -C nowhere f
check "...writes no archive" test ! -e "$O/d.zn"
code 2 "--memory below 8 chunks" "$Z" create -q -o "$O/c.zn" --memory 16M --chunk-size 4M -C "$O" in
if [ "$(id -u)" -eq 0 ] && mkdir -p "$O/mnt" && mount -t tmpfs -o size=200k tmpfs "$O/mnt" 2>/dev/null; then
	mkdir -p "$O/many" && for i in $(seq 3000); do : >"$O/many/f$i"; done
	dd if=/dev/zero of="$O/mnt/fill" bs=1k count=188 2>/dev/null
	printf 'good\n' >"$O/mnt/b.zn"
	"$Z" create -q -o "$O/mnt/b.zn" -C "$O" many 2>"$T/stderr"
	check "disk full while writing the index: exit 3" test $? -eq 3
	check "disk full: the message says why" grep -q 'No space left' "$T/stderr"
	check "disk full: the old archive is untouched" test "$(cat "$O/mnt/b.zn")" = good
	check "disk full: no temporary file left" test "$(ls -A "$O/mnt" | tr '\n' ' ')" = "b.zn fill "
	# Extracting onto a full disk: the first failed write cancels the rest (one message per
	# worker at most, not one per remaining file), and no file is left half-written.
	rm -f "$O/mnt/fill" "$O/mnt/b.zn"
	mkdir -p "$O/full" && for i in $(seq 400); do head -c 1000 /dev/urandom >"$O/full/f$i"; done
	ln -s f1 "$O/full/zlink" && : >"$O/full/zempty" # made after the data: never reached
	"$Z" create -q -o "$O/full.zn" -C "$O" full
	"$Z" extract -v -T 2 "$O/full.zn" -C "$O/mnt/x" >"$T/listed" 2>"$T/stderr"
	check "extract onto a full disk: exit 3" test $? -eq 3
	check "extract onto a full disk: stops at the first failed write" \
		test "$(grep -c 'No space left' "$T/stderr")" -le 3
	bad=0
	for f in "$O/mnt/x/full/"*; do cmp -s "$f" "$O/full/${f##*/}" || bad=1; done
	check "extract onto a full disk: every file left is whole" test $bad -eq 0
	made=$(ls "$O/mnt/x/full" | wc -l)
	check "...the stop says how many entries it did not extract" grep -q \
		"mnt/x: extraction stopped at the failed write above: $((402 - made)) entries are not extracted" \
		"$T/stderr"
	check "...-v lists what it did" test "$(grep -c '^full/' "$T/listed")" -eq "$made"
	check "...and nothing after the data is made" test ! -e "$O/mnt/x/full/zlink" -a ! -e "$O/mnt/x/full/zempty"
	umount "$O/mnt"
else
	echo "SKIPPED: extract onto a full disk (needs root and permission to mount a tmpfs)"
fi

# ---- inputs the format cannot hold, and names and times that need care in listings -----------------
mkdir -p "$O/odd" && printf 'x\n' >"$O/odd/f" && mkfifo "$O/odd/fifo"
touch -d '1969-12-31 23:59:59.5 UTC' "$O/odd/f"
printf 'y\n' >"$O/odd/"$'c1\xc2\x9b31m' && printf 'y\n' >"$O/odd/"$'raw\x9b31m'
printf 'y\n' >"$O/odd/"$'\xd0\xbf\xd1\x80\xe2\x82\xac' # "пр€": 0x80-0x9f as continuation bytes
printf 'y\n' >"$O/odd/"$'latin1\xe9'
printf 'y\n' >"$O/odd/"$'evil\xe2\x80\xaegpj.exe' # U+202E right-to-left override
printf 'z\n' >"$O/odd/a[1]" && printf 'z\n' >"$O/odd/b\\c"
"$Z" create -q -o "$O/odd.zn" -C "$O" odd 2>"$T/stderr"
check "a FIFO in a tree is named and left out: exit 3" test $? -eq 3
check "...and named even with -q" grep -q 'odd/fifo: not a regular file' "$T/stderr"
check "list -l rounds times before 1970 down" \
	sh -c 'TZ=UTC "$1" list -l "$2" odd/f | grep -q "1969-12-31 23:59 odd/f"' - "$Z" "$O/odd.zn"
check "list escapes C1 controls, raw or UTF-8" \
	test "$("$Z" list "$O/odd.zn" | grep -c '\\233')" -eq 2
check "list shows UTF-8 names as they are" \
	test "$("$Z" list "$O/odd.zn" | grep -cx "odd/"$'\xd0\xbf\xd1\x80\xe2\x82\xac')" -eq 1
check "a name with glob characters is selected by itself" \
	sh -c '"$1" list "$2" "odd/a[1]" "odd/b\\c" | grep -c "^odd/[ab][[\\\\]" | grep -qx 2' - "$Z" "$O/odd.zn"
check "list escapes bidirectional overrides" \
	test "$("$Z" list "$O/odd.zn" | grep -cxF 'odd/evil\342\200\256gpj.exe')" -eq 1
check "list escapes bytes that are not UTF-8" \
	test "$("$Z" list "$O/odd.zn" | grep -cxF 'odd/latin1\351')" -eq 1

# ---- a signal during extract: files begun but not finished are removed, then the signal kills -----
mkdir -p "$O/sig" && for i in 1 2 3 4 5 6; do head -c 6M /dev/urandom >"$O/sig/big$i"; done
for i in $(seq 300); do printf 'small %s\n' "$i" >"$O/sig/s$i"; done
"$Z" create -q --chunk-size 64K -o "$O/sig.zn" -C "$O" sig
bad=0 stopped=0
for d in 0.005 0.01 0.02 0.03 0.05 0.08; do
	rm -rf "$O/sx"
	"$Z" extract -q -T 2 "$O/sig.zn" -C "$O/sx" &
	pid=$!
	sleep $d
	kill -TERM $pid 2>/dev/null
	wait $pid
	rc=$?
	[ $rc -eq 143 ] && stopped=$((stopped + 1))
	[ $rc -eq 143 ] || [ $rc -eq 0 ] || bad=1
	for f in "$O/sx/sig/"*; do [ -e "$f" ] || continue; cmp -s "$f" "$O/sig/${f##*/}" || bad=1; done
done
check "SIGTERM during extract: every file left is whole, and the exit is the signal's" test $bad -eq 0
echo "     ($stopped of 6 runs were stopped mid-way)"

# ---- the archive cut short during extract (SIGBUS): stopped, files begun removed, old ones kept ----
# ZN_TEST_TRUNCATE_AT (a test hook) truncates the archive when the first data is written.
cp "$O/sig.zn" "$O/cut.zn"
code 3 "archive truncated during extract" \
	env ZN_TEST_TRUNCATE_AT=100000 "$Z" extract -q -T 2 "$O/cut.zn" -C "$O/cut"
check "...said" grep -q "shrank while being read" "$T/stderr"
left=$(find "$O/cut" -type f | wc -l)
bad=0
for f in $(find "$O/cut" -type f); do cmp -s "$f" "$O/${f#"$O/cut/"}" || bad=1; done
check "...every file left is whole ($left of them), none half-written" test $bad -eq 0
mkdir -p "$O/cut2/sig" && echo OLD >"$O/cut2/sig/big6"
cp "$O/sig.zn" "$O/cut.zn"
code 3 "...and with --overwrite" \
	env ZN_TEST_TRUNCATE_AT=100000 "$Z" extract -q --overwrite -T 2 "$O/cut.zn" -C "$O/cut2"
check "...the old file kept, no temporary left" \
	sh -c '[ "$(cat "$1/sig/big6")" = OLD ] && [ -z "$(find "$1" -name "*.part")" ]' - "$O/cut2"

# ---- input paths: '..', a symlink given with a trailing slash ------------------------------------------------
mkdir -p "$O/p/d/sub" "$O/real" && printf 'f\n' >"$O/p/d/f" && ln -s ../real "$O/p/ldir"
(cd "$O/p" && "$Z" create -o "$O/p.zn" d/sub/../f ldir/) 2>"$T/stderr"
check "'..' in a PATH: stored without the part up to it" test "$("$Z" list "$O/p.zn" | tr '\n' ' ')" = "f ldir "
check "'..' in a PATH: a warning" grep -q "up to its last '..'" "$T/stderr"
check "a symlink given as 'link/' is stored as the symlink" \
	grep -q '^l' <("$Z" list -l "$O/p.zn" ldir)

# two files stored under one path: the first is stored, the second named and not read (exit
# 3); a hardlink to the second is then the first of its inode and keeps its own content
mkdir -p "$O/hl/sub" && printf 'outer\n' >"$O/hl/p" && printf 'inner\n' >"$O/hl/sub/p"
ln "$O/hl/sub/p" "$O/hl/sub/q"
(cd "$O/hl/sub" && "$Z" create -o "$O/hl.zn" ../p p q) 2>"$T/stderr"
check "a path given twice: exit 3" test $? -eq 3
check "a path given twice: named" grep -q '^znippy: p: a different file was stored under this path first' "$T/stderr"
check "a path given twice: the first stored" test "$("$Z" cat "$O/hl.zn" p)" = outer
check "a hardlink to the second: stored with its content" test "$("$Z" cat "$O/hl.zn" q)" = inner
check "a path given twice: two rows" test "$("$Z" list "$O/hl.zn" | tr '\n' ' ')" = "p q "
# a tree given twice is read once: the archive is the same as with the tree given once
mkdir -p "$O/tw/d" && head -c 200000 /dev/urandom >"$O/tw/d/r" && printf 's\n' >"$O/tw/d/s"
(cd "$O/tw" && "$Z" create -q -o "$O/tw1.zn" d && "$Z" create -o "$O/tw2.zn" d d/ ./d/s 2>"$T/stderr")
check "a tree given twice: byte-identical to the tree given once" cmp -s "$O/tw1.zn" "$O/tw2.zn"
# named once for the tree, not once for each file in it; a file in it given again, once
check "a tree given twice: named as two lines" test "$(sort "$T/stderr" | tr '\n' '|')" = \
	"znippy: d/s: given more than once; stored once (the first)|znippy: d: given more than once; stored once (the first)|"
(cd "$O/tw/d" && "$Z" create -o "$O/tw3.zn" . . 2>"$T/stderr")
check "...as '.', once" test "$(cat "$T/stderr")" = "znippy: .: given more than once; stored once (the first)"

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

# ---- unreadable inputs are reported, and the exit code says so ------------------------------------------
U=$T/unreadable
mkdir -p "$U" && printf 'secret\n' >"$U/secret" && printf 'public\n' >"$U/public" && chmod 000 "$U/secret"
chmod 777 "$T"
run_unpriv() { if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
# A copy of the command in $T, which uid 65534 can reach wherever the checkout is (under /root,
# say, which is 0700).
cp "$Z" "$T/znippy-unpriv" && chmod 755 "$T/znippy-unpriv"
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null; then
	run_unpriv "$T/znippy-unpriv" create -q -o "$T/u.zn" "$U" >/dev/null 2>"$T/stderr"
	check "unreadable input: exit 3" test $? -eq 3
	check "unreadable input named" grep -q 'secret' "$T/stderr"
	check "readable input stored" test "$("$Z" cat "$T/u.zn" "${U#/}/public")" = public
	mkdir -p "$U/closed" && echo x >"$U/closed/f" && chmod 000 "$U/closed" && chmod 600 "$U/secret"
	chown 65534 "$U/secret"
	run_unpriv "$T/znippy-unpriv" create -q -o "$T/u2.zn" "$U" >/dev/null 2>"$T/stderr"
	check "a directory that cannot be read: exit 3, named" grep -q "closed: cannot open directory; not stored" "$T/stderr"
	check "...and left out, as tar leaves it out, not stored empty" \
		test "$("$Z" list "$T/u2.zn" | grep -c closed)" = 0 -a "$("$Z" list "$T/u2.zn" | grep -c secret)" = 1
	chmod 700 "$U/closed"
	# Many small files, some unreadable, some empty (read in the batch too, to know they can
	# be opened): the crew's reads (several threads) and the producer's alone (one) give the
	# same archive and the same reports.
	mkdir -p "$U/many" && for i in $(seq 60); do printf 'file %d\n' "$i" >"$U/many/f$i"; done
	: >"$U/many/f20" && : >"$U/many/f40" && : >"$U/many/f41"
	mkdir "$U/many/zz" && chmod 000 "$U/many/f7" "$U/many/f14" "$U/many/f40" "$U/many/f53" "$U/many/zz"
	run_unpriv "$T/znippy-unpriv" create -q -T4 -o "$T/m4.zn" -C "$U" many >/dev/null 2>"$T/stderr"
	check "unreadable among many, 4 threads: exit 3" test $? -eq 3
	check "...each named once (an empty one too)" test "$(grep -c 'cannot open; not stored' "$T/stderr")" = 4
	check "...in path order (the files read in a batch before the directory after them)" \
		test "$(grep -o 'many/[a-z0-9]*' "$T/stderr" | tr '\n' ' ')" = "many/f14 many/f40 many/f53 many/f7 many/zz "
	check "...the others stored" test "$("$Z" list "$T/m4.zn" | wc -l)" = 57 -a \
		"$("$Z" cat "$T/m4.zn" many/f60)" = "file 60"
	check "...the empty ones empty" test "$("$Z" list -l "$T/m4.zn" many/f20 many/f41 | awk '{s += $3} END {print NR, s}')" = "2 0"
	run_unpriv "$T/znippy-unpriv" create -q -T1 -o "$T/m1.zn" -C "$U" many >/dev/null 2>&1
	check "...the same archive with 1 thread" cmp -s "$T/m1.zn" "$T/m4.zn"
fi

# ---- an archive replaced by a new one keeps its mode; read-only ones and sticky directories ----------------
W=$T/over
mkdir -p "$W/in" && printf 'x\n' >"$W/in/x"
printf 'old\n' >"$W/private.zn" && chmod 600 "$W/private.zn"
"$Z" create -q -o "$W/private.zn" -C "$W" in
check "a replaced archive keeps its mode (0600 stays private)" test "$(stat -c %a "$W/private.zn")" = 600
check "...and is the new archive" test "$("$Z" cat "$W/private.zn" in/x)" = x
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null; then
	mkdir -m 1777 "$W/sticky" && chmod 755 "$W"
	printf 'old\n' >"$W/sticky/theirs.zn" && chmod 666 "$W/sticky/theirs.zn"
	if [ "$(id -u)" -eq 0 ]; then # the file is root's, the writer uid 65534
		run_unpriv "$T/znippy-unpriv" create -q -o "$W/sticky/theirs.zn" -C "$W" in 2>"$T/stderr"
		check "another user's file in a sticky directory is written in place" \
			test "$("$Z" cat "$W/sticky/theirs.zn" in/x)" = x
		check "...and stays theirs" test "$(stat -c %u "$W/sticky/theirs.zn")" = 0
	fi
	mkdir -m 777 "$W/ro" && printf 'old\n' >"$W/ro/ro.zn" && chmod 444 "$W/ro/ro.zn"
	chown 65534 "$W/ro/ro.zn" 2>/dev/null
	code 3 "a read-only archive is not replaced (as tar)" run_unpriv "$T/znippy-unpriv" create -q \
		-o "$W/ro/ro.zn" -C "$W" in
	check "...says why" grep -q "ro.zn: cannot open: Permission denied" "$T/stderr"
	check "...and is left alone" test "$(cat "$W/ro/ro.zn")" = old
	mkdir -m 777 "$W/again"
	run_unpriv sh -c 'mkdir -p "$1/src/ro" && echo one >"$1/src/ro/f" && chmod 555 "$1/src/ro" &&
		"$2" create -q -o "$1/a.zn" -C "$1" src && "$2" extract -q "$1/a.zn" -C "$1/x"' \
		- "$W/again" "$T/znippy-unpriv"
	code 0 "extract --overwrite again into a read-only directory it made" \
		run_unpriv "$T/znippy-unpriv" extract -q --overwrite "$W/again/a.zn" -C "$W/again/x"
	check "...which keeps its mode" test "$(stat -c %a "$W/again/x/src/ro")" = 555
	mkdir -p "$W/perm/s/d" "$W/perm/x/d" && printf 'new\n' >"$W/perm/s/d/f" && printf 'old\n' >"$W/perm/x/d/f"
	chmod 666 "$W/perm/x/d/f" && "$Z" create -q -o "$W/perm/a.zn" -C "$W/perm/s" d
	code 3 "--overwrite where the old file cannot be removed" \
		run_unpriv "$T/znippy-unpriv" extract -q --overwrite "$W/perm/a.zn" -C "$W/perm/x"
	check "...says why (and that it is kept), not to use --overwrite" grep -q \
		"d/f: not replaced (the old file is kept): cannot create the new one beside it: Permission denied" \
		"$T/stderr"
	# Directories a user may pass through but not read, as tar handles them.
	N=$W/noread && mkdir -p "$N/home/pub" "$N/out" && echo pub >"$N/home/pub/f" && chmod 711 "$N/home"
	chmod 777 "$N/out"
	code 0 "create of a PATH below a directory this user may only search (0711)" \
		run_unpriv "$T/znippy-unpriv" create -q -o "$N/out/a.zn" "$N/home/pub"
	check "...stores it" test "$("$Z" cat "$N/out/a.zn" "${N#/}/home/pub/f")" = pub
	mkdir -p "$N/out/wx/home" && chown -R 65534 "$N/out/wx" && chmod 300 "$N/out/wx" "$N/out/wx/home"
	code 0 "extract into existing directories this user may write but not read (0300)" \
		run_unpriv "$T/znippy-unpriv" extract -q --strip-components 4 "$N/out/a.zn" -C "$N/out/wx"
	chmod 700 "$N/out/wx" "$N/out/wx/home"
	check "...writes the file" test "$(cat "$N/out/wx/home/pub/f")" = pub
	run_unpriv sh -c 'chmod u+w "$1/x/src/ro" && rm "$1/x/src/ro/f" && chmod 515 "$1/x/src/ro"' - "$W/again"
	code 0 "extract --skip-old-files of a file missing from a read-only directory it made" \
		run_unpriv "$T/znippy-unpriv" extract -q --skip-old-files "$W/again/a.zn" -C "$W/again/x"
	check "...writes it, and the directory keeps its own mode" \
		test "$(cat "$W/again/x/src/ro/f") $(stat -c %a "$W/again/x/src/ro")" = "one 515"
	mkdir -p "$N/um/s/sticky" && echo x >"$N/um/s/w" && chmod 666 "$N/um/s/w" && chmod 1777 "$N/um/s/sticky"
	"$Z" create -q -o "$N/um.zn" -C "$N/um" s && chmod 777 "$N/um"
	code 0 "extract by a user with umask 027" run_unpriv sh -c 'umask 027 && "$1" extract "$2" -C "$3"' - \
		"$T/znippy-unpriv" "$N/um.zn" "$N/um/o"
	check "...takes the umask off and drops the sticky bit, as tar" \
		test "$(stat -c %a "$N/um/o/s/w" "$N/um/o/s/sticky" | tr '\n' ' ')" = "640 750 "
	code 0 "extract -p by a user with umask 027" run_unpriv sh -c 'umask 027 && "$1" extract -p "$2" -C "$3"' - \
		"$T/znippy-unpriv" "$N/um.zn" "$N/um/p"
	check "...keeps the modes as stored" \
		test "$(stat -c %a "$N/um/p/s/w" "$N/um/p/s/sticky" | tr '\n' ' ')" = "666 1777 "
	mkdir -m 2777 "$N/um/sg" && chmod 2777 "$N/um/sg"
	code 0 "extract by a user into a setgid directory" run_unpriv sh -c 'umask 022 && "$1" extract "$2" -C "$3"' - \
		"$T/znippy-unpriv" "$N/um.zn" "$N/um/sg"
	check "...a new directory keeps the setgid bit it inherits, as with tar" test "$(stat -c %a "$N/um/sg/s")" = 2755
	mkdir -p "$N/dfu/t" && echo a >"$N/dfu/t/a" && echo b >"$N/dfu/t/b" && chmod 600 "$N/dfu/t/a"
	"$Z" create -q -o "$N/dfu.zn" -C "$N/dfu" t && chmod 755 "$N/dfu" && chmod 644 "$N/dfu.zn"
	run_unpriv "$T/znippy-unpriv" diff "$N/dfu.zn" -C "$N/dfu" >"$T/stdout" 2>"$T/stderr"
	check "diff of a file this user may not read: an error (exit 3), not a difference" \
		test $? -eq 3 -a ! -s "$T/stdout" -a "$(grep -c "t/a: cannot open: Permission denied" "$T/stderr")" = 1
	mkdir -m 700 "$N/locked"
	if [ "$(id -u)" -eq 0 ]; then # started in root's 0700 directory, as uid 65534
		code 0 "create -C run from a directory this user may not even search (as tar)" sh -c 'cd "$1" &&
			exec setpriv --reuid=65534 --regid=65534 --clear-groups "$2" create -q -o "$3" -C "$4" pub' \
			- "$N/locked" "$T/znippy-unpriv" "$N/out/l.zn" "$N/home"
		check "...keeps the archive" test "$("$Z" cat "$N/out/l.zn" pub/f)" = pub
	fi
	mkdir -p "$N/root/t" && chmod 777 "$N/root" "$N/root/t" && echo x >"$N/root/t/x"
	"$Z" create -q -o "$N/root.zn" -C "$N/root" t && mkdir "$N/root/into"
	mkdir -m 777 "$N/root/into/t" && chown 65534 "$N/root/into"
	code 0 "extract into another user's existing directory" \
		run_unpriv sh -c 'umask 022 && "$1" extract "$2" -C "$3"' - "$T/znippy-unpriv" "$N/root.zn" "$N/root/into"
	check "...says it kept its mode and time" \
		grep -q "t: directory kept its mode and time: Operation not permitted" "$T/stderr"
fi

# ---- --files-from: PATHs from a list, in place among -C and PATHs; --null for any name ---------------------------
L=$T/lists && mkdir -p "$L/top/d" "$L/sub" && echo 1 >"$L/top/d/f" && echo 2 >"$L/top/sp ace" && echo 3 >"$L/sub/s"
printf 'x\n' >"$L/top/nl
name"
printf 'd\n\nsp ace\n' >"$L/l1" && printf 's\n' >"$L/l2"
code 0 "create --files-from, among -C and PATHs" sh -c 'cd "$1/top" && "$2" create -q -o "$1/a.zn" \
	--files-from ../l1 -C ../sub --files-from ../l2' - "$L" "$Z"
check "...stores those PATHs, each under its -C" test "$("$Z" list "$L/a.zn" | tr '\n' ,)" = "d,d/f,s,sp ace,"
code 0 "--null --files-from - takes find -print0's names" sh -c 'cd "$1/top" && find . -name "nl*" -print0 |
	"$2" create -q -o "$1/b.zn" --null --files-from -' - "$L" "$Z"
check "...a name with a newline whole" test "$("$Z" list --json "$L/b.zn" | grep -c '"path":"nl\\u000aname"')" = 1
code 0 "find's list with --no-recursion: each entry once, without warnings" sh -c 'cd "$1/top" && find d -print0 |
	"$2" create -o "$1/f.zn" --null --no-recursion --files-from -' - "$L" "$Z"
check "...all of them" test "$("$Z" list "$L/f.zn" | tr '\n' ' ')$(wc -c <"$T/stderr")" = "d d/f 0"
"$Z" create -q -o "$L/g.zn" --no-recursion -C "$L/top" d
check "--no-recursion: a directory PATH alone" test "$("$Z" list "$L/g.zn")" = d
code 0 "an empty LIST makes an empty archive (as tar)" "$Z" create -q -o "$L/c.zn" --files-from /dev/null
check "...with no entries" sh -c '"$1" info "$2" | grep -q "^entries: *0 "' - "$Z" "$L/c.zn"
code 3 "a missing LIST" "$Z" create -q -o "$L/d.zn" --files-from "$L/nope"
check "...is named" grep -q "nope: cannot open: No such file or directory" "$T/stderr"
printf 'a\0b\n' >"$L/l3"
code 1 "a NUL in a newline LIST" "$Z" create -q -o "$L/e.zn" --files-from "$L/l3"
check "...is named, with the way out" grep -q "l3: line 1: the name holds a NUL byte (--null" "$T/stderr"

# ---- --owner, --group, --mode, --mtime: as tar's; the same tree from two machines, one archive -------------------
MT=$T/meta && mkdir -p "$MT/one/t/d" "$MT/two/t/d"
for s in one two; do echo same >"$MT/$s/t/d/f" && echo exe >"$MT/$s/t/x" && ln -s d/f "$MT/$s/t/l"; done
chmod 600 "$MT/one/t/d/f" && chmod 755 "$MT/one/t/x" && chmod 700 "$MT/one/t/d"
chmod 664 "$MT/two/t/d/f" && chmod 775 "$MT/two/t/x" && chmod 2775 "$MT/two/t/d" && chown -R 1234:5678 "$MT/two/t" 2>/dev/null
touch -d 2001-01-01 "$MT/one/t/d/f" "$MT/two/t/d/f" && touch -h -d 2031-01-01 "$MT/two/t/l"
set -- --owner 0 --group 0 --numeric-owner --mode 'u+w,go-w,a+rX,g-s' --mtime @1000000000 --clamp-mtime
"$Z" create -q -o "$MT/one.zn" "$@" -C "$MT/one" t && "$Z" create -q -o "$MT/two.zn" "$@" -C "$MT/two" t
check "--owner 0 --group 0 --numeric-owner --mode --mtime --clamp-mtime: byte-identical archives" \
	test "$(stat -c %s "$MT/one.zn")" -gt 0 -a -z "$(cmp "$MT/one.zn" "$MT/two.zn" 2>&1)"
check "...with the modes chmod gives, ids and no names" test "$("$Z" list -l "$MT/one.zn" | awk '{print $1, $2}' | tr '\n' ,)" = \
	"drwxr-xr-x 0/0,drwxr-xr-x 0/0,-rw-r--r-- 0/0,lrwxr-xr-x 0/0,-rwxr-xr-x 0/0,"
check "...an older time kept, later ones clamped" test "$("$Z" list --json "$MT/one.zn" | grep -o '"mtime":"[^"]*"' | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ,)" = \
	'1"mtime":"2001-01-01T00:00:00.000000000Z",4"mtime":"2001-09-09T01:46:40.000000000Z",'
"$Z" create -q -o "$MT/n.zn" --owner joe:77 --group 0 --mtime 2020-01-02T03:04:05+02:00 -C "$MT/one" t/x
check "--owner NAME:ID, --group ID (its name here), --mtime with a zone" \
	test "$("$Z" list --json "$MT/n.zn" | grep -o '"uid":77,"gid":0,"user":"joe","group":"root".*"mtime":"2020-01-02T01:04:05.000000000Z"' | wc -l)" = 1
"$Z" create -q -o "$MT/nn.zn" --numeric-owner -C "$MT/one" t/x
check "--numeric-owner: list --json leaves the names it does not hold out" \
	test "$("$Z" list --json "$MT/nn.zn" | grep -c '"uid":0,"gid":0,"size"')" = 1
code 2 "--owner of a user unknown here, without an id" "$Z" create -q -o "$MT/e.zn" --owner no-such-user-here t
check "...says how to give one" grep -q "unknown user 'no-such-user-here' (give NAME:UID)" "$T/stderr"
# --mode against chmod itself, on files and directories with set-id bits, under two umasks
mkdir -p "$MT/cm/t" && for k in 0644 0755 2775 4711 1777 0600; do
	: >"$MT/cm/t/f$k" && mkdir "$MT/cm/t/d$k" && chmod "$k" "$MT/cm/t/f$k" "$MT/cm/t/d$k"; done
cm_ok=1
for um in 022 077; do
	for m in '=rw' '=' '755' '00755' '+644' '=644' 'u=rwx,go=' 'g=u-w' 'a+rX,go-w' 'o+t,g-s' 'ug=rwX' '=rX,+X'; do
		rm -rf "$MT/cm/c" && cp -a "$MT/cm/t" "$MT/cm/c"
		(umask "$um" && chmod -- "$m" "$MT/cm/c"/* 2>/dev/null
		 "$Z" create -q -o "$MT/cm/a.zn" --mode "$m" -C "$MT/cm/t" .) || cm_ok=0
		want=$(cd "$MT/cm/c" && for f in *; do printf '%s %04o,' "$f" "0$(stat -c %a "$f")"; done)
		got=$("$Z" list --json "$MT/cm/a.zn" | sed 's/.*"path":"\([^"]*\)".*"mode":"\([0-7]*\)".*/\1 \2/' |
			while read -r f md; do printf '%s %04o,' "$f" "0$md"; done)
		[ "$want" = "$got" ] || { cm_ok=0; echo "umask $um --mode '$m': chmod $want, znippy $got"; }
	done
done
check "--mode gives what chmod gives (umask, directories' set-id bits, octal forms)" test "$cm_ok" = 1
"$Z" create -v -o "$MT/v.zn" -C "$MT/one" t >"$MT/v.out" 2>"$MT/v.err"
check "list -v is list -l, as tar -tv" test "$("$Z" list -v "$MT/v.zn" 2>&1)" = "$("$Z" list -l "$MT/v.zn")"
check "create -v lists what list lists" test -s "$MT/v.out" -a "$(cat "$MT/v.out")" = "$("$Z" list "$MT/v.zn")" -a ! -s "$MT/v.err"
"$Z" create -v -o - -C "$MT/one" t >"$MT/v2.zn" 2>"$MT/v2.err"
check "...on stderr with -o -, the archive alone on stdout" test "$(cat "$MT/v2.err")" = "$(cat "$MT/v.out")" -a \
	"$("$Z" list "$MT/v2.zn")" = "$(cat "$MT/v.out")"
check "extract -v lists what it extracted" test "$("$Z" extract -v "$MT/v.zn" -C "$MT/vx")" = "$(cat "$MT/v.out")"
check "...nothing with --skip-old-files over it" test -z "$("$Z" extract -v --skip-old-files "$MT/v.zn" -C "$MT/vx")"
mkdir -p "$MT/vcs/p/.git/o" "$MT/vcs/p/src/CVS" && touch "$MT/vcs/p/.gitignore" "$MT/vcs/p/src/a.c" "$MT/vcs/p/x.git" \
	"$MT/vcs/p/src/CVS/Entries" "$MT/vcs/p/.hgtags"
"$Z" create -q --exclude-vcs -o "$MT/vcs.zn" -C "$MT/vcs" p
check "--exclude-vcs leaves out what tar's leaves out" test "$("$Z" list "$MT/vcs.zn" | tr '\n' ' ')" = "p p/src p/src/a.c p/x.git "
if [ "$(id -u)" -eq 0 ]; then
	chown -R 1234:1234 "$MT/vcs" && "$Z" create -q -o "$MT/own.zn" -C "$MT/vcs" p
	"$Z" extract -q --no-same-owner "$MT/own.zn" -C "$MT/own1" && "$Z" extract -q "$MT/own.zn" -C "$MT/own2"
	check "extract --no-same-owner as root: the files are root's; without it, the stored owner's" \
		test "$(stat -c %u "$MT/own1/p/src/a.c") $(stat -c %u "$MT/own2/p/src/a.c")" = "0 1234"
fi
# --exclude when extracting and listing, against tar's
mkdir -p "$MT/exx/p/a/b" "$MT/exx/p/c" && touch "$MT/exx/p/a/b/x.o" "$MT/exx/p/a/y.c" "$MT/exx/p/c/z.o" "$MT/exx/p/b"
"$Z" create -q -o "$MT/exx.zn" -C "$MT/exx" p && tar -cf "$MT/exx.tar" -C "$MT/exx" p
ex_ok=1
for pat in '*.o' b a/b 'p/c' a; do
	rm -rf "$MT/exz" "$MT/ext" && mkdir "$MT/ext"
	"$Z" extract -q --exclude "$pat" "$MT/exx.zn" -C "$MT/exz" && tar -xf "$MT/exx.tar" --exclude "$pat" -C "$MT/ext"
	[ "$(cd "$MT/exz" && find . | sort)" = "$(cd "$MT/ext" && find . | sort)" ] || { ex_ok=0; echo "--exclude '$pat' differs from tar"; }
	[ "$("$Z" list --exclude "$pat" "$MT/exx.zn" | sed 's|$||' | sort)" = "$(cd "$MT/exz" && find . -mindepth 1 | sed 's|^\./||' | sort)" ] ||
		{ ex_ok=0; echo "list --exclude '$pat' differs from extract"; }
done
check "extract --exclude and list --exclude leave out what tar -x --exclude leaves out" test "$ex_ok" = 1
code 1 "a PATTERN naming only what --exclude leaves out is not found, as with tar" \
	"$Z" list --exclude '*.o' "$MT/exx.zn" p/c/z.o
check "...and named so" grep -q '^znippy: p/c/z.o: not found in archive$' "$T/stderr"
code 0 "...while one selecting more lists the rest" "$Z" list --exclude '*.o' "$MT/exx.zn" p/c
echo one >"$MT/exx/p/a/y.c" && echo two >"$MT/exx/p/c/z.o" && "$Z" create -q -o "$MT/exo.zn" -C "$MT/exx" p
"$Z" extract -O -v "$MT/exo.zn" p/a p/c >"$MT/exo.out" 2>"$MT/exo.err"
check "extract -O: the selected files' contents in path order, as tar -xO; -v names them on stderr" \
	test "$(cat "$MT/exo.out")" = "$(printf 'one\ntwo')" -a "$(cat "$MT/exo.err" | tr '\n' ' ')" = "p/a/b/x.o p/a/y.c p/c/z.o "
touch -d 2001-01-01 "$MT/exx/p/a/y.c" && "$Z" create -q -o "$MT/exm.zn" -C "$MT/exx" p
"$Z" extract -q -m "$MT/exm.zn" -C "$MT/exm"
check "extract -m: the time of the extraction, not the stored one" test "$(stat -c %Y "$MT/exm/p/a/y.c")" -gt 1000000000 -a \
	"$(stat -c %Y "$MT/exm/p/a/y.c")" -ne "$(stat -c %Y "$MT/exx/p/a/y.c")"
touch -d 2002-02-02 "$MT/exx/p" && "$Z" create -q -o "$MT/exm.zn" -C "$MT/exx" p
mkdir -p "$MT/exn/p" && chmod 700 "$MT/exn/p" && touch -d 2000-01-01 "$MT/exn/p" &&
	"$Z" extract -q --no-overwrite-dir "$MT/exm.zn" -C "$MT/exn"
check "extract --no-overwrite-dir: an existing directory keeps its mode; new ones get the archive's" \
	test "$(stat -c %a "$MT/exn/p") $(stat -c %a "$MT/exn/p/a")" = "700 $(stat -c %a "$MT/exx/p/a")"
check "...and the existing one gets the archive's time, as tar's" \
	test "$(stat -c %Y "$MT/exn/p")" = "$(stat -c %Y "$MT/exx/p")"
check "extract -O --strip-components leaves out what has no more parts, as tar -xO" \
	test "$("$Z" extract -O --strip-components 2 "$MT/exo.zn" p/a | wc -c)" = 4 -a \
	"$("$Z" extract -O --strip-components 3 "$MT/exo.zn" p/a | wc -c)" = 0
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p "$MT/ro/w/p/a" && chown 1234:1234 "$MT/ro/w/p/a" && chmod 700 "$MT/ro/w/p/a"
	"$Z" extract -q --overwrite "$MT/exo.zn" -C "$MT/ro/w"
	check "extract as root gives an existing directory its stored owner back, as tar" \
		test "$(stat -c %u:%g "$MT/ro/w/p/a")" = "$(stat -c %u:%g "$MT/exx/p/a")"
fi
# diff: the archive against the files it came from, as tar -d
mkdir -p "$MT/df/t/d" && echo hello >"$MT/df/t/f" && echo same >"$MT/df/t/d/g" && ln -s f "$MT/df/t/l" &&
	ln "$MT/df/t/f" "$MT/df/t/h" && echo gone >"$MT/df/t/gone" && echo u >"$MT/df/t/u"
"$Z" create -q -o "$MT/df.zn" -C "$MT/df" t
code 0 "diff of an unchanged tree" "$Z" diff "$MT/df.zn" -C "$MT/df"
check "...says nothing" test -z "$("$Z" diff "$MT/df.zn" -C "$MT/df")"
printf 'HELLO\n' >"$MT/df/f.new" && touch -r "$MT/df/t/f" "$MT/df/f.new" && cat "$MT/df/f.new" >"$MT/df/t/f" &&
	touch -r "$MT/df/f.new" "$MT/df/t/f" # same size and time, other bytes
chmod 600 "$MT/df/t/d/g" && ln -sf d/g "$MT/df/t/l" && rm "$MT/df/t/gone" && rm "$MT/df/t/h" && echo x >"$MT/df/t/h"
code 1 "diff of a changed tree: exit 1, as tar -d" "$Z" diff "$MT/df.zn" -C "$MT/df"
"$Z" diff "$MT/df.zn" -C "$MT/df" >"$MT/df.out" 2>&1
for w in "t/d/g: Mode differs" "t/f: Contents differ" "t/gone: Warning: Cannot stat: No such file or directory" \
	"t/h: Not linked to t/f" "t/l: Symlink differs"; do
	check "...names '$w'" grep -qxF "$w" "$MT/df.out"
done
check "...and nothing else (and the new file's time)" test "$(grep -vxF "t/h: Mod time differs" "$MT/df.out" | wc -l)" = 5
code 0 "diff of a PATTERN that did not change" "$Z" diff "$MT/df.zn" -C "$MT/df" t/u
code 2 "extract -X - with the ARCHIVE on standard input" sh -c '"$1" extract -X - - <"$2"' - "$Z" "$MT/exx.zn"
code 2 "a --mode chmod would refuse" "$Z" create -q -o "$MT/e.zn" --mode u+q t
code 2 "a date --mtime does not take" "$Z" create -q -o "$MT/e.zn" --mtime 2021-02-30 t
code 2 "--clamp-mtime without --mtime" "$Z" create -q -o "$MT/e.zn" --clamp-mtime t
set --

# ---- --strip-components: as tar; hardlinks follow their stripped targets, or get the content ------------------
K=$T/strip && mkdir -p "$K/in/pkg-1.0/src" "$K/in/pkg-1.0/doc" && echo main >"$K/in/pkg-1.0/src/main.c"
echo readme >"$K/in/pkg-1.0/README" && ln "$K/in/pkg-1.0/README" "$K/in/pkg-1.0/doc/README.hard"
ln -s ../README "$K/in/pkg-1.0/doc/link" && echo top >"$K/in/toplevel"
"$Z" create -q -o "$K/s.zn" -C "$K/in" .
code 0 "extract --strip-components 1" "$Z" extract -q --strip-components 1 "$K/s.zn" -C "$K/o1"
check "...drops the first component, and what has no more" test "$(cd "$K/o1" && find . | sort | tr '\n' ' ')" = \
	". ./README ./doc ./doc/README.hard ./doc/link ./src ./src/main.c "
check "...a hardlink to its stripped target" test "$(stat -c %h "$K/o1/doc/README.hard")" = 2
check "...a symlink as stored" test "$(readlink "$K/o1/doc/link")" = ../README
code 0 "--strip-components 2, the hardlink's target stripped away" \
	"$Z" extract -q --strip-components 2 "$K/s.zn" -C "$K/o2"
check "...gets the content instead" test "$(cat "$K/o2/README.hard")" = readme
mkdir -p "$K/g/z" && echo G >"$K/g/a" && ln "$K/g/a" "$K/g/z/b" && ln "$K/g/a" "$K/g/z/c"
"$Z" create -q -o "$K/g.zn" -C "$K/g" a z
code 0 "two hardlinks whose target is stripped away" "$Z" extract -q --strip-components 1 "$K/g.zn" -C "$K/o7"
check "...stay one file: the first gets the content, the other links to it" \
	test "$(stat -c '%h %i' "$K/o7/b")" = "$(stat -c '%h %i' "$K/o7/c")" -a "$(stat -c %h "$K/o7/b")" = 2 \
	-a "$(cat "$K/o7/c")" = G
code 0 "...the same when a PATTERN leaves the target out" "$Z" extract -q "$K/g.zn" -C "$K/o8" z
check "...(one file, two names)" test "$(stat -c %i "$K/o8/z/b")" = "$(stat -c %i "$K/o8/z/c")"
code 0 "a PATTERN matches the stored path" "$Z" extract -q --strip-components 2 "$K/s.zn" -C "$K/o3" pkg-1.0/src
check "...and the file lands stripped" test "$(cd "$K/o3" && find . | sort | tr '\n' ' ')" = ". ./main.c "
code 2 "--strip-components x" "$Z" extract --strip-components x "$K/s.zn" -C "$K/o4"
mkdir -p "$K/h/a" "$K/h/b" && echo AF >"$K/h/a/f" && ln "$K/h/a/f" "$K/h/b/f"
"$Z" create -q -o "$K/h.zn" -C "$K/h" a b
code 0 "a hardlink stripped onto its own target's name, with --overwrite" \
	"$Z" extract -q --overwrite --strip-components 1 "$K/h.zn" -C "$K/o5"
check "...leaves the file" test "$(cat "$K/o5/f")" = AF
mkdir -p "$K/c/p1" "$K/c/p2/x" "$K/c/q1/d" "$K/c/q2/d" && echo one >"$K/c/p1/x" && echo in >"$K/c/p2/x/in"
echo A >"$K/c/q1/d/f" && echo B >"$K/c/q2/d/f" && "$Z" create -q -o "$K/c.zn" -C "$K/c" p1 p2 q1 q2
code 0 "entries stripped onto one path: the last in the archive is extracted (as tar)" \
	"$Z" extract -q -T 4 --strip-components 1 "$K/c.zn" -C "$K/o6"
check "...a directory after a file, a file after a file" test "$(cat "$K/o6/x/in" "$K/o6/d/f")" = "$(printf 'in\nB')"

# ---- --skip-old-files: existing files and links are kept, silently; missing ones are extracted ----------------
O=$T/skipold && mkdir -p "$O/in/d" && echo new1 >"$O/in/d/a" && echo new2 >"$O/in/d/b" && ln -s a "$O/in/d/l"
head -c 300000 /dev/urandom >"$O/in/d/big"
"$Z" create -q --chunk-size 64K -o "$O/s.zn" -C "$O" in && "$Z" extract -q "$O/s.zn" -C "$O/x"
echo old >"$O/x/in/d/a" && echo oldbig >"$O/x/in/d/big" && rm "$O/x/in/d/b"
code 0 "extract --skip-old-files over an earlier extraction" "$Z" extract --skip-old-files "$O/s.zn" -C "$O/x"
check "...keeps the files there, fills in the missing one, names nothing" \
	test "$(cat "$O/x/in/d/a" "$O/x/in/d/big" "$O/x/in/d/b")$(wc -c <"$T/stderr")" = "$(printf 'old\noldbig\nnew2')0"
code 2 "--skip-old-files with --overwrite" "$Z" extract --skip-old-files --overwrite "$O/s.zn" -C "$O/x"
ln "$O/in/d/big" "$O/in/d/hl" && "$Z" create -q --chunk-size 64K -o "$O/s2.zn" -C "$O" in/d/big in/d/hl in/d/a
rm "$O/x/in/d/a" && mkdir "$O/x/in/d/a" "$O/x/in/d/hl" && chmod 700 "$O/x/in/d" && touch -d 1997-01-01 "$O/x/in/d"
code 0 "--skip-old-files passes over a directory where the archive has a file or hardlink" \
	sh -c '"$1" extract --skip-old-files "$2/s.zn" -C "$2/x" && "$1" extract --skip-old-files "$2/s2.zn" -C "$2/x"' \
	- "$Z" "$O"
check "...keeps them, and the existing directory's mode and time" test -d "$O/x/in/d/a" -a -d "$O/x/in/d/hl" \
	-a "$(stat -c %a-%Y "$O/x/in/d")" = "700-$(date -d 1997-01-01 +%s)"
"$Z" create -q --chunk-size 64K -o "$O/s3.zn" -C "$O" in/d/big
printf 'X' | dd of="$O/s3.zn" bs=1 seek=1000 conv=notrunc status=none # in big's first block
code 0 "--skip-old-files over a file whose blocks are damaged: they are not needed" \
	"$Z" extract --skip-old-files -T 4 "$O/s3.zn" -C "$O/x"
code 1 "...without it, the damage is named" "$Z" extract --overwrite -T 4 "$O/s3.zn" -C "$O/x"
check "...and the file that was there stays, with nothing left half-written beside it" \
	test "$(cat "$O/x/in/d/big")-$(find "$O/x" -name '.znippy-*' | wc -l)" = "oldbig-0"
cp "$O/s2.zn" "$O/s4.zn" && printf 'X' | dd of="$O/s4.zn" bs=1 seek=1000 conv=notrunc status=none
code 1 "a hardlink alone whose target's content is damaged" "$Z" extract "$O/s4.zn" -C "$O/y" in/d/hl
check "...is named as damaged" grep -q "in/d/hl: damaged in the archive (the content of its target)" "$T/stderr"
# A name the new file would be written under is taken (a stale one of an earlier process with the same
# pid): the next is used, the other file left alone; with every name taken the old file stays.
O=$T/stale && mkdir -p "$O/in" "$O/x" && echo new >"$O/in/f" && ln -s f "$O/in/l"
"$Z" create -q -o "$O/s.zn" -C "$O/in" f l && echo old >"$O/x/f" && echo oldl >"$O/x/l"
code 0 "extract --overwrite where its temporary name is taken" sh -c \
	'cd "$2/x" && touch .znippy-$$-0-0.part && exec "$1" extract -q --overwrite "$2/s.zn"' - "$Z" "$O"
check "...uses another, and leaves that file alone" \
	test "$(cat "$O/x/f")-$(readlink "$O/x/l")-$(ls -A "$O/x" | wc -l)" = "new-f-3"
rm "$O/x/.znippy-"* && echo old >"$O/x/f" && rm "$O/x/l" && echo oldl >"$O/x/l"
code 3 "...and where all of them are taken" sh -c 'cd "$2/x" && for i in 0 1; do touch .znippy-$$-0-$i.part &&
	for k in 1 2 3 4 5 6 7; do touch .znippy-$$-0-$i-$k.part; done; done &&
	exec "$1" extract -q --overwrite "$2/s.zn"' - "$Z" "$O"
check "...the file and the symlink are not replaced, the old ones kept" \
	test "$(cat "$O/x/f" "$O/x/l")-$(ls -A "$O/x" | wc -l)" = "$(printf 'old\noldl')-18"
check "...and says so, for both" sh -c 'grep -q "f: not replaced (the old file is kept): cannot create the new one beside it" "$1" &&
	grep -q "l: not replaced (the old file is kept)" "$1"' - "$T/stderr"

# ---- -o - into a file that already holds something (>>): refused, as the offsets would be wrong ---------------
echo junk >"$T/app.zn"
code 2 "create -o - appended to a file" sh -c '"$1" create -q -o - "$2" >>"$3"' - "$Z" "$L/l1" "$T/app.zn"
check "...says why" grep -q "already 5 bytes in: an archive must start at the beginning" "$T/stderr"
code 0 "...appended to an empty file it works" sh -c 'rm -f "$3"; "$1" create -q -o - "$2" >>"$3" &&
	"$1" verify -q "$3"' - "$Z" "$L/l1" "$T/app2.zn"

# ---- sparse output: zero runs are left as holes, and read back as the same bytes ------------------------------
S=$T/sparse && mkdir -p "$S/in" && truncate -s 5M "$S/in/holes" && printf 'head' | dd of="$S/in/holes" conv=notrunc status=none
printf 'mid' | dd of="$S/in/holes" bs=1 seek=3000000 conv=notrunc status=none
truncate -s 1500K "$S/in/tail" && printf 't' | dd of="$S/in/tail" conv=notrunc status=none
{ head -c 70000 /dev/urandom; head -c 200000 /dev/zero; printf 'x'; } >"$S/in/mixed"
"$Z" create -q -o "$S/s.zn" -C "$S" in
code 0 "extract a tree with zero runs" "$Z" extract -q "$S/s.zn" -C "$S/a"
code 0 "...and with --no-sparse" "$Z" extract -q --no-sparse "$S/s.zn" -C "$S/b"
check "...both give the same bytes" sh -c 'for f in holes tail mixed; do
	cmp "$1/in/$f" "$1/a/in/$f" && cmp "$1/in/$f" "$1/b/in/$f" || exit 1; done' - "$S"
truncate -s 1M "$S/probe"
if [ "$(stat -c %b "$S/probe")" -eq 0 ]; then # this file system has holes
	check "...the default leaves holes (5 MB file in under 200 KB)" \
		test $(($(stat -c '%b*%B' "$S/a/in/holes"))) -lt 200000
	check "...a zero tail is a hole too (1.5 MB in under 100 KB)" \
		test $(($(stat -c '%b*%B' "$S/a/in/tail"))) -lt 100000
	check "...--no-sparse writes every byte" test $(($(stat -c '%b*%B' "$S/b/in/holes"))) -ge 5242880
	mkdir -p "$S/z" && head -c 3000000 /dev/zero >"$S/z/zeros"
	"$Z" create -q --chunk-size 65537 -o "$S/z.zn" -C "$S" z && "$Z" extract -q "$S/z.zn" -C "$S/c"
	check "...also with chunks that are not multiples of 64 KiB" \
		test "$(stat -c %b "$S/c/z/zeros")" -eq 0 -a "$(stat -c %s "$S/c/z/zeros")" -eq 3000000
fi

# ---- index damage that costs rows only their mode, owner or time: listed, named, still extracted --------------
L=$T/lost
mkdir -p "$L/src/dir"
python3 - "$L/src/dir" <<'PY'
import os, random, sys
random.seed(5)
for i in range(3000):  # scattered times: the mtime column is stored raw, several index pages long
    p = os.path.join(sys.argv[1], "f%05d" % i)
    with open(p, "w") as f:
        f.write("file %d\n" % i)
    t = random.randrange(10**17, 10**18)
    os.utime(p, ns=(t, t))
PY
touch -d @1500000000 "$L/src/dir"
"$Z" create -q -o "$L/a.zn" -C "$L/src" dir
# flip a byte in an index page that lies wholly in one column (11 mtime, 5 uid), as FORMAT.md lays it out
flip_page() { # archive column-id out
	python3 - "$@" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
ixoff, ixsize = struct.unpack_from("<QQ", b, len(b) - 64)
ix = b[ixoff:ixoff + ixsize]
cols = []
for c in range(struct.unpack_from("<I", ix, 4)[0]):
    cid = struct.unpack_from("<I", ix, 64 + 32 * c)[0]
    off, size = struct.unpack_from("<QQ", ix, 64 + 32 * c + 8)
    cols.append((cid, off, size))
for p in range(1, (ixsize + 4095) // 4096):
    lo, hi = p * 4096, min((p + 1) * 4096, ixsize)
    if {c for c, o, s in cols if s and o < hi and o + s > lo} == {int(sys.argv[2])}:
        b[ixoff + lo + 100] ^= 1
        open(sys.argv[3], "wb").write(b)
        break
PY
}
flip_page "$L/a.zn" 11 "$L/t.zn"
code 1 "times lost to index damage: verify" "$Z" verify "$L/t.zn"
nt=$(grep -c '^znippy: dir/f[0-9]*: index damaged: its time cannot be read$' "$T/stderr")
check "...names each such file by its path ($nt)" test "$nt" -gt 0 -a "$nt" -lt 3000
code 1 "...extract" "$Z" extract "$L/t.zn" -C "$L/x"
check "...names the same files" test "$(grep -c ': index damaged: its time cannot be read$' "$T/stderr")" -eq "$nt"
check "...and extracts every file, the content right" diff -r "$L/src" "$L/x"
check "...those files with the time of the extraction, the others with their own" \
	test "$(find "$L/x/dir" -type f -newer "$L/t.zn" | wc -l)" -eq "$nt" -a \
	"$(find "$L/x/dir" -type f -newermt @100000000 ! -newermt @1000000000 | wc -l)" -eq $((3000 - nt))
lostone=$(grep -m1 ': index damaged: its time' "$T/stderr" | sed 's/^znippy: //; s/: index damaged.*//')
code 1 "...a PATTERN naming one extracts it" "$Z" extract "$L/t.zn" -C "$L/y" "$lostone"
check "...and nothing else" test "$(cd "$L/y" && find . -type f)" = "./$lostone"
code 0 "...--exclude leaves them out, untouched" "$Z" extract "$L/t.zn" -C "$L/z" --exclude 'f0*'
check "...(nothing extracted)" test -z "$(find "$L/z" -type f)"
code 1 "...list" "$Z" list "$L/t.zn"
check "...lists every path" test "$("$Z" list "$L/t.zn" 2>/dev/null | wc -l)" -eq 3001
check "...and says how many lost what, once" \
	test "$(cat "$T/stderr")" = "znippy: $L/t.zn: index damaged: $nt entries listed without the mode, owner, time or digest the index lost"
check "...list -l shows '?' for their times" \
	test "$("$Z" list -l "$L/t.zn" 2>/dev/null | grep -c '????-??-?? ??:?? dir/')" -eq "$nt"
check "...list --json leaves their times out" \
	test "$("$Z" list --json "$L/t.zn" 2>/dev/null | grep -vc mtime)" -eq "$nt"
# the same for the digest column (15, raw): the content is still checked by its blocks' XXH3
flip_page "$L/a.zn" 15 "$L/d.zn"
code 1 "digests lost to index damage: verify" "$Z" verify "$L/d.zn"
nd=$(grep -c '^znippy: dir/f[0-9]*: index damaged: its digest cannot be read$' "$T/stderr")
check "...names each such file by its path ($nd)" test "$nd" -gt 0 -a "$nd" -lt 3000
code 1 "...extract" "$Z" extract "$L/d.zn" -C "$L/xd"
check "...names the same files" \
	test "$(grep -c ': index damaged: its digest cannot be read$' "$T/stderr")" -eq "$nd"
check "...and extracts every file, the content right" diff -r "$L/src" "$L/xd"
code 1 "...extract --check-digest" "$Z" extract --check-digest "$L/d.zn" -C "$L/xc"
check "...leaves exactly those files out, as damaged" \
	test "$(find "$L/xc" -type f | wc -l)" -eq $((3000 - nd)) -a \
	"$(grep -c ': damaged in the archive; not extracted$' "$T/stderr")" -eq "$nd"
code 1 "...list" "$Z" list "$L/d.zn"
check "...lists every path" test "$("$Z" list "$L/d.zn" 2>/dev/null | wc -l)" -eq 3001
check "...list --json leaves their digests out (and the directory has none)" \
	test "$("$Z" list --json "$L/d.zn" 2>/dev/null | grep -vc sha256)" -eq $((nd + 1))
lostd=$("$Z" verify "$L/d.zn" 2>&1 | grep -m1 ': index damaged: its digest' | sed 's/^znippy: //; s/: index damaged.*//')
code 1 "...info checks the index pages" "$Z" info "$L/d.zn"
check "...and names the damage" grep -q "d.zn: index damaged: 1 of its [0-9]* pages do not match" "$T/stderr"
code 0 "...info of the undamaged archive" "$Z" info "$L/a.zn"
code 1 "...cat refuses such a file, saying why" "$Z" cat "$L/d.zn" "$lostd"
check "...(its digest cannot be read)" \
	test "$(cat "$T/stderr")" = "znippy: $lostd: index damaged: its digest cannot be read"
# COUNT directories d0000.. under DIR, each holding a file f, with scattered modes or (as root)
# owners, set-id files and 0750 directories: so that those columns are many index pages long.
scattered_tree() { # dir seed count modes|owners
	python3 - "$@" <<'PY'
import os, random, sys
top, seed, count, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
random.seed(seed)
for i in range(count):
    d = os.path.join(top, "d%04d" % i)
    os.makedirs(d)
    with open(d + "/f", "w") as f:
        f.write("x")
    if kind == "modes":
        os.chmod(d + "/f", random.randrange(0o400, 0o1000))
        os.chmod(d, random.randrange(0o700, 0o1000))
        continue
    for p, m in ((d + "/f", 0o4755), (d, 0o750)):
        os.chown(p, random.randrange(1000, 60000), random.randrange(1000, 60000))
        os.chmod(p, m)
PY
}
# the paths the last command named as having lost WHAT (mode, owner, time)
lost_paths() { sed -n "s/^znippy: \(.*\): index damaged: its $1 cannot be read\$/\1/p" "$T/stderr"; }
# Modes lost: a new directory gets 0755 and a file 0644 (less the umask, here none), an existing
# directory keeps its own.
scattered_tree "$L/md" 7 3000 modes
"$Z" create -q -o "$L/m.zn" -C "$L/md" . && flip_page "$L/m.zn" 4 "$L/mm.zn"
code 1 "modes lost to index damage: extract (umask 000)" \
	sh -c 'umask 000 && exec "$@"' sh "$Z" extract "$L/mm.zn" -C "$L/mx"
lost_paths mode >"$L/lostm.txt"
check "...named for files and directories alike" test "$(grep -c /f "$L/lostm.txt")" -gt 0 -a \
	"$(grep -vc /f "$L/lostm.txt")" -gt 0
check "...new directories 0755, files 0644" \
	test "$(cd "$L/mx" && xargs -d '\n' stat -c '%n %a' <"$L/lostm.txt" | grep -cv '/f 644$\|^d[0-9]* 755$')" -eq 0
(mkdir -p "$L/my" && cd "$L/my" && mkdir $(cd "$L/md" && echo d*) && chmod 0700 d*)
code 1 "...extract over existing directories" "$Z" extract "$L/mm.zn" -C "$L/my"
check "...which keep their own mode" \
	test "$(cd "$L/my" && grep -v /f "$L/lostm.txt" | xargs -d '\n' stat -c '%a' | sort -u)" = 700
# times lost, --no-overwrite-dir: existing directories were to get the archive's times, so the
# ones whose times were lost are named (exit 1)
flip_page "$L/m.zn" 11 "$L/mt.zn"
code 1 "times lost, existing directories, --no-overwrite-dir" "$Z" extract "$L/mt.zn" -C "$L/my" --no-overwrite-dir --exclude f
check "...named, directories among them" grep -q '^znippy: d[0-9]*: index damaged: its time cannot be read$' "$T/stderr"
if [ "$(id -u)" -eq 0 ]; then
	# Owner ids lost: what is left to root has no set-id bit, and an existing directory keeps its
	# owner (and gets its stored mode).
	scattered_tree "$L/own" 6 1500 owners
	"$Z" create -q -o "$L/o.zn" -C "$L/own" . && flip_page "$L/o.zn" 5 "$L/u.zn"
	(mkdir -p "$L/u" && cd "$L/u" && mkdir $(cd "$L/own" && echo d*) && chown 4321:4321 d* && chmod 0700 d*)
	code 1 "owners lost to index damage: extract as root" "$Z" extract "$L/u.zn" -C "$L/u"
	lost_paths owner >"$L/lost.txt"
	check "...lost for files and directories alike" test "$(grep -c /f "$L/lost.txt")" -gt 0 -a \
		"$(grep -vc /f "$L/lost.txt")" -gt 0
	check "...a set-id file among them is left to root, without its set-id bit; a directory keeps its owner" \
		test "$(cd "$L/u" && xargs -d '\n' stat -c '%n %u %a' <"$L/lost.txt" | grep -cv '/f 0 755$\|^d[0-9]* 4321 750$')" -eq 0
fi

# ---- layout: the index at a multiple of 64; archives from before that still read --------------------------------
"$Z" create -q -o "$T/al.zn" -C "$(dirname "$0")" cli_archive.sh
ioff=$(tail -c 64 "$T/al.zn" | od -An -t u8 -N 8 | tr -d ' ')
check "the index starts at a multiple of 64" test $((ioff % 64)) -eq 0
old=$(dirname "$0")/../fuzz/archive_reader/corpus/small.zn
ooff=$(tail -c 64 "$old" | od -An -t u8 -N 8 | tr -d ' ')
check "(the old archive's index is unaligned)" test $((ooff % 64)) -ne 0
code 0 "an archive from before the aligned index verifies" "$Z" verify "$old"

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed" | sed "s/^1 passed, 0 failed/cli_archive: all passed/"
[ "$fails" -eq 0 ]
