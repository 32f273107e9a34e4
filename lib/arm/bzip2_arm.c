/* SPDX-License-Identifier: MIT */
/* bzip2_arm.c - aarch64 NEON variant of the bzip2 symbol loop (move-to-front by vector rows). */
#include <arm_neon.h>

#include "bzip2/bzip2_internal.h"
#include "common/cpu_features.h"

/* The list as 16 rows of 16 bytes, moved as in lib/x86/bzip2_x86.c: the row of list[j] shifts
 * its first columns right by one (ext, then bsl with mask[c]), the rows before it shift whole,
 * and list[j] goes in front. */
static const uint8_t first_cols[16][16] = {
#define M(c)                                                                                       \
	{                                                                                          \
		0xff, (c) >= 1 ? 0xff : 0, (c) >= 2 ? 0xff : 0, (c) >= 3 ? 0xff : 0,               \
		        (c) >= 4 ? 0xff : 0, (c) >= 5 ? 0xff : 0, (c) >= 6 ? 0xff : 0,             \
		        (c) >= 7 ? 0xff : 0, (c) >= 8 ? 0xff : 0, (c) >= 9 ? 0xff : 0,             \
		        (c) >= 10 ? 0xff : 0, (c) >= 11 ? 0xff : 0, (c) >= 12 ? 0xff : 0,          \
		        (c) >= 13 ? 0xff : 0, (c) >= 14 ? 0xff : 0, (c) >= 15 ? 0xff : 0           \
	}
        M(0), M(1), M(2),  M(3),  M(4),  M(5),  M(6),  M(7),
        M(8), M(9), M(10), M(11), M(12), M(13), M(14), M(15),
#undef M
};

static ZN_FORCEINLINE uint8_t mtf_neon(uint8_t *list, unsigned j)
{
	uint8_t b = list[j];
	unsigned r = j >> 4;
	uint8x16_t mask = vld1q_u8(first_cols[j & 15]);
	uint8x16_t v = vld1q_u8(list + 16 * r), front = vsetq_lane_u8(b, vdupq_n_u8(0), 15);
	if (likely(r == 0)) {
		uint8x16_t moved = vextq_u8(front, v, 15);
		vst1q_u8(list, vbslq_u8(mask, moved, v));
		return b;
	}
	uint8x16_t prev = vld1q_u8(list + 16 * (r - 1));
	vst1q_u8(list + 16 * r, vbslq_u8(mask, vextq_u8(prev, v, 15), v));
	for (unsigned k = r - 1; k > 0; k--) {
		uint8x16_t cur = prev;
		prev = vld1q_u8(list + 16 * (k - 1));
		vst1q_u8(list + 16 * k, vextq_u8(prev, cur, 15));
	}
	vst1q_u8(list, vextq_u8(front, prev, 15));
	return b;
}

static ZN_FORCEINLINE void fill_neon(uint8_t *out, uint8_t b, uint32_t n)
{
	uint8x16_t v = vdupq_n_u8(b);
	uint8_t *const end = out + n;
	do {
		vst1q_u8(out, v);
		out += 16;
	} while (out < end);
}

#define SYM_NAME            symbols_neon
#define SYM_ATTR            /* NEON is part of the aarch64 baseline */
#define SYM_MTF(list, j)    mtf_neon(list, j)
#define SYM_FILL(out, b, n) fill_neon(out, b, n)
#include "bzip2/bzip2_symbols.h"

zn_bz2_sym_fn zn_bz2_select_symbols(uint32_t f, const char **name)
{
	if (f & ZN_CPU_NEON) {
		if (name)
			*name = "neon";
		return symbols_neon;
	}
	if (name)
		*name = "generic";
	return zn_bz2_symbols_generic;
}

zn_bz2_crc_fn zn_bz2_select_crc(uint32_t f)
{
	(void)f;
	return zn_bz2_crc_generic;
}

zn_bz2_scan_fn zn_bz2_select_scan(uint32_t f, const char **name)
{
	(void)f;
	if (name)
		*name = "generic";
	return zn_bz2_scan_generic;
}
