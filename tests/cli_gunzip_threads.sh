#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_gunzip_threads.sh - `znippy gunzip -T N`: the same bytes at every thread count, from files
# and pipes, for the output of every gzip compressor installed (gzip -1..-9, pigz, pigz -i, igzip
# -0..-3, libdeflate-gzip -1..-12, bgzip, 7-Zip, zopfli), on text, binaries, random data, int64
# columns and empty input, several members and every header field; and on damaged files the same
# output, messages and exit status as -T1.
. "$(dirname "$0")/clitest_lib.sh"
cd "$T" || exit 1
# Small pieces, so that files of a few MB are many of them (a test hook of the command).
export ZN_GUNZIP_CHUNK=65536
# QUICK: a quarter of the data (still many pieces), two thread counts and a pipe, the extra
# levels and half the damage left out.
python3 - "$QUICK" <<'PY'
import os, random, struct, sys
q = 4 if sys.argv[1] == "1" else 1
r = random.Random(32)
words = [w.encode() for w in "the of and to in parallel gzip window marker block huffman stream".split()]
with open("text", "wb") as f:
    f.write(b" ".join(r.choice(words) for _ in range(300000 // q)))
with open("int64", "wb") as f:
    v = 1000
    for i in range(200000 // q):
        if r.random() < 0.02:
            v += r.randrange(1000)
        f.write(struct.pack("<q", v))
with open("random", "wb") as f:
    f.write(os.urandom(1000000 // q))
open("empty", "wb").close()
PY
# Binaries: the machine's own shared objects, about 3 MB of them.
find /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu -maxdepth 1 -name '*.so*' -type f 2>/dev/null |
	sort | head -n 40 | xargs cat 2>/dev/null | head -c $((2000000 >> 2 * QUICK)) >bin

# same FILE.gz ORIG: every -T from a file, and from a pipe, gives ORIG exactly.
same() {
	local gz=$1 orig=$2 t
	for t in 1 2 4; do
		[ "$QUICK$t" = 12 ] && continue
		"$Z" zcat -T$t "$gz" 2>"$T/err" | cmp -s - "$orig" || { fail "$gz: -T$t: $(cat "$T/err")"; return; }
	done
	[ "$QUICK" = 1 ] || "$Z" zcat -T3 <"$gz" | cmp -s - "$orig" || { fail "$gz: -T3 from standard input"; return; }
	cat "$gz" | "$Z" zcat -T2 | cmp -s - "$orig" || { fail "$gz: -T2 from a pipe"; return; }
	pass "$gz"
}
have() { command -v "$1" >/dev/null; }
for d in text bin random int64 empty; do
	for l in 1 9; do gzip -$l -c $d >$d.gzip$l.gz && same $d.gzip$l.gz $d; done
	if have pigz; then
		pigz -c $d >$d.pigz.gz && same $d.pigz.gz $d
		pigz -i -c $d >$d.pigzi.gz && same $d.pigzi.gz $d
	fi
	if have igzip; then
		for l in 0 1 2 3; do igzip -$l -c $d >$d.igzip$l.gz && same $d.igzip$l.gz $d; done
	fi
	if have libdeflate-gzip; then
		for l in 1 12; do libdeflate-gzip -$l -c $d >$d.libdeflate$l.gz && same $d.libdeflate$l.gz $d; done
	fi
	have bgzip && bgzip -c $d >$d.bgz && same $d.bgz $d
	have 7zz && 7zz a -tgzip -mx=9 -si -so dummy <$d >$d.7z.gz 2>/dev/null && same $d.7z.gz $d
done
# The other gzip and libdeflate levels, on text.
[ "$QUICK" = 1 ] || for l in 2 3 4 5 6 7 8; do gzip -$l -c text >text.gzip$l.gz && same text.gzip$l.gz text; done
if have libdeflate-gzip && [ "$QUICK" = 0 ]; then
	for l in 2 3 4 5 6 7 8 9 10 11; do
		libdeflate-gzip -$l -c text >text.libdeflate$l.gz && same text.libdeflate$l.gz text
	done
fi
# zopfli is slow: on a part of the text.
if have zopfli; then
	head -c 300000 text >text300k && zopfli -c text300k >text300k.zopfli.gz && same text300k.zopfli.gz text300k
fi
# Several members, of different compressors, and every header field (FTEXT, FHCRC, FEXTRA with a
# BGZF field, FNAME, FCOMMENT) in a member of its own.
cat text.gzip6.gz bin.gzip1.gz random.gzip9.gz int64.gzip1.gz >multi.gz && cat text bin random int64 >multi && same multi.gz multi
python3 - <<'PY'
import struct, zlib
def member(data, flags):
    h = bytearray(b"\x1f\x8b\x08" + bytes([flags]) + b"\x01\x02\x03\x04\x00\x03")
    if flags & 4:
        extra = b"AB\x02\x00xyBC\x02\x00\x00\x00"
        h += struct.pack("<H", len(extra)) + extra
    if flags & 8:
        h += b"stored-name.txt\x00"
    if flags & 16:
        h += b"a comment\x00"
    if flags & 2:
        h += struct.pack("<H", zlib.crc32(bytes(h)) & 0xFFFF)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return bytes(h) + c.compress(data) + c.flush() + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
text = open("text", "rb").read()[:400000]
out = b"".join(member(text[i * 20000:(i + 1) * 20000], f) for i, f in enumerate([0, 1, 2, 4, 8, 16, 31, 30, 3, 24]))
open("fields.gz", "wb").write(out)
open("fields", "wb").write(text[:200000])
PY
same fields.gz fields

# Damaged files: the same output, messages and exit status at every -T as at -T1.
damaged() { # NAME: compare -T1 with -T2 and -T4, from the file and from standard input
	local f=$1 t want got
	"$Z" zcat -T1 "$f" >"$T/want.out" 2>"$T/want.err"
	want=$?
	for t in 2 3; do
		[ "$QUICK$t" = 12 ] && continue
		"$Z" zcat -T$t "$f" >"$T/got.out" 2>"$T/got.err"
		got=$?
		if [ $got != $want ] || ! cmp -s "$T/got.out" "$T/want.out" || ! cmp -s "$T/got.err" "$T/want.err"; then
			fail "$f at -T$t: exit $got (want $want), $(cat "$T/got.err") (want $(cat "$T/want.err"))"
			return
		fi
	done
	"$Z" zcat -T2 <"$f" >"$T/got.out" 2>"$T/got.err"
	got=$?
	sed "s|$f|NAME|" "$T/want.err" >"$T/want.err2"
	sed "s|(stdin)|NAME|" "$T/got.err" >"$T/got.err2"
	if [ $got != $want ] || ! cmp -s "$T/got.out" "$T/want.out" || ! cmp -s "$T/got.err2" "$T/want.err2"; then
		fail "$f from standard input at -T2: exit $got (want $want), $(cat "$T/got.err")"
		return
	fi
	pass "$f: exit $want, $(head -c 120 "$T/want.err")"
}
python3 - "$QUICK" <<'PY'
import os, random, sys
r = random.Random(7)
quick = sys.argv[1] == "1"
for name in ["text.gzip6.gz", "bin.gzip9.gz", "multi.gz", "text.pigzi.gz", "text.bgz",
             "text.igzip0.gz"]:
    if not os.path.exists(name):  # (pigz, bgzip or igzip not installed)
        continue
    d = bytearray(open(name, "rb").read())
    n = len(d)
    for k in range(2 if quick else 4):
        b = bytearray(d)
        at = r.randrange(n)
        b[at] ^= 1 << r.randrange(8)
        open(f"flip{k}-{name}", "wb").write(b)
    open(f"cut-{name}", "wb").write(d[: r.randrange(n)])
    open(f"garbage-{name}", "wb").write(d + b"trailing garbage")
    crc = bytearray(d)
    crc[-8] ^= 0x55
    open(f"crc-{name}", "wb").write(crc)
    isz = bytearray(d)
    isz[-1] ^= 0x01
    open(f"isize-{name}", "wb").write(isz)
    # A member in the middle with a bad CRC, between good ones.
    open(f"midcrc-{name}", "wb").write(bytes(d) + bytes(crc) + bytes(d))
PY
for f in flip*.gz cut-*.gz garbage-*.gz crc-*.gz isize-*.gz midcrc-*.gz; do damaged "$f"; done
finish
