/* SPDX-License-Identifier: MIT */
/* bzip2_symbols_generic.c - the portable symbol loop: byte moves and 8-byte word fills. */
#include "bzip2/bzip2_internal.h"

/* Move list[j] to the front. Indices up to 8 (most of them, see bzip2_symbols.h) shift one
 * 8-byte word; the rest leave it to memmove. */
static ZN_FORCEINLINE uint8_t mtf_move(uint8_t *list, unsigned j)
{
	uint8_t b = list[j];
	if (j < 8) {
		uint64_t w = zn_get_le64(list);
		uint64_t keep = j == 7 ? 0 : ~0ull << (8 * (j + 1)); /* bytes after j stay */
		w = (w & keep) | ((w << 8) & ~keep) | b;
		zn_put_le64(list, w);
		return b;
	}
	memmove(list + 1, list, j);
	list[0] = b;
	return b;
}

static ZN_FORCEINLINE void fill_words(uint8_t *out, uint8_t b, uint32_t n)
{
	uint64_t v = 0x0101010101010101ull * b;
	uint8_t *const end = out + n;
	do {
		zn_put_le64(out, v);
		out += 8;
	} while (out < end);
}

#define SYM_NAME            zn_bz2_symbols_generic_impl
#define SYM_ATTR            /* none */
#define SYM_MTF(list, j)    mtf_move(list, j)
#define SYM_FILL(out, b, n) fill_words(out, b, n)
#include "bzip2/bzip2_symbols.h"

int zn_bz2_symbols_generic(struct bz2_sym_ctx *c)
{
	return zn_bz2_symbols_generic_impl(c);
}

#if !defined(__x86_64__) && !defined(__aarch64__)
zn_bz2_sym_fn zn_bz2_select_symbols(uint32_t features, const char **name)
{
	(void)features;
	if (name)
		*name = "generic";
	return zn_bz2_symbols_generic;
}

zn_bz2_crc_fn zn_bz2_select_crc(uint32_t features)
{
	(void)features;
	return zn_bz2_crc_generic;
}

zn_bz2_scan_fn zn_bz2_select_scan(uint32_t features, const char **name)
{
	(void)features;
	if (name)
		*name = "generic";
	return zn_bz2_scan_generic;
}
#endif
