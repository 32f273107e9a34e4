/* SPDX-License-Identifier: MIT */
/* match_copy_arm.h - LZ match copies for aarch64 NEON, shared by the DEFLATE and zstd decoders:
 * a short period is held in a register and advanced by one tbl per 16 bytes stored. */
#ifndef ZN_MATCH_COPY_ARM_H
#define ZN_MATCH_COPY_ARM_H

#include <arm_neon.h>

#include "common/common.h"

/* The contract is lib/x86/match_copy_x86.h's: copy_neon(out, offset, length) with 1 <= offset
 * <= out - base writes out[0..length) and up to 16 bytes past it, and reads nothing at or after
 * out + length except bytes it has just written. */
/* Same distance classes as the x86 variants (see lib/x86/deflate_fastloop_x86.c): 16-byte
 * copies for offset >= 16, a dup for offset 1, and for offsets 2..15 one tbl per store that
 * advances the expanded period by 16 bytes without loading. */
#define SHUF_ROW(o, a)                                                                             \
	{                                                                                          \
		(a + 0) % o, (a + 1) % o, (a + 2) % o, (a + 3) % o, (a + 4) % o, (a + 5) % o,      \
		        (a + 6) % o, (a + 7) % o, (a + 8) % o, (a + 9) % o, (a + 10) % o,          \
		        (a + 11) % o, (a + 12) % o, (a + 13) % o, (a + 14) % o, (a + 15) % o       \
	}
#define SHUF_TABLE(a)                                                                              \
	{                                                                                          \
		SHUF_ROW(1, a), SHUF_ROW(1, a), SHUF_ROW(2, a), SHUF_ROW(3, a), SHUF_ROW(4, a),    \
		        SHUF_ROW(5, a), SHUF_ROW(6, a), SHUF_ROW(7, a), SHUF_ROW(8, a),            \
		        SHUF_ROW(9, a), SHUF_ROW(10, a), SHUF_ROW(11, a), SHUF_ROW(12, a),         \
		        SHUF_ROW(13, a), SHUF_ROW(14, a), SHUF_ROW(15, a)                          \
	}
static const uint8_t shuf_init[16][16] = SHUF_TABLE(0);
static const uint8_t shuf_adv16[16][16] = SHUF_TABLE(16);

static ZN_FORCEINLINE void copy_neon(uint8_t *out, uint32_t offset, uint32_t length)
{
	const uint8_t *src = out - offset;
	uint8_t *const end = out + length;
	if (offset >= 16) {
		do {
			vst1q_u8(out, vld1q_u8(src));
			out += 16, src += 16;
		} while (out < end);
		return;
	}
	uint8x16_t v;
	if (offset == 1) {
		v = vdupq_n_u8(src[0]);
		do {
			vst1q_u8(out, v);
			out += 16;
		} while (out < end);
		return;
	}
	v = vqtbl1q_u8(vld1q_u8(src), vld1q_u8(shuf_init[offset]));
	const uint8x16_t adv = vld1q_u8(shuf_adv16[offset]);
	do {
		vst1q_u8(out, v);
		v = vqtbl1q_u8(v, adv);
		out += 16;
	} while (out < end);
}

#endif
