/* SPDX-License-Identifier: MIT */
/* fuzz_pkg_meta.c - libFuzzer target: the package metadata parsers and the path functions of
 * lib/pkg. The first byte picks the parser (1-5: enum zn_pkg_meta; otherwise the rest is a path,
 * split at its first NUL into a package path and a member). Every result must leave
 * NUL-terminated fields within bounds, and empty ones on failure. */
#include <stdint.h>
#include <string.h>

#include "znippy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_coord(const struct zn_pkg_coord *c, zn_result r)
{
	const char *f[3] = {c->group, c->name, c->version};
	for (int i = 0; i < 3; i++)
		if (!memchr(f[i], 0, ZN_PKG_FIELD_MAX))
			__builtin_trap();
	if ((r == ZN_OK) != (c->type != ZN_PKG_NONE))
		__builtin_trap();
	if (r != ZN_OK && (c->group[0] || c->name[0] || c->version[0]))
		__builtin_trap();
	if (r == ZN_OK && (!c->name[0] || !c->version[0]))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	if (!size)
		return 0;
	int sel = data[0] % 8;
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	if (sel >= ZN_PKGM_POM_PROPERTIES && sel <= ZN_PKGM_NPM_JSON) {
		check_coord(&c, zn_pkg_parse(sel, p, n, &c));
		return 0;
	}
	const char *nul = memchr(p, 0, n);
	size_t pl = nul ? (size_t)(nul - p) : n;
	const char *m = nul ? nul + 1 : "";
	size_t ml = nul ? n - pl - 1 : 0;
	int kind = zn_pkg_file_kind(p, pl);
	for (int k = ZN_PKGF_JAR; k <= ZN_PKGF_NPM_TGZ; k++) {
		int meta = -1;
		int rank = zn_pkg_member_rank(k, p, pl, m, ml, &meta);
		if ((rank == 0) != (meta == ZN_PKGM_NONE) || rank < 0)
			__builtin_trap();
		zn_result r = zn_pkg_from_path(k, p, pl, &c);
		check_coord(&c, r);
	}
	if (kind < ZN_PKGF_NONE || kind > ZN_PKGF_NPM_TGZ)
		__builtin_trap();
	return 0;
}
