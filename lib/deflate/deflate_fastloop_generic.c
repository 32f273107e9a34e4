/* SPDX-License-Identifier: MIT */
/* deflate_fastloop_generic.c - the portable fast loop: 8-byte word match copies, plain C. */
#include "deflate_internal.h"

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

#define FL_NAME              zn_fastloop_generic_impl
#define FL_ATTR              /* none */
#define FL_COPY(o, off, len) copy_words(o, off, len)
#define FL_EXTRA(bits, e)    (((bits) & ((1ull << ((e)&0xff)) - 1)) >> (((e) >> 8) & 63))
#include "deflate_fastloop.h"

int zn_fastloop_generic(struct zn_fast_ctx *c)
{
	return zn_fastloop_generic_impl(c);
}

#if !defined(__x86_64__) && !defined(__aarch64__)
zn_fastloop_fn zn_select_fastloop(uint32_t features, const char **name)
{
	(void)features;
	if (name)
		*name = "generic";
	return zn_fastloop_generic;
}

zn_pair_fn zn_select_pair(uint32_t features)
{
	(void)features;
	return zn_pair_literals_generic;
}

zn_resolve_fn zn_select_resolve(uint32_t features)
{
	(void)features;
	return zn_resolve_generic;
}
#endif
