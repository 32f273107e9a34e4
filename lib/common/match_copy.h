/* SPDX-License-Identifier: MIT */
/* match_copy.h - the portable LZ match copy (8-byte words), shared by the DEFLATE and zstd
 * decoders' generic fast loops. */
#ifndef ZN_MATCH_COPY_H
#define ZN_MATCH_COPY_H

#include "common/common.h"

/* The contract is lib/x86/match_copy_x86.h's; copy_words writes up to 24 bytes past
 * out + length - 1. */
/* Copy a match with 8-byte words. offset >= 8: each load reads only bytes written before it.
 * offset 1..7: the period is replicated into one word once, then stored at steps of the largest
 * multiple of the period that is <= 8, so the loop never loads. */
static ZN_FORCEINLINE void copy_words(uint8_t *out, uint32_t offset, uint32_t length)
{
	const uint8_t *src = out - offset;
	uint8_t *const end = out + length;
	if (offset >= 8) {
		zn_put_le64(out, zn_get_le64(src));
		zn_put_le64(out + 8, zn_get_le64(src + 8));
		zn_put_le64(out + 16, zn_get_le64(src + 16));
		out += 24, src += 24;
		while (out < end) {
			zn_put_le64(out, zn_get_le64(src));
			out += 8, src += 8;
		}
		return;
	}
	uint64_t v;
	uint32_t step;
	if (offset == 1) {
		v = 0x0101010101010101ull * src[0];
		step = 8;
	} else {
		uint8_t b[8];
		for (unsigned i = 0; i < 8; i++)
			b[i] = src[i % offset];
		memcpy(&v, b, 8);
		step = 8 - 8 % offset;
	}
	do {
		zn_put_le64(out, v);
		out += step;
	} while (out < end);
}

#endif
