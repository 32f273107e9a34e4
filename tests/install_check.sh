#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install_check.sh - what `make install DESTDIR=... PREFIX=...` puts in place, and examples/ built
# against it. The build is installed as the Makefile installs it (DESTDIR staging under a prefix
# other than the one configured), and then:
#   - exactly the expected files are there: the command, znippy.h, libznippy.a, the shared library
#     under its full version with the SONAME and the development symlinks, znippy.pc, the man page
#     and the bash completion (nothing more, nothing missing);
#   - the header, man page and completion are the source tree's files; the SONAME is
#     libznippy.so.MAJOR; znippy.pc names the prefix (not the staging directory) and the version;
#     the command runs from there and says the header's version; bash loads the completion;
#   - every program in examples/ is compiled against the installed header, linked through the
#     installed znippy.pc (PKG_CONFIG_SYSROOT_DIR for the staging directory, as a cross or
#     packaging build does), once with the shared library and once statically, and run; its
#     output is compared with examples/NAME.out and the installed command verifies its archive.
set -euo pipefail
usage="usage: install_check.sh BUILD_DIR CC BINDIR LIBDIR INCLUDEDIR MANDIR DATADIR"
[ $# -eq 7 ] || { echo "$usage" >&2; exit 2; }
# The directories GNUInstallDirs chose when the build was configured, relative to the prefix.
build=$1 cc=$2 bindir=$3 libdir=$4 incdir=$5 mandir=$6 datadir=$7
src=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/zninst.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
for d in bindir libdir incdir mandir datadir; do
	[ -n "${!d}" ] && [ "${!d#/}" = "${!d}" ] || fail "$d '${!d}': not a relative directory"
done
major=$(sed -n 's/^#define ZN_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$src/include/znippy.h")
version=$(sed -n 's/^#define ZN_VERSION_STRING *"\([0-9.]*\)".*/\1/p' "$src/include/znippy.h")
[ -n "$major" ] && [ -n "$version" ] || fail "no version in include/znippy.h"

# As the Makefile's install target: DESTDIR="$(DESTDIR)" cmake --install build --prefix "$(PREFIX)"
prefix=/opt/znippy-test
stage=$T/stage
DESTDIR=$stage cmake --install "$build" --prefix "$prefix" >/dev/null
root=$stage$prefix
[ -d "$root" ] || fail "nothing installed under DESTDIR/PREFIX ($root)"

# Every file and link installed, and what it must be.
expect=$(
	sort <<-EOF
		f $bindir/znippy
		f $incdir/znippy.h
		f $libdir/libznippy.a
		f $libdir/libznippy.so.$version
		l $libdir/libznippy.so.$major -> libznippy.so.$version
		l $libdir/libznippy.so -> libznippy.so.$major
		f $libdir/pkgconfig/znippy.pc
		f $mandir/man1/znippy.1
		f $datadir/bash-completion/completions/znippy
	EOF
)
got=$(cd "$root" && find . ! -type d -printf '%y %P\n' | while read -r kind path; do
	if [ "$kind" = l ]; then echo "l $path -> $(readlink "$path")"; else echo "$kind $path"; fi
done | sort)
[ "$got" = "$expect" ] || fail "installed files differ from the expected ones:
$(diff <(echo "$expect") <(echo "$got") | sed -n 's/^</  missing:/p; s/^>/  unexpected:/p')"
[ -z "$(find "$stage" -mindepth 1 -maxdepth 1 ! -path "$stage${prefix%/*}")" ] ||
	fail "something installed outside PREFIX: $(find "$stage" -mindepth 1 -maxdepth 2)"

cmp -s "$src/include/znippy.h" "$root/$incdir/znippy.h" || fail "installed znippy.h differs"
cmp -s "$src/docs/znippy.1" "$root/$mandir/man1/znippy.1" || fail "installed man page differs"
cmp -s "$src/contrib/znippy.bash" "$root/$datadir/bash-completion/completions/znippy" ||
	fail "installed bash completion differs"
so=$root/$libdir/libznippy.so.$version
objdump -p "$so" | grep "SONAME *libznippy.so.$major\$" >/dev/null || fail "SONAME of $so"
ar t "$root/$libdir/libznippy.a" | grep '\.o$' >/dev/null || fail "libznippy.a holds no object"
"$root/$bindir/znippy" --version | grep -x "znippy $version" >/dev/null ||
	fail "installed command's version"
bash -c "source '$root/$datadir/bash-completion/completions/znippy' && complete -p znippy" \
	>/dev/null || fail "bash does not load the installed completion"
pc=$root/$libdir/pkgconfig/znippy.pc
grep -qx "prefix=$prefix" "$pc" || fail "znippy.pc: prefix is not $prefix: $(grep ^prefix "$pc")"
grep -qx "Version: $version" "$pc" || fail "znippy.pc: version"
! grep -q "$T" "$pc" || fail "znippy.pc names the staging directory"

# The examples, through pkg-config as a program outside this tree would build them.
export PKG_CONFIG_PATH=$root/$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
pkg-config --cflags znippy | grep -- "-I$root/$incdir" >/dev/null || fail "pkg-config --cflags znippy"
n=0
for ex in "$src"/examples/*.c; do
	name=$(basename "$ex" .c)
	# shellcheck disable=SC2046
	"$cc" -Wall -Wextra -Werror -o "$T/$name-shared" "$ex" $(pkg-config --cflags --libs znippy) ||
		fail "$name: build with the shared library"
	# shellcheck disable=SC2046
	"$cc" -Wall -Wextra -Werror -o "$T/$name-static" "$ex" $(pkg-config --cflags znippy) \
		"$root/$libdir/libznippy.a" \
		$(pkg-config --static --libs-only-l --libs-only-other znippy | sed 's/-lznippy//') ||
		fail "$name: build with the static library"
	# The shared build loads the installed library, not the build tree's (ldd's output taken
	# whole: grep -q leaving early would fail the pipe under pipefail).
	libs=$(LD_LIBRARY_PATH=$root/$libdir ldd "$T/$name-shared")
	grep -q "libznippy.so.$major => $root/" <<<"$libs" ||
		fail "$name: the shared build does not load $so: $libs"
	for kind in shared static; do
		LD_LIBRARY_PATH=$root/$libdir "$T/$name-$kind" "$T/$name-$kind.zn" >"$T/$name-$kind.out" ||
			fail "$name, linked with the $kind library: exit $?"
		# An example says what it prints in its expected output file, when it has one.
		if [ -f "${ex%.c}.out" ]; then
			cmp -s "${ex%.c}.out" "$T/$name-$kind.out" ||
				fail "$name ($kind): output differs from examples/$name.out: $(cat "$T/$name-$kind.out")"
		fi
		# The installed command verifies what the example wrote, when it wrote an archive.
		if [ -f "$T/$name-$kind.zn" ]; then
			"$root/$bindir/znippy" verify "$T/$name-$kind.zn" >/dev/null 2>&1 ||
				fail "$name ($kind): the installed command does not verify its archive"
		fi
	done
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no examples/*.c"
echo "install_check: ok ($(echo "$expect" | wc -l) files under $prefix; $n examples, shared and static)"
