#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_gunzip_index.sh - `znippy gunzip --export-index` / `--import-index --offset --length`: random reads
# through an index give exactly the bytes at those offsets (compared with tail | head of the
# decoded file), for a single member (gzip -6, -1), pigz (members and flushes) and several
# members; an index is refused for another file, a damaged index is refused, and the usage errors.
. "$(dirname "$0")/clitest_lib.sh"
cd "$T" || exit 1
# QUICK: 7 MB of text (one checkpoint past the first at 4 MiB) instead of 18, 4 random reads
# per file instead of 12.
python3 - "$QUICK" <<'PY'
import random, sys
r = random.Random(3)
words = [w.encode() for w in "random access gzip index checkpoint window of the block".split()]
with open("text", "wb") as f:
    f.write(b" ".join(r.choice(words) + str(r.randrange(100000)).encode() for _ in range(600000 if sys.argv[1] == "1" else 1500000)))
PY
size=$(stat -c %s text)
gzip -6 -c text >t6.gz
gzip -1 -c text >t1.gz
{ head -c 3000000 text | gzip -c; tail -c +3000001 text | gzip -9 -c; } >tm.gz
command -v pigz >/dev/null && pigz -i -c text >tp.gz
# range GZ IDX OFFSET [LENGTH]: the read through the index is tail | head of the text
range() {
	local gz=$1 idx=$2 off=$3 len=${4:-} want got
	if [ -n "$len" ]; then
		"$Z" zcat --import-index "$idx" --offset "$off" --length "$len" "$gz" >got 2>err
	else
		"$Z" gunzip --import-index "$idx" --offset "$off" "$gz" >got 2>err
	fi
	got=$?
	if [ -n "$len" ]; then tail -c +$((off + 1)) text | head -c "$len" >want; else tail -c +$((off + 1)) text >want; fi
	if [ $got != 0 ] || ! cmp -s got want; then
		fail "$gz: offset $off length ${len:-all}: exit $got $(cat err)"
		return 1
	fi
}
for gz in t6.gz t1.gz tm.gz tp.gz; do
	[ -e $gz ] || continue
	"$Z" gunzip --export-index $gz.idx $gz || fail "$gz: --export-index"
	ok=1
	for off in 0 1 4194303 4194304 4194305 2999999 3000000 3000001 $((size - 1)) $size $((size + 5)); do
		range $gz $gz.idx $off 100000 || ok=0
	done
	for i in $(seq 1 $((12 - 8 * QUICK))); do
		range $gz $gz.idx $(((RANDOM * 32768 + RANDOM) % size)) $((RANDOM % 70000)) || ok=0
	done
	range $gz $gz.idx 7777777 || ok=0
	range $gz $gz.idx 0 || ok=0
	[ $ok = 1 ] && pass "$gz: random reads through the index"
done
# -t reads and checks, writes nothing; -o writes the range to a file
"$Z" gunzip -t --import-index t6.gz.idx --offset 100 --length 10 t6.gz >out && [ ! -s out ] || fail "-t writes nothing"
"$Z" gunzip --import-index t6.gz.idx --offset 100 --length 10 -o r.out t6.gz && cmp r.out <(tail -c +101 text | head -c 10) ||
	fail "-o OUT"
# an index is refused for another file, for a damaged index, and the usage errors
code 1 "an index for another file" "$Z" zcat --import-index t1.gz.idx --offset 5 --length 5 t6.gz
grep -q "not the file the index" "$T/stderr" || fail "its message: $(cat "$T/stderr")"
cp t6.gz.idx bad.idx && printf '\x55' | dd of=bad.idx bs=1 seek=100 conv=notrunc 2>/dev/null
code 1 "a damaged index" "$Z" zcat --import-index bad.idx t6.gz
head -c 200 t6.gz.idx >cut.idx
code 1 "a cut index" "$Z" zcat --import-index cut.idx t6.gz
code 1 "not an index" "$Z" zcat --import-index text t6.gz
code 2 "an existing index is not overwritten without -f" "$Z" gunzip --export-index t6.gz.idx t6.gz
code 0 "... with -f it is" "$Z" gunzip -f --export-index t6.gz.idx t6.gz
code 1 "--offset without --import-index" "$Z" zcat --offset 5 t6.gz
code 1 "--import-index from standard input" "$Z" zcat --import-index t6.gz.idx
code 1 "two FILEs" "$Z" zcat --import-index t6.gz.idx t6.gz t1.gz
code 1 "--export-index and --import-index" "$Z" zcat --export-index x --import-index t6.gz.idx t6.gz
code 1 "--offset that is not a number" "$Z" zcat --import-index t6.gz.idx --offset 1x t6.gz
head -c 100000 t6.gz >cut.gz
code 1 "--export-index of a damaged file" "$Z" gunzip --export-index cut.idx2 cut.gz
[ -e cut.idx2 ] && fail "an index of a damaged file was left"
{ cat t1.gz; echo garbage; } >g.gz
code 2 "--export-index of a file with trailing garbage: a warning" "$Z" gunzip --export-index g.idx g.gz
range g.gz g.idx 123456 1000 && pass "... and the index reads it"
finish
