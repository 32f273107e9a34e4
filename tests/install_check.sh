#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install_check.sh - `cmake --install` of a build into a scratch prefix: the command, the header,
# both libraries (the shared one under its SONAME), znippy.pc and the man page are in place; then
# every program in examples/ is compiled against the installed header, linked through the
# installed pkg-config file, once with the shared library and once statically, and run; the
# installed command reads the archive the example wrote.
set -euo pipefail
build=${1:?usage: install_check.sh BUILD_DIR CC}
cc=${2:?usage: install_check.sh BUILD_DIR CC}
src=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/zninst.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$T/usr" >/dev/null
major=$(sed -n 's/^#define ZN_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$T/usr/include/znippy.h")
want=(bin/znippy include/znippy.h libznippy.a libznippy.so "libznippy.so.$major" znippy.pc)
[ -f "$src/docs/znippy.1" ] && want+=(man1/znippy.1)
for f in "${want[@]}"; do
	[ -n "$(find "$T/usr" -path "*$f" | head -1)" ] || fail "$f not installed"
done
so=$(find "$T/usr" -name "libznippy.so.$major" | head -1)
objdump -p "$so" | grep -q "SONAME *libznippy.so.$major\$" || fail "SONAME of $so"
"$T/usr/bin/znippy" --version | grep -q "^znippy $(grep -o '"[0-9.]*"' "$T/usr/include/znippy.h" | tr -d '"')$" ||
	fail "installed command's version"

export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$(find "$T/usr" -name znippy.pc)")
libdir=$(dirname "$so")
n=0
for ex in "$src"/examples/*.c; do
	name=$(basename "$ex" .c)
	# shellcheck disable=SC2046
	"$cc" -Wall -Wextra -Werror -o "$T/$name-shared" "$ex" $(pkg-config --cflags --libs znippy) ||
		fail "$name: build with the shared library"
	# shellcheck disable=SC2046
	"$cc" -Wall -Wextra -Werror -o "$T/$name-static" "$ex" -static-libgcc $(pkg-config --cflags znippy) \
		"$libdir/libznippy.a" $(pkg-config --static --libs-only-l --libs-only-other znippy | sed 's/-lznippy//') ||
		fail "$name: build with the static library"
	for kind in shared static; do
		LD_LIBRARY_PATH=$libdir "$T/$name-$kind" "$T/$name-$kind.zn" >"$T/$name-$kind.out" ||
			fail "$name, linked with the $kind library: exit $?"
		# An example says what it prints in its expected output file, when it has one.
		if [ -f "${ex%.c}.out" ]; then
			cmp -s "${ex%.c}.out" "$T/$name-$kind.out" ||
				fail "$name ($kind): output differs from examples/$name.out: $(cat "$T/$name-$kind.out")"
		fi
		# The installed command verifies what the example wrote, when it wrote an archive.
		if [ -f "$T/$name-$kind.zn" ]; then
			"$T/usr/bin/znippy" verify "$T/$name-$kind.zn" >/dev/null 2>&1 ||
				fail "$name ($kind): the installed command does not verify its archive"
		fi
	done
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no examples/*.c"
echo "install_check: ok ($n examples, shared and static)"
