/* SPDX-License-Identifier: MIT */
/* deflate_markers.c - the symbol-mode fast loop: the fast-loop template with 16-bit output. */
#include "deflate_internal.h"

/*
 * Symbol mode (decoding with an unknown window, see deflate_decompress.c) writes 16-bit
 * symbols: bytes, or markers (bit 15 set) for bytes of the window. It is the same loop as the
 * byte variants, instantiated once in portable C; what differs is here:
 *   literals: the entry's up to three bytes are spread to three symbols and stored as one
 *     64-bit word (the fourth symbol is slack, overwritten next);
 *   matches: copied four symbols per 64-bit word (as the generic byte copy does eight bytes),
 *     then marker_end is moved if the copy could have carried a marker along: only a source
 *     starting before marker_end can, so one compare per match is all it costs otherwise.
 * Under callgrind, from a block 1 MB into gzip -6 streams of English text and of C headers
 * where markers last to the end: 15.8 and 8.9 instructions per symbol, against 10.8 and 5.4
 * per byte for the generic byte loop (8.7 and 4.2 for the AVX2 one) on the same blocks with
 * the window known; the careful loop took 29.9 on the text. Scanning every copy from before
 * marker_end one symbol at a time cost 17.7: only copies whose words OR to a marker bit are
 * scanned now, four symbols per step. There is no BMI2 or vector variant yet; the extra-bit
 * extraction (FL_EXTRA, which BMI2 makes two instructions) is a seventh of the count.
 */

static ZN_FORCEINLINE uint64_t widen3(uint32_t v)
{
	return (uint64_t)(v & 0xff) | (uint64_t)(v & 0xff00) << 8 | (uint64_t)(v & 0xff0000) << 16;
}

/* Bit 15 of each of four symbols. */
#define MARKER_BITS 0x8000800080008000ull

/* Move marker_end past the newest marker in out[0..length), if there is one: four symbols per
 * load from the end, which is where it usually is. */
static ZN_FORCEINLINE void note_newest_marker(const uint16_t *out, uint32_t length,
                                              const uint16_t **marker_end)
{
	uint32_t i = length;
	for (; i >= 4; i -= 4) {
		uint64_t m = zn_get_le64(out + i - 4) & MARKER_BITS;
		if (m) {
			/* The highest set bit is 15, 31, 47 or 63: symbol 0..3 of the word. */
			*marker_end = out + i - 4 + (63 - __builtin_clzll(m)) / 16 + 1;
			return;
		}
	}
	while (i-- > 0) {
		if (out[i] & ZN_INFLATE_MARKER) {
			*marker_end = out + i + 1;
			return;
		}
	}
}

/* Copy `length` symbols from `offset` back, over-copying in whole words (the template's
 * output margin, FASTLOOP_OUT_MARGIN symbols, covers at most 16 + 7 of them). The words
 * copied are ORed together on the way: only when one of them holds a marker is the copy
 * scanned for the newest marker it wrote, and only when its source starts before
 * marker_end can it hold one (positions at or after marker_end hold no marker, so neither does
 * a copy from there; an overlapping one re-reads only what it wrote). */
static ZN_FORCEINLINE void copy_symbols(uint16_t *out, uint32_t offset, uint32_t length,
                                        const uint16_t **marker_end)
{
	const uint16_t *src = out - offset;
	uint16_t *o = out;
	uint16_t *const end = out + length;
	uint64_t seen;
	if (offset >= 8) {
		/* 16 bytes at a time; each load reads only symbols written before it. */
		uint64_t a, b;
		seen = 0;
		do {
			a = zn_get_le64(src);
			b = zn_get_le64(src + 4);
			zn_put_le64(o, a);
			zn_put_le64(o + 4, b);
			seen |= a | b;
			o += 8, src += 8;
		} while (o < end);
	} else if (offset >= 4) {
		seen = 0;
		do {
			uint64_t a = zn_get_le64(src);
			zn_put_le64(o, a);
			seen |= a;
			o += 4, src += 4;
		} while (o < end);
	} else {
		/* Periods of 1..3 symbols: replicated into one word, stored at steps of the
		 * largest multiple of the period that fits (4 or 3). */
		uint16_t w[4];
		for (unsigned i = 0; i < 4; i++)
			w[i] = src[i % offset];
		memcpy(&seen, w, 8);
		const uint32_t step = offset == 3 ? 3 : 4;
		do {
			zn_put_le64(o, seen);
			o += step;
		} while (o < end);
	}
	/* `seen` may include symbols read past the source's end: then the scan finds nothing. */
	if (unlikely(seen & MARKER_BITS) && out - offset < *marker_end)
		note_newest_marker(out, length, marker_end);
}

#define FL_NAME               fastloop_symbols
#define FL_ATTR               /* none */
#define FL_SYMBOLS            1
#define FL_PUT_LITS(out, lit) zn_put_le64(out, widen3((lit) >> 8))
#define FL_COPY(o, off, len)  copy_symbols(o, off, len, &marker_end)
#define FL_EXTRA(bits, e)     (((bits) & ((1ull << ((e)&0xff)) - 1)) >> (((e) >> 8) & 63))
#include "deflate_fastloop.h"

int zn_fastloop_symbols(struct zn_sym_ctx *c)
{
	return fastloop_symbols(c);
}
