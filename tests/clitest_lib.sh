#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clitest_lib.sh - sourced by the command's shell tests (tests/cli_*.sh, each a CTest test of its
# own, so that ctest -j runs them side by side): the command under test ($Z), a temporary
# directory ($T), the assertions (check, code) and the summary (finish), and the tree, archive and
# helpers several of them use. Not named cli_*.sh: CMake runs every tests/cli_*.sh as a test.
set -uo pipefail
Z=$(realpath "${1:?usage: $0 path/to/znippy}")
TEST_NAME=$(basename "$0" .sh)
# ZN_TEST_TMP: where the temporary directory goes (default /tmp; a tmpfs such as /dev/shm is faster).
T=$(mktemp -d "${ZN_TEST_TMP:-/tmp}/zncli.XXXXXX")
trap 'umount "$T/ofs/t/hosts" "$T/ofs/t/mnt" 2>/dev/null; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
# A python3 that is a version manager's shim (pyenv's: a shell script) took 0.3 s to start, ten
# times the interpreter's own time, and the tests start it often: the interpreter it runs goes
# first on PATH.
if [[ $(command -v python3) == */shims/* ]]; then
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ] && PATH=${py%/*}:$PATH
fi
# QUICK=1 under ZN_TEST_QUICK (every configuration of scripts/run_tests.sh but release; see
# tests/test_util.h): a test then runs the same paths on smaller inputs or fewer repetitions.
QUICK=0
case ${ZN_TEST_QUICK:-0} in '' | 0) ;; *) QUICK=1 ;; esac
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
# The last line of every test: the summary, and its exit status.
finish() {
	if [ "$fails" -eq 0 ]; then echo "$TEST_NAME: all passed"; else echo "$TEST_NAME: $fails failed"; fi
	[ "$fails" -eq 0 ]
}

# make_tree: a tree with every entry type and odd names in $S, and its archive $A (64 KiB chunks).
make_tree() {
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
}

# Tests that run the command as another user (uid 65534, as root; as anyone else, as themselves):
# run_unpriv COMMAND..., and a copy of the command in $T that uid 65534 can reach wherever the
# checkout is (under /root, say, which is 0700), made by unpriv_setup.
run_unpriv() { if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
unpriv_setup() {
	chmod 777 "$T"
	cp "$Z" "$T/znippy-unpriv" && chmod 755 "$T/znippy-unpriv"
}

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

# The options COMMAND's --help names (no COMMAND: the top level's), one a line, sorted: from each
# option line ("  -o, --output OUT   ...", "      --json[=FORMAT]"), the names before the text.
help_options() {
	"$Z" ${1:+"$1"} --help | awk '/^  -[A-Za-z]|^      --[a-z]/ { sub(/^ +/, ""); split($0, h, /  +/); print h[1] }' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,]*//' | sort -u
}
# The commands, as the top level's --help lists them.
commands() { "$Z" --help | sed -n 's/^  \([a-z][a-z0-9]*\)  .*/\1/p'; }
# feed FILE CUT...: FILE on standard output, pausing after each CUT, so that a reader's reads end
# there (with head and tail: a python3 per call costs 0.25 s on a loaded machine, and the tests
# feed hundreds)
feed() {
	local file=$1 at=0 cut
	shift
	for cut in "$@"; do
		tail -c +$((at + 1)) "$file" | head -c $((cut - at))
		sleep 0.01
		at=$cut
	done
	tail -c +$((at + 1)) "$file"
}
