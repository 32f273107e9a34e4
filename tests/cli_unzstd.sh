#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_unzstd.sh - znippy unzstd and zstdcat against zstd -d: the output of every kind of zstd
# file (levels --fast=5 to --ultra -22, --long, --no-check, -T0 and --rsyncable, piped, skippable
# frames, several frames, dictionaries) is zstd -dc's; damaged files are refused as zstd refuses
# them, naming the file, leaving no output file; and zstd's file conventions.
. "$(dirname "$0")/clitest_lib.sh"
if ! command -v zstd >/dev/null; then
	echo "$TEST_NAME: zstd not found, skipped"
	exit 0
fi
cd "$T" || exit 1

# Corpora: text, binary code, random bytes, zeros, and int64 columns (runs and deltas).
seq 1 150000 >text
head -c 400000 "$Z" >binary
head -c 200000 /dev/urandom >random
head -c 300000 /dev/zero >zeros
python3 - <<'PY'
import random, struct
r = random.Random(36)
runs, deltas, v = bytearray(), bytearray(), 0
while len(runs) < 800000:
    runs += struct.pack("<q", r.randrange(1 << 40)) * r.randrange(1, 40)
for i in range(100000):
    v += r.randrange(0, 1000)
    deltas += struct.pack("<q", v)
open("int64_runs", "wb").write(runs)
open("int64_deltas", "wb").write(deltas)
PY
CORPORA="text binary random zeros int64_runs int64_deltas"

# same_as_zstd DESCRIPTION FILE [OPTIONS...]: unzstd -c OPTIONS FILE gives zstd -dc's bytes and
# exit status (0 or not).
same_as_zstd() {
	local d=$1 f=$2
	shift 2
	zstd -dcq "$@" "$f" >want 2>/dev/null
	local zrc=$?
	"$Z" unzstd -c "$@" "$f" >got 2>"$T/stderr"
	local rc=$?
	if [ $((zrc != 0)) -eq $((rc != 0)) ] && { [ $rc -ne 0 ] || cmp -s want got; }; then
		pass "$d"
	else
		fail "$d: exit $rc (zstd $zrc), outputs $(cmp -s want got && echo same || echo differ)"
		cat "$T/stderr"
	fi
}

for c in $CORPORA; do
	levels="--fast=5 -1 -3 -9 -19"
	[ "$c" = text ] || [ "$c" = int64_deltas ] && levels="$levels --ultra_-22"
	[ "$QUICK" = 1 ] && levels="--fast=5 -3 -19" # QUICK: three levels, a smaller big file
	for lv in $levels; do
		lv=${lv/_/ }
		# shellcheck disable=SC2086
		zstd -q -f $lv "$c" -o "$c.zst"
		same_as_zstd "$c at $lv" "$c.zst"
	done
	zstd -q -f --no-check "$c" -o "$c.nc.zst"
	same_as_zstd "$c, --no-check" "$c.nc.zst"
	zstd -q -c <"$c" >"$c.piped.zst" # no content size
	same_as_zstd "$c, piped (no content size)" "$c.piped.zst"
done

# Multithreaded and rsyncable output, big enough for several jobs.
for i in $(seq 1 $((10 - 7 * QUICK))); do cat text binary int64_runs; done >big
zstd -q -f -T0 -1 big -o big.mt.zst
same_as_zstd "big, -T0" big.mt.zst
zstd -q -f -T2 --rsyncable -3 big -o big.rs.zst
same_as_zstd "big, -T2 --rsyncable" big.rs.zst
check "...which is the original" cmp -s got big

# --long: a window over the default limit (128 MiB) is refused without --long or --memory.
zstd -q -c --long=28 <text >long28.zst
same_as_zstd "--long=28 output, no limit given: refused" long28.zst
same_as_zstd "--long=28 output with --long=28" long28.zst --long=28
same_as_zstd "--long=28 output with --memory=256MB" long28.zst --memory=256MB
"$Z" unzstd -c long28.zst >/dev/null 2>err
check "...the message names the file and the way out" grep -q 'long28.zst.*--long' err
zstd -q -c --long=27 <random >long27.zst
same_as_zstd "--long=27 output" long27.zst
same_as_zstd "-M1K: the limit refuses a 2^27 window" long27.zst -M1K
code 2 "--long=32: usage error" "$Z" unzstd -c --long=32 long27.zst

# Several frames, skippable frames between them and around them.
skippable() { # magic nibble, payload
	python3 -c 'import struct,sys; p=sys.argv[2].encode(); sys.stdout.buffer.write(struct.pack("<II", 0x184D2A50 + int(sys.argv[1]), len(p)) + p)' "$@"
}
{
	skippable 0 "hello"
	cat text.zst
	skippable 15 ""
	cat random.nc.zst zeros.piped.zst
	skippable 7 "at the end"
} >multi.zst
same_as_zstd "several frames and skippable frames" multi.zst
check "...which is the files one after another" sh -c 'cat text random zeros | cmp -s - got'
skippable 3 "only this" >skip-only.zst
same_as_zstd "a skippable frame alone" skip-only.zst

# Dictionaries: trained (zstd's format) and raw content.
mkdir samples
for i in $(seq 1 300); do printf 'record %d: name=user%d; value=%d; flags=%s\n' "$i" $((i * 7)) $((i * i)) \
	"$(seq -s, $((i % 9)) $((i % 9 + 5)))" >"samples/$i"; done
zstd -q --train samples/* -o dict --maxdict=4096
seq 1 300 | sed 's/^/record /' >small
zstd -q -f -D dict small -o small.dict.zst
same_as_zstd "a trained dictionary" small.dict.zst -D dict
same_as_zstd "...without it: refused" small.dict.zst
head -c 3000 text >rawdict
zstd -q -f -D rawdict small -o small.raw.zst
same_as_zstd "a raw-content dictionary" small.raw.zst -D rawdict
code 1 "...the wrong dictionary for a frame that names its ID" "$Z" unzstd -c -D rawdict small.dict.zst
code 3 "a missing -D file" "$Z" unzstd -c -D nonexistent small.dict.zst

# Damage: refused as zstd refuses it, the file named, no output file left.
python3 - <<'PY'
b = open("text.zst", "rb").read()
open("cut.zst", "wb").write(b[: len(b) // 2])
m = bytearray(b)
m[len(m) // 2] ^= 0x55
open("flipped.zst", "wb").write(m)
c = bytearray(b)
c[-1] ^= 1  # the content checksum
open("badsum.zst", "wb").write(c)
open("garbage.zst", "wb").write(b + b"garbage!")
open("notzstd.zst", "wb").write(b"this is not zstd data\n")
open("empty.zst", "wb").write(b"")
PY
for f in cut flipped badsum garbage notzstd empty; do
	same_as_zstd "damaged: $f" $f.zst
	code 1 "...unzstd $f.zst: exit 1" "$Z" unzstd $f.zst
	check "...names the file" grep -q "$f.zst" "$T/stderr"
	check "...leaves no output file" test ! -e $f
	check "...nor a temporary one" sh -c '! ls -A | grep -q "^\.'$f'\."'
	code 1 "...unzstd -o OUT: exit 1" "$Z" unzstd $f.zst -o out-$f
	check "...leaves no OUT" test ! -e out-$f
done
"$Z" unzstd -c badsum.zst >got 2>/dev/null
check "-c keeps what was written before the damage was found (a bad checksum: all of it)" \
	cmp -s got text

# zstd's file conventions.
mkdir conv && cd conv || exit 1
cp ../text.zst t.zst && touch -d '2001-02-03 04:05:06' t.zst && chmod 640 t.zst
code 0 "unzstd FILE.zst" "$Z" unzstd t.zst
check "...gives FILE" cmp -s t ../text
check "...with FILE.zst's mode" test "$(stat -c %a t)" = 640
check "...and time" test "$(stat -c %Y t)" = "$(stat -c %Y t.zst)"
check "...keeps FILE.zst (zstd's default)" test -e t.zst
check "...names it and its size on standard error" grep -q "^t.zst *: $(stat -c %s t) bytes" "$T/stderr"
printf 'keep me\n' >t
code 1 "an existing output without -f" "$Z" unzstd t.zst
check "...is left alone" grep -q 'keep me' t
code 0 "-f overwrites it" "$Z" unzstd -f t.zst
check "...with the output" cmp -s t ../text
rm t
code 0 "--rm" "$Z" unzstd -q --rm t.zst
check "...removes FILE.zst" test ! -e t.zst
check "...-q says nothing" test ! -s "$T/stderr"
cp ../random.zst r.zst && cp ../zeros.zst z.tzst
code 0 "-c --rm keeps the input (as zstd)" "$Z" unzstd -c --rm r.zst
check "...r.zst still there" test -e r.zst
code 0 "FILE.tzst" "$Z" unzstd z.tzst
check "...gives FILE.tar" cmp -s z.tar ../zeros
cp ../text.zst plain
code 1 "an unknown suffix" "$Z" unzstd plain
code 0 "...is decoded with -o" "$Z" unzstd plain -o plain.out
check "...to OUT" cmp -s plain.out ../text
code 0 "-o OUT of several FILEs" "$Z" unzstd r.zst plain -o both
check "...is them one after another" sh -c 'cat ../random ../text | cmp -s - both'
code 0 "-c of several FILEs" sh -c '"$1" unzstd -c r.zst plain >cat2' - "$Z"
check "...is them one after another" sh -c 'cat ../random ../text | cmp -s - cat2'
code 0 "zstdcat" sh -c '"$1" zstdcat r.zst >zc' - "$Z"
check "...is unzstd -c" cmp -s zc ../random
code 0 "standard input to standard output" sh -c '"$1" unzstd <r.zst >si' - "$Z"
check "...decoded" cmp -s si ../random
code 0 "- is standard input" sh -c 'cat r.zst | "$1" unzstd -c - >si2' - "$Z"
check "...decoded" cmp -s si2 ../random
code 0 "-t" "$Z" unzstd -t r.zst plain
check "...writes nothing" test ! -e r
code 1 "-t of a damaged file" "$Z" unzstd -t ../flipped.zst
code 1 "one damaged FILE of several: exit 1" "$Z" unzstd -c r.zst ../cut.zst
code 3 "a missing FILE: exit 3" "$Z" unzstd missing.zst
ln -s r.zst link.zst
code 1 "a symlink without -f is passed over" "$Z" unzstd link.zst
check "...no output" test ! -e link
code 0 "...with -f decoded" "$Z" unzstd -f link.zst
check "...as its target" cmp -s link ../random
code 0 "-dcf and -T0 accepted" sh -c '"$1" unzstd -dcf -T0 r.zst >opt' - "$Z"
check "...decoded" cmp -s opt ../random
code 2 "an unknown option" "$Z" unzstd --bogus r.zst
code 2 "-c and -o" "$Z" unzstd -c -o x r.zst
code 0 "--help" "$Z" unzstd --help
code 0 "-V" "$Z" zstdcat -V
cd .. || exit 1

finish
