#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install_check.sh - `cmake --install` of a build into a scratch prefix, then a program that
# archives a file from memory and reads it back, compiled against the installed header and
# linked through the installed pkg-config file: once with the shared library, once statically.
set -euo pipefail
build=${1:?usage: install_check.sh BUILD_DIR CC}
cc=${2:?usage: install_check.sh BUILD_DIR CC}
T=$(mktemp -d /tmp/zninst.XXXXXX)
trap 'rm -rf "$T"' EXIT
cmake --install "$build" --prefix "$T/usr" >/dev/null
for f in bin/znippy include/znippy.h libznippy.a libznippy.so znippy.pc; do
	[ -n "$(find "$T/usr" -path "*$f" | head -1)" ] || { echo "FAIL: $f not installed"; exit 1; }
done
pcdir=$(dirname "$(find "$T/usr" -name znippy.pc)")
"$T/usr/bin/znippy" --version | grep -q "^znippy $(grep -o '"[0-9.]*"' "$T/usr/include/znippy.h" | tr -d '"')$" ||
	{ echo "FAIL: installed command's version"; exit 1; }
cat >"$T/use.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <znippy.h>
static char got[64];
static size_t ngot;
static zn_result sink(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	if (ngot + n > sizeof(got))
		return ZN_ERR_LIMIT;
	memcpy(got + ngot, p, n);
	ngot += n;
	return ZN_OK;
}
int main(int argc, char **argv)
{
	static const char data[] = "installed and linked";
	struct zn_writer *w;
	struct zn_reader *r;
	struct zn_entry e = {.path = "a/b", .path_len = 3, .type = ZN_TYPE_FILE, .mode = 0644,
	                     .size = sizeof(data)};
	uint64_t i;
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (!f || zn_writer_open(&w, fileno(f), NULL, NULL) != ZN_OK ||
	    zn_writer_add_memory(w, &e, data) != ZN_OK || zn_writer_finish(w) != ZN_OK)
		return 1;
	zn_writer_free(w);
	fclose(f);
	if (zn_reader_open(&r, argv[1], NULL, 0) != ZN_OK || zn_reader_find(r, "a/b", 3, &i) != ZN_OK ||
	    zn_reader_read_entry(r, i, sink, NULL) != ZN_OK)
		return 2;
	zn_reader_close(r);
	return ngot == sizeof(data) && !memcmp(got, data, ngot) ? 0 : 3;
}
C
export PKG_CONFIG_PATH="$pcdir"
# shellcheck disable=SC2046
"$cc" -o "$T/use-shared" "$T/use.c" $(pkg-config --cflags --libs znippy)
LD_LIBRARY_PATH="$(dirname "$(find "$T/usr" -name 'libznippy.so' | head -1)")" "$T/use-shared" "$T/a.zn" ||
	{ echo "FAIL: the program linked with the shared library"; exit 1; }
# shellcheck disable=SC2046
"$cc" -o "$T/use-static" "$T/use.c" -static-libgcc $(pkg-config --cflags znippy) \
	"$(find "$T/usr" -name libznippy.a | head -1)" $(pkg-config --static --libs-only-l --libs-only-other znippy | sed 's/-lznippy//')
"$T/use-static" "$T/b.zn" || { echo "FAIL: the program linked with the static library"; exit 1; }
"$T/usr/bin/znippy" cat "$T/b.zn" a/b | tr -d '\0' | grep -q "installed and linked" ||
	{ echo "FAIL: the installed command reads the program's archive"; exit 1; }
echo "install_check: ok"
