#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_extract.sh - `znippy extract` end to end: the tree comes back exactly; write errors,
# a file where a directory goes, EFBIG, signals and a truncated archive, --strip-components,
# --skip-old-files and --overwrite, sparse output.
. "$(dirname "$0")/clitest_lib.sh"
make_tree

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
nkept=$(find "$S" ! -type d -printf . | wc -c)
check "...saying in one line how many it kept ($nkept), and what to do, not a line each" test "$(cat "$T/stderr")" = \
	"znippy: $nkept existing files and links were kept, not overwritten (use --overwrite to replace them, or --skip-old-files to keep them without an error; -v names each)
znippy: $A: not everything could be extracted (see above)"
code 3 "...with -v" "$Z" extract -v "$A" -C "$O"
check "...names each, then says how many" sh -c 'test "$(grep -c ": not overwritten: File exists (use --overwrite)$" "$1")" = "$2" &&
	grep -qx "znippy: $2 existing files and links were kept, not overwritten (use --overwrite to replace them, or --skip-old-files to keep them without an error)" "$1"' \
	- "$T/stderr" "$nkept"
code 3 "...with -k" "$Z" extract -k "$A" -C "$O"
check "...says how many, without the hint -k asked not to take" \
	grep -qx "znippy: $nkept existing files and links were kept, not overwritten (-k; -v names each)" "$T/stderr"
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
# cat --offset/--length: byte ranges of a file over several 64 KiB blocks, as tail | head gives them
ok=1
for r in "0 10" "65530 20" "100000 200000" "1288000 500" "1288890 100" "5000000 1"; do
	set -- $r
	cmp -s <("$Z" cat --offset="$1" --length="$2" "$A" numbers.txt) \
		<(tail -c +$(($1 + 1)) "$S/numbers.txt" | head -c "$2") || { ok=0; echo "range $r differs"; }
done
check "cat --offset --length: the bytes of each range" [ $ok = 1 ]
check "cat --offset alone: to the end" cmp <("$Z" cat --offset=1M "$A" numbers.txt) <(tail -c +1048577 "$S/numbers.txt")
code 2 "cat --length that is not a size" "$Z" cat --length=x "$A" numbers.txt
code 0 "extract of a copy alone" "$Z" extract -q "$A" -C "$T/copyonly" z-copy-of-rand40k
check "the copy alone is whole" cmp "$T/copyonly/z-copy-of-rand40k" "$S/rand40k"
check "and its original was not extracted" test ! -e "$T/copyonly/rand40k"
mkdir -p "$T/chain"
code 0 "extract -C A -C B: into A/B, as tar" "$Z" extract -q "$A" -C "$T/chain" -C sub hello.txt
check "...there" cmp "$T/chain/sub/hello.txt" "$S/hello.txt"
code 0 "diff -C A -C B" "$Z" diff "$A" -C "$T/chain" -C sub hello.txt


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


# ---- a file too large for the target (EFBIG) is named and skipped; the others are extracted ------------
F=$T/fbig
mkdir -p "$F/s" && head -c 300000 /dev/urandom >"$F/s/a_big" && for i in 1 2 3; do echo "$i" >"$F/s/m$i"; done
"$Z" create -q -o "$F/a.zn" --chunk-size 64K -C "$F" s # a_big's blocks come first
(ulimit -f 100; "$Z" extract -T 1 "$F/a.zn" -C "$F/x" >/dev/null 2>"$T/stderr"; echo $? >"$F/rc")
check "a file over the file size limit: exit 3" test "$(cat "$F/rc")" = 3
check "...named" grep -q "s/a_big: write failed: File too large" "$T/stderr"
check "...and the others are extracted" test "$(cat "$F/x/s/m1" "$F/x/s/m3" | tr -d '\n')" = 13
check "...while it is not left half-written" test ! -e "$F/x/s/a_big"


O=$T/osrc
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

finish
