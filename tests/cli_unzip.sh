#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_unzip.sh - `znippy unzip` against Info-ZIP unzip: the same trees (names, kinds, bytes, modes,
# symlink targets) and the same -Z1 / -l names, on archives from Info-ZIP zip, 7-Zip, bsdtar,
# Python (ZIP64, data descriptors), a self-extracting stub, an empty zip, Debian jars and wheels;
# then hostile and damaged archives: nothing outside the target, documented exit status.
# Tools missing here (7zz, bsdtar) skip their part with a note. Seeded: ZN_TEST_SEED.
. "$(dirname "$0")/clitest_lib.sh"
SEED=${ZN_TEST_SEED:-$RANDOM}
echo "seed $SEED"
command -v unzip >/dev/null && command -v zip >/dev/null && command -v python3 >/dev/null || {
	echo "SKIP: needs zip, unzip and python3"
	exit 0
}
cd "$T"
umask 022
# The tree: files of several sizes and modes, an empty directory, UTF-8 names, symlinks.
mkdir -p src/sub/deeper src/empty "src/with space"
seq 1 100000 >src/numbers.txt
head -c 200000 /dev/urandom >src/random.bin
printf 'hello\n' >src/hello.txt
: >src/sub/empty-file
printf 'x\n' >"src/with space/f g.txt"
printf 'utf8\n' >"src/sub/h$(printf '\xc3\xa9')llo-$(printf '\xe2\x82\xac').txt"
printf '#!/bin/sh\n' >src/sub/run.sh && chmod 755 src/sub/run.sh
printf 'secret\n' >src/sub/deeper/private && chmod 600 src/sub/deeper/private
ln -s hello.txt src/link
ln -s ../numbers.txt src/sub/uplink
chmod 750 src/sub/deeper

# sig DIR: one line per path: kind, mode (not for links), size and digest or link target.
# (One process per tree: a stat and an md5sum per file took most of the test's time on jars.)
sig() {
	python3 - "$1" <<'PY'
import hashlib, os, stat, sys
os.chdir(sys.argv[1])
paths = []
for d, dirs, files in os.walk(b"."):
    paths += [os.path.join(d, n) for n in dirs + files]
out = sys.stdout.buffer
for p in sorted(paths):
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        out.write(p + b" L " + os.readlink(p) + b"\n")
    elif stat.S_ISDIR(st.st_mode):
        out.write(p + b" D %o\n" % stat.S_IMODE(st.st_mode))
    else:
        h = hashlib.md5(open(p, "rb").read()).hexdigest().encode()
        out.write(p + b" F %o " % stat.S_IMODE(st.st_mode) + h + b"\n")
PY
}
# same ARCHIVE NAME: both extract it (fresh dirs), trees, -Z1 and -l names compared.
same() {
	local a=$1 n=$2
	rm -rf "$T/u" "$T/z"
	unzip -q "$a" -d "$T/u" >/dev/null 2>&1
	local urc=$?
	"$Z" unzip -q -T 2 "$a" -d "$T/z" >/dev/null 2>"$T/err"
	local zrc=$?
	if [ "$urc" -ne "$zrc" ]; then fail "$n: exit $zrc, unzip's $urc"; cat "$T/err"; return; fi
	if [ "$(sig "$T/u")" != "$(sig "$T/z")" ]; then
		fail "$n: tree differs from unzip's"
		diff <(sig "$T/u") <(sig "$T/z") | head -10
		return
	fi
	if [ "$(unzip -Z1 "$a" 2>/dev/null)" != "$("$Z" unzip -Z1 "$a" 2>/dev/null)" ]; then
		fail "$n: -Z1 differs"; return
	fi
	if [ "$(unzip -l "$a" 2>/dev/null | cut -c1-9,31-)" != \
		"$("$Z" unzip -l "$a" 2>/dev/null | cut -c1-9,31-)" ]; then
		fail "$n: -l differs"; diff <(unzip -l "$a" | cut -c1-9,31-) <("$Z" unzip -l "$a" | cut -c1-9,31-) | head; return
	fi
	code "$urc" "$n: -t" "$Z" unzip -t "$a"
	pass "$n: same tree, names and listing as Info-ZIP"
}

(cd src && zip -q -r -y -0 ../z0.zip . && zip -q -r -y -1 ../z1.zip . && zip -q -r -y -9 ../z9.zip .)
echo "a comment line" | zip -q -z z9.zip
same z0.zip "zip -0"
same z1.zip "zip -1"
same z9.zip "zip -9 with a comment"
check "the comment is listed" sh -c "'$Z' unzip -l z9.zip | grep -q 'a comment line'"
# names and excludes, -p, -j, -n/-o
out=$("$Z" unzip -p z9.zip hello.txt)
check "-p writes the content" [ "$out" = hello ]
rm -rf sel && "$Z" unzip -q z9.zip 'sub/*' -x '*.sh' -d sel
check "NAME and -x select" sh -c "[ -f sel/sub/deeper/private ] && [ ! -e sel/sub/run.sh ] && [ ! -e sel/hello.txt ]"
code 11 "no matching names" "$Z" unzip z9.zip nothing-like-this -d sel
rm -rf j && "$Z" unzip -q -j z9.zip -d j
check "-j puts files at the top" sh -c "[ -f j/private ] && [ -f j/run.sh ] && [ ! -e j/sub ]"
echo changed >sel/sub/deeper/private
code 1 "existing file without -o/-n: left, warning" "$Z" unzip z9.zip 'sub/deeper/private' -d sel
check "  ... and kept" grep -q changed sel/sub/deeper/private
code 0 "-n leaves it silently" "$Z" unzip -n z9.zip 'sub/deeper/private' -d sel
check "  ... kept" grep -q changed sel/sub/deeper/private
code 0 "-o replaces it" "$Z" unzip -o z9.zip 'sub/deeper/private' -d sel
check "  ... replaced" grep -q secret sel/sub/deeper/private
code 9 "missing archive" "$Z" unzip no-such.zip
code 10 "unknown option" "$Z" unzip -Y z9.zip

if command -v 7zz >/dev/null; then
	(cd src && 7zz a -tzip -snl ../7z.zip . >/dev/null)
	same 7z.zip "7-Zip"
else echo "note: no 7zz, 7-Zip archives not checked"; fi
if command -v bsdtar >/dev/null; then
	(cd src && bsdtar -a -cf ../bsd.zip .)
	same bsd.zip "bsdtar"
else echo "note: no bsdtar, its archives not checked"; fi

# Python: forced ZIP64 records, and data descriptors (written to a stream that cannot seek).
python3 - <<'PY'
import io, zipfile, os
class NoSeek(io.RawIOBase):
    def __init__(s, f): s.f = f
    def writable(s): return True
    def write(s, b): return s.f.write(b)
with zipfile.ZipFile('z64.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    for n in ['numbers.txt', 'hello.txt', 'random.bin']:
        with open('src/' + n, 'rb') as f, z.open(n, 'w', force_zip64=True) as w:
            w.write(f.read())
with open('dd.zip', 'wb') as raw:
    with zipfile.ZipFile(NoSeek(raw), 'w', zipfile.ZIP_DEFLATED) as z:
        for n in ['numbers.txt', 'hello.txt', 'random.bin']:
            z.write('src/' + n, n)
        z.writestr('stored.txt', 'stored bytes\n', zipfile.ZIP_STORED)
PY
same z64.zip "Python, force_zip64"
# ZIP64 everywhere, written by hand: sizes and offset in the central ZIP64 extra field (the fixed
# fields all ones), the ZIP64 end record and its locator.
python3 - <<'PY'
import struct, zlib
def entry(name, data, off):
    crc = zlib.crc32(data); n = name.encode()
    x = struct.pack('<HHQQ', 1, 16, len(data), len(data))
    loc = struct.pack('<IHHHHHIIIHH', 0x04034b50, 45, 0, 0, 0, 0x21, crc, 0xffffffff, 0xffffffff, len(n), len(x)) + n + x + data
    cx = struct.pack('<HHQQQ', 1, 24, len(data), len(data), off)
    cen = struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 0x031e, 45, 0, 0, 0, 0x21, crc, 0xffffffff, 0xffffffff, len(n), len(cx), 0, 0, 0, 0o100644 << 16, 0xffffffff) + n + cx
    return loc, cen
body = b''; cd = b''
for name, data in [('one.txt', b'first\n'), ('dir/two.txt', b'second\n' * 1000)]:
    l, c = entry(name, data, len(body)); body += l; cd += c
e64 = struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, 2, 2, len(cd), len(body))
loc = struct.pack('<IIQI', 0x07064b50, 0, len(body) + len(cd), 1)
eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
open('x64.zip', 'wb').write(body + cd + e64 + loc + eocd)
import zipfile
with zipfile.ZipFile('many.zip', 'w') as z:
    for k in range(66000):
        z.writestr('d%d/f%d' % (k % 7, k), '')
PY
same x64.zip "ZIP64 extra fields and end records"
check "66,000 entries (ZIP64 end record): -Z1 as unzip's" \
	[ "$(unzip -Z1 many.zip | md5sum)" = "$("$Z" unzip -Z1 many.zip | md5sum)" ]
code 0 "  ... and tested" "$Z" unzip -t many.zip
same dd.zip "Python data descriptors"
# bzip2 (method 12) from Info-ZIP zip; zstd (method 93), which Info-ZIP cannot write or read:
# z0.zip's entries recompressed by the zstd command into an archive written by hand, whose tree
# must be Info-ZIP's of z0.zip.
(cd src && zip -q -r -y -Z bzip2 ../bz.zip .)
same bz.zip "zip -Z bzip2"
python3 - z0.zip zs.zip <<'PY'
import struct, subprocess, sys, zipfile, zlib
body = b''; cd = b''; n = 0
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    data = zipfile.ZipFile(sys.argv[1]).read(i)
    m, comp = (0, b'') if i.is_dir() else (93, subprocess.run(
        ['zstd', '-q', '-c', '-3'], input=data, capture_output=True, check=True).stdout)
    fl = i.flag_bits & 0x800; name = i.filename.encode('utf-8' if fl else 'cp437'); crc = zlib.crc32(data)
    t, d = i.date_time[3] << 11 | i.date_time[4] << 5 | i.date_time[5] // 2, \
        (i.date_time[0] - 1980) << 9 | i.date_time[1] << 5 | i.date_time[2]
    fixed = struct.pack('<HHHHIIIH', fl, m, t, d, crc, len(comp), len(data), len(name))
    cd += struct.pack('<IHH', 0x02014b50, 0x0300 | 63, 63) + fixed[:-2] + \
        struct.pack('<HHHHHII', len(name), 0, 0, 0, 0, i.external_attr, len(body)) + name
    body += struct.pack('<IH', 0x04034b50, 63) + fixed + struct.pack('<H', 0) + name + comp
    n += 1
eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, n, n, len(cd), len(body), 0)
open(sys.argv[2], 'wb').write(body + cd + eocd)
PY
rm -rf "$T/u" "$T/z"
unzip -q z0.zip -d "$T/u"
code 0 "zstd entries (method 93): extracted" "$Z" unzip -q zs.zip -d "$T/z"
check "  ... Info-ZIP's tree of the same entries" [ "$(sig "$T/u")" = "$(sig "$T/z")" ]
code 0 "  ... and tested" "$Z" unzip -t zs.zip
# A self-extracting stub before the archive, offsets adjusted (zip -A) or not.
cat /bin/true z9.zip >sfx-raw.zip
cp sfx-raw.zip sfx.zip && zip -q -A sfx.zip
same sfx-raw.zip "stub, offsets not adjusted"
same sfx.zip "stub, zip -A"
python3 -c "import zipfile; zipfile.ZipFile('empty.zip', 'w').close()"
code 1 "empty zip: warning" "$Z" unzip empty.zip -d e
code 1 "empty zip -l: warning" "$Z" unzip -l empty.zip
k=0
for a in /usr/share/java/*.jar /usr/share/python-wheels/*.whl; do
	[ -f "$a" ] && [ ! -L "$a" ] || continue
	k=$((k + 1)); [ "$k" -le $((12 - 8 * QUICK)) ] || break # QUICK: 4
	same "$a" "$(basename "$a")"
done
[ "$k" -gt 0 ] || echo "note: no Debian jars or wheels here"

# Wildcard archive names, as Info-ZIP takes '*.jar': every match in turn, a summary, the worst
# exit status.
mkdir -p wild && cp z1.zip wild/a.zip && cp z9.zip wild/b.zip
rm -rf "$T/u" "$T/z"
(cd wild && unzip -q -o '*.zip' -d "$T/u" >/dev/null 2>&1)
code 0 "wildcard archive name: every match extracted" \
	sh -c 'cd wild && "$1" unzip -q -o "*.zip" -d "$2"' - "$Z" "$T/z"
check "  ... into Info-ZIP's tree" [ "$(sig "$T/u")" = "$(sig "$T/z")" ]
check "  ... and summed up as Info-ZIP does" \
	sh -c 'cd wild && "$1" unzip -t "*.zip" | grep -qx "2 archives were successfully processed."' - "$Z"
echo junk >wild/c.zip
code 9 "  ... a file that is not a ZIP among them: exit 9, the others extracted" \
	sh -c 'cd wild && "$1" unzip -qq -o "*.zip" -d "$2"' - "$Z" "$T/z2"
check "  ... (they were)" [ "$(sig "$T/u")" = "$(sig "$T/z2")" ]
code 9 "  ... no match: exit 9" "$Z" unzip -l 'wild/none*.zip'

# Hostile archives. Each extracts into $T/h/t; nothing may appear in $T/h outside t.
hostile() { # want name archive
	rm -rf "$T/h" && mkdir -p "$T/h/t"
	code "$1" "$2" "$Z" unzip -o "$3" -d "$T/h/t"
	local outside
	outside=$(cd "$T/h" && find . -mindepth 1 -not -path './t' -not -path './t/*')
	[ -z "$outside" ] && pass "$2: nothing outside the target" || fail "$2: wrote $outside"
}
python3 - <<'PY'
import zipfile, struct, zlib, warnings
warnings.simplefilter('ignore')
def w(name, entries):
    with zipfile.ZipFile(name, 'w') as z:
        for n, data, attr in entries:
            i = zipfile.ZipInfo(n)
            i.create_system = 3
            i.external_attr = attr << 16
            z.writestr(i, data)
w('slip.zip', [('../evil', 'x', 0o100644), ('../../evil2', 'x', 0o100644), ('/abs-evil', 'y', 0o100644), ('ok', 'z', 0o100644)])
w('linkesc.zip', [('esc', '../..', 0o120777), ('esc/pwned', 'p', 0o100644), ('abs', '/tmp', 0o120777), ('abs/pwned2', 'p', 0o100644)])
w('linkesc2.zip', [('d/l', '../../..', 0o120777), ('d/l', 'second', 0o100644)])
# The overlap bomb: one deflate stream, many central entries pointing at its one local header.
data = b'A' * 100000
c = zlib.compressobj(9, zlib.DEFLATED, -15); comp = c.compress(data) + c.flush()
crc = zlib.crc32(data)
local = struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, 0, 8, 0, 0, crc, len(comp), len(data), 1, 0) + b'a' + comp
cd = b''
n = 50
for k in range(n):
    nm = b'f%02d' % k
    cd += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 20, 20, 0, 8, 0, 0, crc, len(comp), len(data), len(nm), 0, 0, 0, 0, 0, 0) + nm
eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, n, n, len(cd), len(local), 0)
open('overlap.zip', 'wb').write(local + cd + eocd)
# Claims more entries than its directory holds.
eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 65535, 65535, len(cd), len(local), 0)
open('count.zip', 'wb').write(local + cd + eocd)
PY
hostile 1 "zip-slip and absolute paths: names made safe" slip.zip
check "  ... the safe names are inside" sh -c "[ -f '$T/h/t/evil' ] && [ -f '$T/h/t/abs-evil' ]"
hostile 2 "symlink, then a file through it" linkesc.zip
hostile 0 "a symlink and a file of one name: the last" linkesc2.zip
check "  ... which is the file" sh -c "[ -f '$T/h/t/d/l' ] && [ ! -L '$T/h/t/d/l' ]"
rm -rf "$T/h" && mkdir -p "$T/h/t" "$T/h/outside" && ln -s ../outside "$T/h/t/sub"
code 2 "a symlink already in the target is not followed" "$Z" unzip -q z9.zip 'sub/*' -d "$T/h/t"
check "  ... nothing written through it" [ -z "$(ls -A "$T/h/outside")" ]
hostile 3 "overlapping entries (zip bomb)" overlap.zip
check "  ... named as such" grep -q overlap "$T/stderr"
hostile 3 "more entries than the directory holds" count.zip
(cd ee 2>/dev/null || { mkdir ee && cd ee; } && echo a >a && echo b >b)
(cd ee && zip -q -P pw ../enc.zip a && zip -q ../enc.zip b)
hostile 81 "an encrypted entry" enc.zip
check "  ... the other extracted" [ -f "$T/h/t/b" ]
check "  ... the encrypted not written" [ ! -e "$T/h/t/a" ]
cp bz.zip bzflip.zip
printf '\x55' | dd of=bzflip.zip bs=1 seek=$(($(unzip -Zv bz.zip numbers.txt | sed -n 's/.*offset of local header from start of archive: *\([0-9]*\).*/\1/p') + 30 + 11 + 5000)) conv=notrunc 2>/dev/null
hostile 2 "bzip2 data with a flipped byte" bzflip.zip
if command -v 7zz >/dev/null; then
	(cd src && 7zz a -tzip -mm=Deflate64 ../d64.zip numbers.txt >/dev/null)
	hostile 81 "Deflate64" d64.zip
fi
head -c 5000 /dev/urandom >notzip.zip
hostile 9 "not a zip" notzip.zip
head -c $(($(stat -c %s z9.zip) / 2)) z9.zip >trunc.zip
hostile 9 "truncated (no directory left)" trunc.zip
head -c $(($(stat -c %s z9.zip) - 30)) z9.zip >trunc2.zip
hostile 9 "truncated end record" trunc2.zip
# A flipped byte in numbers.txt's deflate data: a bad CRC or data; the rest extracted.
off=$(python3 -c "
import zipfile; z = zipfile.ZipFile('z9.zip'); i = z.getinfo('numbers.txt')
print(i.header_offset + 30 + len(i.filename) + len(i.extra) + 1000)" 2>/dev/null ||
	python3 -c "
import zipfile, struct; z = zipfile.ZipFile('z9.zip'); i = z.getinfo('./numbers.txt')
print(i.header_offset + 30 + len(i.filename) + len(i.extra) + 1000)")
cp z9.zip flip.zip
printf '\x55' | dd of=flip.zip bs=1 seek="$off" conv=notrunc 2>/dev/null
hostile 2 "a flipped data byte" flip.zip
check "  ... the damaged file not left" [ ! -e "$T/h/t/numbers.txt" ]
check "  ... the others extracted" [ -f "$T/h/t/hello.txt" ]
# Random flips (seeded): never a crash, never a file bigger than its declared size.
nflip=$((40 - 25 * QUICK)) # QUICK: 15
python3 - "$SEED" $nflip <<'PY'
import random, sys
random.seed(int(sys.argv[1]))
b = bytearray(open('z1.zip', 'rb').read())
for k in range(int(sys.argv[2])):
    c = bytearray(b)
    for _ in range(random.randint(1, 4)):
        c[random.randrange(len(c))] ^= 1 << random.randrange(8)
    open('flip%02d.zip' % k, 'wb').write(c)
PY
bad=0
for k in $(seq -f %02g 0 $((nflip - 1))); do
	rm -rf "$T/h" && mkdir -p "$T/h/t"
	"$Z" unzip -q -o "flip$k.zip" -d "$T/h/t" >/dev/null 2>&1
	rc=$?
	case $rc in 0 | 1 | 2 | 3 | 9 | 81) ;; *) bad=1; echo "flip$k.zip: exit $rc" ;; esac
	[ -z "$(cd "$T/h" && find . -mindepth 1 -not -path './t' -not -path './t/*')" ] || bad=1
	big=$(find "$T/h/t" -type f -size +1000k | head -1)
	[ -z "$big" ] || { bad=1; echo "flip$k.zip: $big too big"; }
done
check "$nflip randomly flipped archives: documented exits, nothing outside, no oversize" [ $bad = 0 ]
finish
