#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_gunzip.sh - `znippy gunzip` / `zcat` end to end: gzip's file conventions, errors, exit codes
# (zcat -f's copies of what is not gzip: cli_zcat_plain.sh).
. "$(dirname "$0")/clitest_lib.sh"
set +o pipefail
fail() { echo "FAIL: $*" >&2; exit 1; } # the first failure ends the test
cd "$T"
head -c 300000 /dev/urandom | base64 >a
cat a a a >b
cp a a.orig; cp b b.orig
gzip -6 a; gzip -1 b
touch -d '2001-02-03 04:05:06' a.gz; chmod 640 a.gz
# FILE.gz -> FILE, input removed, mode and mtime kept
"$Z" gunzip a.gz || fail "gunzip a.gz"
[ -f a ] && [ ! -e a.gz ] || fail "a.gz not replaced by a"
cmp a a.orig || fail "content of a"
[ "$(stat -c %a a)" = 640 ] || fail "mode of a: $(stat -c %a a)"
[ "$(stat -c %Y a)" = "$(date -d '2001-02-03 04:05:06' +%s)" ] || fail "mtime of a"
# -k keeps the input; refusing to overwrite without -f
gzip -k b 2>/dev/null; rm -f b
gzip -dc b.gz >/dev/null
cp b.orig b
"$Z" gunzip -k b.gz 2>err && fail "overwrote b without -f"
grep -q "already exists" err || fail "message for existing output"
"$Z" gunzip -kf b.gz || fail "gunzip -kf"
[ -f b.gz ] || fail "-k removed input"
cmp b b.orig || fail "content of b"
# -c, zcat, stdin, several members and -o
cat b.gz b.gz >bb.gz
"$Z" zcat bb.gz | cmp - <(cat b.orig b.orig) || fail "zcat of two members"
"$Z" gunzip -c <b.gz | cmp - b.orig || fail "gunzip -c from stdin"
cat b.gz | "$Z" gunzip | cmp - b.orig || fail "gunzip from a pipe"
"$Z" gunzip -o out b.gz && cmp out b.orig || fail "-o"
"$Z" gunzip -o - b.gz | cmp - b.orig || fail "-o - is standard output"
[ -e ./- ] && fail "-o - wrote a file named '-'"
"$Z" gunzip -c -o out3 b.gz 2>/dev/null; [ $? -eq 1 ] || fail "-c with -o OUT is a usage error (1, as gzip's)"
"$Z" gunzip -n -c b.gz | cmp - b.orig || fail "-n (gzip's no-name) is accepted"
# gzip's conveniences: NAME for NAME.gz, zcat -f passing plain data through, its message
cp b.gz nb.gz && "$Z" zcat nb | cmp - b.orig || fail "zcat NAME finds NAME.gz"
printf 'plain\n' >plain.txt
[ "$("$Z" zcat -f plain.txt)" = plain ] || fail "zcat -f passes plain data through"
"$Z" zcat plain.txt 2>err >/dev/null; [ $? -eq 1 ] || fail "zcat of plain data: exit 1"
grep -q "plain.txt: not in gzip format" err || fail "message for plain data: $(cat err)"
printf 'x' | gzip >su.gz && chmod 6755 su.gz && "$Z" gunzip -f su.gz || fail "gunzip -f su.gz"
[ "$(stat -c %a su)" = 755 ] || fail "set-id bits kept: $(stat -c %a su)"
"$Z" gunzip -t bb.gz || fail "-t on a good file"
# trailing zeros are ignored; trailing garbage is a warning
{ cat b.gz; head -c 1000 /dev/zero; } >z.gz
"$Z" zcat z.gz | cmp - b.orig || fail "trailing zeros"
{ cat b.gz; echo garbage; } >g.gz
"$Z" zcat g.gz 2>err | cmp - b.orig || fail "output before trailing garbage"
grep -q "trailing garbage" err || fail "trailing garbage warning"
# ... and, as gzip's warning, exit status 2, with -q too, which silences the warning
# only; what was decoded is kept: on standard output, with -t, among FILEs, from standard input,
# in place, with -o; zcat -f copies the garbage, with exit status 0, as gzip does
"$Z" zcat g.gz >/dev/null 2>&1; [ $? = 2 ] || fail "trailing garbage: exit 2"
[ -z "$("$Z" zcat -q g.gz 2>&1 >/dev/null)" ] || fail "-q silences the trailing garbage warning"
"$Z" zcat -q g.gz >/dev/null 2>&1; [ $? = 2 ] || fail "-q: trailing garbage still exit 2"
"$Z" gunzip -t g.gz 2>err; [ $? = 2 ] && grep -q "g.gz: decompression OK, trailing garbage ignored" err ||
	fail "-t: trailing garbage: $(cat err)"
"$Z" zcat g.gz b.gz 2>/dev/null | cmp - <(cat b.orig b.orig) || fail "the FILE after trailing garbage is decoded"
"$Z" zcat b.gz g.gz >/dev/null 2>&1; [ $? = 2 ] || fail "trailing garbage in the last FILE: exit 2"
"$Z" gunzip <g.gz 2>/dev/null | cmp -s - b.orig || fail "trailing garbage on standard input: output"
"$Z" gunzip <g.gz >/dev/null 2>&1; [ $? = 2 ] || fail "trailing garbage on standard input: exit 2"
cp g.gz gi.gz && "$Z" gunzip gi.gz 2>/dev/null; [ $? = 2 ] && cmp -s gi b.orig && [ ! -e gi.gz ] ||
	fail "trailing garbage in place: the output kept, the input removed, exit 2 (as gzip)"
"$Z" gunzip -o go g.gz 2>/dev/null; [ $? = 2 ] && cmp -s go b.orig || fail "trailing garbage, -o: output kept, exit 2"
"$Z" zcat -f g.gz >gf.out 2>err && gzip -cdf g.gz | cmp -s - gf.out && [ ! -s err ] ||
	fail "zcat -f: trailing garbage copied, exit 0, no warning, as gzip"
# corrupt and truncated inputs: non-zero exit and a message naming the file
head -c 1000 b.gz >t.gz
"$Z" zcat t.gz >/dev/null 2>err && fail "truncated file gave exit 0"
grep -q "t.gz: unexpected end of input" err || fail "message for truncation: $(cat err)"
cp b.gz c.gz; printf '\x00\x00\x00\x00' | dd of=c.gz bs=1 seek=$(( $(stat -c %s b.gz) - 8 )) conv=notrunc 2>/dev/null
"$Z" zcat c.gz >/dev/null 2>err && fail "CRC mismatch gave exit 0"
grep -q "checksum mismatch" err || fail "message for CRC: $(cat err)"
cp b.gz i.gz; printf '\x01' | dd of=i.gz bs=1 seek=$(( $(stat -c %s b.gz) - 4 )) conv=notrunc 2>/dev/null
"$Z" zcat i.gz >/dev/null 2>err && fail "ISIZE mismatch gave exit 0"
grep -q "length mismatch (gzip ISIZE)" err || fail "message for ISIZE: $(cat err)"
printf 'not gzip at all' >n.gz
"$Z" gunzip -t n.gz 2>err && fail "bad header gave exit 0"
grep -q "n.gz: not in gzip format" err || fail "message for bad header: $(cat err)"
"$Z" gunzip n.gz 2>/dev/null; [ -e n ] && fail "partial output left behind"
# output files: written under a temporary name and renamed, never through a link
gzip -c a.orig >x.gz && ln -s x.gz x
"$Z" gunzip -f x.gz || fail "gunzip -f over a symlink to the input"
[ -f x ] && [ ! -L x ] && cmp -s x a.orig || fail "-f over a symlink: x is not the output"
gzip -c a.orig >y.gz && echo victim >yt && ln -s yt y
"$Z" gunzip -f y.gz && [ "$(cat yt)" = victim ] || fail "-f wrote through a symlink"
gzip -c a.orig >o.gz
"$Z" gunzip -f -o o.gz o.gz 2>err && fail "-o naming its own input gave exit 0"
gzip -dc o.gz | cmp -s - a.orig || fail "-o naming its own input damaged it"
"$Z" gunzip -o out1 t.gz 2>/dev/null; [ -e out1 ] && fail "-o: partial output left behind"
"$Z" gunzip -o out2 missing.gz 2>/dev/null; rc=$?
[ -e out2 ] && fail "-o: empty output left behind"
[ $rc -eq 1 ] || fail "a missing input: exit $rc, want 1 (an error, as gzip's)"
"$Z" gunzip -f -o /dev/null o.gz && [ -c /dev/null ] || fail "-o /dev/null"
[ "$("$Z" gunzip -o /dev/stdout o.gz | wc -c)" = "$(wc -c <a.orig)" ] || fail "-o /dev/stdout"
ls -A | grep -q '^\.' && fail "a temporary file was left: $(ls -A)"
# in place, the input must be a plain regular file unless -f (as gzip)
gzip -c a.orig >l0.gz && ln -s l0.gz l.gz
"$Z" gunzip l.gz 2>err && fail "symlink input accepted without -f"
[ -L l.gz ] || fail "symlink input removed"
mkfifo p.gz && { "$Z" gunzip -f p.gz 2>err; [ $? = 2 ] || fail "FIFO input: a warning (2), as gzip's"; }
gzip -c a.orig >h.gz && ln h.gz h2.gz
"$Z" gunzip h.gz 2>err && fail "input with another link accepted without -f"
grep -q "other links" err || fail "message for links: $(cat err)"
# suffixes in any case, and gzip's -z
for f in s.GZ u.Gz v-z; do gzip -c a.orig >"$f"; "$Z" gunzip "$f" || fail "suffix of $f"; done
gzip -c a.orig >T.TGZ && "$Z" gunzip T.TGZ && [ -f T.tar ] || fail ".TGZ -> .tar"
[ -f s ] && [ -f u ] && [ -f v ] || fail "suffix outputs"
# a signal removes the partial output: decoding waits on a FIFO holding half a stream
mkfifo feed
"$Z" gunzip -o zo <feed & pid=$!
exec 3>feed
head -c 2000 o.gz >&3
for i in $(seq 200); do ls -A | grep -q '^\.zo\.' && break; sleep 0.05; done
ls -A | grep -q '^\.zo\.' || fail "no temporary output file while decoding"
kill -TERM $pid; wait $pid
exec 3>&-
[ -e zo ] && fail "output left after SIGTERM"
ls -A | grep -q '^\.zo\.' && fail "temporary file left after SIGTERM"
# -f -o over a writable file in a directory this user may not write: written in place
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir ro && printf 'old\n' >ro/existing && chmod 666 ro/existing && chmod 755 ro
	chmod 755 . && chmod 644 o.gz
	# A copy uid 65534 can reach wherever the checkout is (under /root, say, which is 0700).
	cp "$Z" znippy-unpriv && chmod 755 znippy-unpriv
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PWD/znippy-unpriv" gunzip -f -o ro/existing o.gz ||
		fail "-f -o into a read-only directory"
	cmp -s ro/existing a.orig || fail "-f -o into a read-only directory: content"
fi
# standard input that is a file read in part: decoding starts at its offset and leaves it at
# the end of what was decoded, as gzip does
printf 'hello\n' | gzip >h.gz; printf 'world\n' | gzip >w.gz; cat h.gz w.gz >hw.gz
n=$(stat -c %s h.gz)
[ "$({ dd bs="$n" count=1 of=/dev/null status=none; "$Z" zcat; } <hw.gz)" = world ] ||
	fail "stdin at an offset"
[ "$({ "$Z" gunzip -c >/dev/null; wc -c; } <h.gz)" = 0 ] || fail "stdin offset after decoding"
# a non-blocking pipe left by a parent is read blocking, as gzip does
[ "$( (sleep 0.3; cat h.gz) | python3 -c 'import os, sys; os.set_blocking(0, False);
os.execvp(sys.argv[1], sys.argv[1:])' "$Z" zcat)" = hello ] || fail "non-blocking stdin"
# the position of a fault is the same from a file and from a pipe
head -c 13 b.gz >t13.gz
"$Z" gunzip -t t13.gz 2>err1; "$Z" gunzip -t <t13.gz 2>err2
grep -q 'at input byte 13)' err1 || fail "position of a truncation: $(cat err1)"
[ "$(sed 's/.*(at/(at/' err1)" = "$(sed 's/.*(at/(at/' err2)" ] || fail "positions differ: file/pipe"
# a failed standard output ends the run: the other FILEs are not tried
(trap '' PIPE; "$Z" zcat b.gz b.gz b.gz 2>err | head -c 10 >/dev/null)
[ "$(grep -c 'write error' err)" = 1 ] || fail "write errors after a closed pipe: $(cat err)"
# -r decodes the files with a gzip suffix below a directory, and passes over the others; -S adds
# a suffix, tried before the usual ones
mkdir -p rt/sub/deeper && echo one >rt/a && echo two >rt/sub/b && echo three >rt/sub/deeper/c
echo plain >rt/sub/plain.txt && gzip rt/a rt/sub/b && gzip -S .zz rt/sub/deeper/c
"$Z" gunzip -r rt 2>err || fail "-r: $(cat err)"
[ "$(cat rt/a rt/sub/b rt/sub/plain.txt)" = "$(printf 'one\ntwo\nplain')" ] || fail "-r: content"
[ -e rt/a.gz ] || [ -e rt/sub/b.gz ] && fail "-r: inputs left"
[ -e rt/sub/deeper/c.zz ] || fail "-r: a file without a gzip suffix was touched"
"$Z" gunzip -rS .zz rt || fail "-r -S .zz"
[ "$(cat rt/sub/deeper/c)" = three ] || fail "-S .zz: content"
gzip -S .zz rt/sub/deeper/c && [ "$("$Z" zcat -r -S .zz rt)" = three ] || fail "zcat -r -S"
"$Z" gunzip -S '' rt/a 2>/dev/null; [ $? = 1 ] || fail "-S '': usage error (1, as gzip's)"
# -r walks directories by their descriptors: a directory swapped for a symlink while the walk is
# in it (another user's, say) leads nowhere else. The walk is held at the -v line after the first
# file (standard error is a full pipe), top/b is renamed and a symlink to secret put in its place;
# the second file must be read from, and written to, the directory that was walked, in place
# (-rv) and to standard output (zcat -rv).
race() { # MODE: in-place or stdout; the tree is race/top/b/{c,d}.gz, and race/secret/d.gz
	rm -rf race && mkdir -p race/top/b race/secret
	echo user-c | gzip >race/top/b/c.gz && echo user-d | gzip >race/top/b/d.gz
	echo secret | gzip >race/secret/d.gz
	python3 - "$Z" "$1" <<'PY'
import os, subprocess, sys, time
z, mode = sys.argv[1], sys.argv[2]
r, w = os.pipe()
os.set_blocking(w, False)
for size in (65536, 4096, 1):
    try:
        while True:
            os.write(w, b"x" * size)
    except BlockingIOError:
        pass
os.set_blocking(w, True)
out = open("race/out", "wb")
cmd = [z, "gunzip", "-rv", "top"] if mode == "in-place" else [z, "zcat", "-rv", "top"]
p = subprocess.Popen(cmd, cwd="race", stdout=out, stderr=w)
os.close(w)
for _ in range(2000):  # the first file done: its -v line waits on the pipe
    if os.path.exists("race/top/b/c") if mode == "in-place" else os.path.getsize("race/out") == 7:
        break
    time.sleep(0.005)
else:
    sys.exit("the first file was not decoded")
time.sleep(0.05)
os.rename("race/top/b", "race/top/b.moved")
os.symlink("../secret", "race/top/b")
while os.read(r, 65536):
    pass
p.wait()
PY
}
race in-place || fail "-r race: $(cat race/out)"
[ -e race/secret/d.gz ] && [ ! -e race/secret/d ] || fail "-r followed a directory swapped for a symlink: it wrote race/secret/d"
[ "$(cat race/top/b.moved/d)" = user-d ] || fail "-r: the directory walked was not finished"
race stdout || fail "zcat -r race"
[ "$(cat race/out)" = "$(printf 'user-c\nuser-d')" ] || fail "zcat -r read through a directory swapped for a symlink: $(cat race/out)"
# ... and so walks paths of any length (1,500 levels: 4,500 bytes, past PATH_MAX)
python3 -c 'import gzip, os
fd = os.open(".", os.O_RDONLY)
for name in ["deep"] + ["dd"] * 1500:
    os.mkdir(name, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
f = os.open("f.gz", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(f, gzip.compress(b"leaf\n"))' && "$Z" gunzip -r deep || fail "-r of a tree deeper than PATH_MAX"
python3 -c 'import os
fd = os.open("deep", os.O_RDONLY)
for _ in range(1500):
    nfd = os.open("dd", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
assert sorted(os.listdir(fd)) == ["f"], os.listdir(fd)
assert os.read(os.open("f", os.O_RDONLY, dir_fd=fd), 10) == b"leaf\n"' || fail "-r deep: the leaf decoded in place"
# NAME without its suffix finds NAME + SUF, and NAME.z, as gzip does
echo v >rt/v && gzip -S .zz rt/v && "$Z" gunzip -S .zz rt/v && [ "$(cat rt/v)" = v ] || fail "-S: NAME"
echo m >rt/m && gzip -S .z rt/m && "$Z" gunzip rt/m && [ "$(cat rt/m)" = m ] || fail "NAME.z as NAME"
echo t | gzip >rt/t.tgz && "$Z" gunzip rt/t && [ "$(cat rt/t.tar)" = t ] || fail "NAME.tgz as NAME"
# -l prints what gzip -l prints, and decodes and removes nothing
printf 'hello\n' >l1 && seq 1 20000 >l2 && gzip -k l1 l2 && gzip -c --no-name <l1 >l3.gz
[ "$("$Z" gunzip -l l1.gz l2.gz l3.gz)" = "$(gzip -l l1.gz l2.gz l3.gz)" ] || fail "-l: $("$Z" gunzip -l l1.gz)"
[ -e l1.gz ] && [ -e l2.gz ] || fail "-l removed its input"
"$Z" gunzip -l l1 2>/dev/null; [ $? = 1 ] || fail "-l of a file that is not gzip"
# -l of standard input: gzip's listing, named stdout, from a file (at an offset too), a pipe, and a
# pipe that hands the header over a byte at a time (its length is in the ratio)
for l in l1.gz l2.gz l3.gz; do
	[ "$("$Z" gunzip -l <$l)" = "$(gzip -l <$l)" ] || fail "-l <$l: $("$Z" gunzip -l <$l)"
	[ "$(cat $l | "$Z" gunzip -l -)" = "$(cat $l | gzip -l -)" ] || fail "-l - from a pipe: $l"
	[ "$(feed $l $(seq 1 30) | "$Z" gunzip -l)" = "$(gzip -l <$l)" ] || fail "-l, $l a byte at a time"
done
[ "$("$Z" gunzip -l l1.gz - <l2.gz)" = "$(gzip -l l1.gz - <l2.gz)" ] || fail "-l FILE - (totals)"
[ "$(cat l2.gz | "$Z" gunzip -lq)" = "$(cat l2.gz | gzip -lq)" ] || fail "-lq from a pipe"
n=$(wc -c <l1.gz) && cat l1.gz l2.gz >l12.gz
[ "$({ dd bs="$n" count=1 of=/dev/null status=none; "$Z" gunzip -l; } <l12.gz)" = \
	"$({ dd bs="$n" count=1 of=/dev/null status=none; gzip -l; } <l12.gz)" ] || fail "-l of stdin at an offset"
cat l1 | "$Z" gunzip -l 2>/dev/null; [ $? = 1 ] || fail "-l of standard input that is not gzip"
cat l2.gz l2.gz >l22.gz # two members: both counted (gzip -l shows the last one's size only)
[ "$("$Z" gunzip -l l22.gz | awk 'NR == 2 { print $2 }')" = $((2 * $(wc -c <l2))) ] || fail "-l of two members"
# -v names each file with its ratio, as gzip -v does
cp l1.gz v1.gz && cp l2.gz v2.gz && cp l1.gz w1.gz && cp l2.gz w2.gz
"$Z" gunzip -v v1.gz v2.gz 2>v.err && gzip -dv w1.gz w2.gz 2>w.err
[ "$(sed 's/v\([12]\)/w\1/g' v.err)" = "$(cat w.err)" ] || fail "-v: $(cat v.err)"
[ "$("$Z" gunzip -tv l1.gz 2>&1)" = "$(printf 'l1.gz:\t OK')" ] || fail "-tv"
# -N takes the stored name (its last part) and time; -n after it, the file's
mkdir -p nd && echo data >nd/orig.txt && touch -d 2001-02-03 nd/orig.txt && gzip nd/orig.txt &&
	mv nd/orig.txt.gz nd/renamed.gz && cp nd/renamed.gz nd/r2.gz
"$Z" gunzip -N nd/renamed.gz && [ "$(cat nd/orig.txt)" = data ] &&
	[ "$(stat -c %Y nd/orig.txt)" = "$(date -d 2001-02-03 +%s)" ] || fail "-N"
"$Z" gunzip -Nn nd/r2.gz && [ -e nd/r2 ] || fail "-N then -n"
"$Z" gunzip --help | grep -q Usage || fail "--help"
"$Z" gunzip --bogus 2>/dev/null; [ $? = 1 ] || fail "usage error exit code: 1, as gzip's"
echo ok
