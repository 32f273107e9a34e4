#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_create.sh - `znippy create` end to end: determinism whatever the thread count,
# standard output and input, --exclude, the output file, inputs the format cannot hold, PATHs
# with '..', given twice, --files-from, --one-file-system, the index's alignment.
. "$(dirname "$0")/clitest_lib.sh"
make_tree

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


# ---- levels and threads: the library's limits, as zstd takes them ----------------------------------------------
code 0 "-l 20 without --ultra: as zstd, level 19" "$Z" create -o "$T/l20.zn" -l 20 -C "$S" hello.txt
check "...with a warning" grep -qx "znippy: warning: level 20 needs --ultra: level 19" "$T/stderr"
check "...and the archive says level 19" grep -q "zstd level 19 " <("$Z" info "$T/l20.zn")
code 0 "-q -l 22: no warning" "$Z" create -q -o "$T/l22.zn" -l 22 -C "$S" hello.txt
check "...(none)" test ! -s "$T/stderr"
code 0 "--ultra -l 22" "$Z" create -q --ultra -o "$T/u22.zn" -l 22 -C "$S" hello.txt numbers.txt
check "...the archive says level 22" grep -q "zstd level 22 " <("$Z" info "$T/u22.zn")
check "...and reads back" cmp <("$Z" cat "$T/u22.zn" numbers.txt) "$S/numbers.txt"
for l in 0 23 -1 x; do code 2 "-l $l" "$Z" create -q --ultra -o "$T/bad.zn" -l "$l" -C "$S" hello.txt; done
check "...named with the range" grep -qx "znippy create: invalid level 'x' (1..19, or 20..22 with --ultra)" "$T/stderr"
code 0 "-T 100000: more threads than the library runs count as its most" \
	"$Z" create -q -T 100000 -o "$T/tmany.zn" --chunk-size 64K -C "$S" .
check "...the same archive as -T 1" cmp "$T/t1.zn" "$T/tmany.zn"
code 0 "extract -T 100000" "$Z" extract -q -T 100000 "$T/tmany.zn" -C "$T/tmany"
code 0 "verify -T 100000" "$Z" verify -q -T 100000 "$T/tmany.zn"
for t in -1 1x 99999999999999999999; do code 2 "-T $t" "$Z" create -q -T "$t" -o "$T/bad.zn" -C "$S" hello.txt; done

# ---- a signal while OUT is written removes its temporary file, after -C too ---------------------------------
mkdir -p "$T/sigc" "$T/sigsrc" && head -c 16M /dev/urandom >"$T/sigsrc/big"
(cd "$T/sigc" && exec "$Z" create -q -l 19 -T 1 -o out.zn -C "$T/sigsrc" big) &
pid=$!
for i in $(seq 500); do ls -A "$T/sigc" | grep -q '^\.out\.zn\.' && break; sleep 0.01; done
if ls -A "$T/sigc" | grep -q '^\.out\.zn\.'; then
	kill -TERM $pid
	wait $pid
	check "SIGTERM during create -o OUT -C DIR: exit by the signal" test $? -eq 143
	check "...and no temporary file or OUT left" test -z "$(ls -A "$T/sigc")"
else
	wait $pid
	echo "SKIPPED: SIGTERM during create (it finished before its temporary file was seen)"
fi

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
	# Every digest stored (--digest-min-size 0): 3,000 empty files whose index does not fit.
	mkdir -p "$O/many" && for i in $(seq 3000); do : >"$O/many/f$i"; done
	dd if=/dev/zero of="$O/mnt/fill" bs=1k count=188 2>/dev/null
	printf 'good\n' >"$O/mnt/b.zn"
	"$Z" create -q --digest-min-size 0 -o "$O/mnt/b.zn" -C "$O" many 2>"$T/stderr"
	check "disk full while writing the index: exit 3" test $? -eq 3
	check "disk full: the message says why" grep -q 'No space left' "$T/stderr"
	check "disk full: the old archive is untouched" test "$(cat "$O/mnt/b.zn")" = good
	check "disk full: no temporary file left" test "$(ls -A "$O/mnt" | tr '\n' ' ')" = "b.zn fill "
	# Extracting onto a full disk: the first failed write cancels the rest (one message per
	# worker at most, not one per remaining file), and no file is left half-written. --force:
	# past the check of free space (cli_space.sh), which refuses this before any write.
	rm -f "$O/mnt/fill" "$O/mnt/b.zn"
	mkdir -p "$O/full" && for i in $(seq 400); do head -c 1000 /dev/urandom >"$O/full/f$i"; done
	ln -s f1 "$O/full/zlink" && : >"$O/full/zempty" # made after the data: never reached
	"$Z" create -q -o "$O/full.zn" -C "$O" full
	"$Z" extract -v --force -T 2 "$O/full.zn" -C "$O/mnt/x" >"$T/listed" 2>"$T/stderr"
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


# ---- -o - into a file that already holds something (>>): refused, as the offsets would be wrong ---------------
echo junk >"$T/app.zn"
code 2 "create -o - appended to a file" sh -c '"$1" create -q -o - "$2" >>"$3"' - "$Z" "$L/l1" "$T/app.zn"
check "...says why" grep -q "already 5 bytes in: an archive must start at the beginning" "$T/stderr"
code 0 "...appended to an empty file it works" sh -c 'rm -f "$3"; "$1" create -q -o - "$2" >>"$3" &&
	"$1" verify -q "$3"' - "$Z" "$L/l1" "$T/app2.zn"


# ---- layout: the index at a multiple of 64; archives from before that still read --------------------------------
"$Z" create -q -o "$T/al.zn" -C "$(dirname "$0")" "$(basename "$0")"
ioff=$(tail -c 64 "$T/al.zn" | od -An -t u8 -N 8 | tr -d ' ')
check "the index starts at a multiple of 64" test $((ioff % 64)) -eq 0
old=$(dirname "$0")/../fuzz/archive_reader/corpus/small.zn
ooff=$(tail -c 64 "$old" | od -An -t u8 -N 8 | tr -d ' ')
check "(the old archive's index is unaligned)" test $((ooff % 64)) -ne 0
code 0 "an archive from before the aligned index verifies" "$Z" verify "$old"

finish
