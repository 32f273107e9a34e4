/* SPDX-License-Identifier: MIT */
/* zstd_test_frames.h - a zstd frame writer for decoder tests: headers, raw and RLE blocks, and
 * compressed blocks of raw literals and sequences in RLE mode, byte by byte. */
/*
 * Header-only (everything `static`; allocation failures abort). It writes frames no compressor
 * would: any header field, repeat-offset codes chosen by hand, offsets past the window, literal
 * lengths past the literals, Repeat_Mode without a previous table, and so on. Sequences use RLE
 * mode for all three codes, so one compressed block holds sequences that share their literal
 * length, offset and match length codes, and differ in the codes' extra bits; the bitstream then
 * holds only extra bits (RLE states read none). The decoder reads a sequence's offset, match
 * length and literal length bits in that order from the end of the stream, so the writer emits
 * the sequences last to first, each literal length, match length, offset, then the end marker.
 */
#ifndef ZN_ZSTD_TEST_FRAMES_H
#define ZN_ZSTD_TEST_FRAMES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct zf {
	uint8_t *p;
	size_t len, cap;
	uint64_t acc; /* bit writer: pending bits */
	unsigned nbits;
};

static inline void zf_byte(struct zf *f, unsigned v)
{
	if (f->len == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 256;
		f->p = realloc(f->p, f->cap);
		if (!f->p)
			abort();
	}
	f->p[f->len++] = (uint8_t)v;
}

static inline void zf_le(struct zf *f, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		zf_byte(f, (unsigned)(v >> (8 * i)) & 0xff);
}

static inline void zf_bytes(struct zf *f, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		zf_byte(f, ((const uint8_t *)p)[i]);
}

static inline void zf_bits(struct zf *f, uint32_t v, unsigned n)
{
	f->acc |= (uint64_t)(n < 32 ? v & ((1u << n) - 1) : v) << f->nbits;
	f->nbits += n;
	while (f->nbits >= 8) {
		zf_byte(f, (unsigned)f->acc & 0xff);
		f->acc >>= 8;
		f->nbits -= 8;
	}
}

/* End a backward bitstream: the marker bit, zeros to the byte boundary. */
static inline void zf_bits_end(struct zf *f)
{
	zf_bits(f, 1, 1);
	if (f->nbits)
		zf_bits(f, 0, 8 - f->nbits);
}

#define ZF_NO_SIZE UINT64_MAX

/* A frame header: fcs_bytes 0 (absent, or 1 byte when single), 1, 2, 4 or 8; wd the window
 * descriptor (ignored when single); did_bytes 0, 1, 2 or 4. */
static inline void zf_header(struct zf *f, int single, uint64_t fcs, unsigned fcs_bytes,
                             unsigned wd, uint32_t dict_id, unsigned did_bytes, int checksum)
{
	zf_le(f, 0xFD2FB528u, 4);
	unsigned flag = fcs_bytes == 8 ? 3 : fcs_bytes == 4 ? 2 : fcs_bytes == 2 ? 1 : 0;
	unsigned did = did_bytes == 4 ? 3 : did_bytes;
	zf_byte(f, flag << 6 | (unsigned)single << 5 | (unsigned)checksum << 2 | did);
	if (!single)
		zf_byte(f, wd);
	zf_le(f, dict_id, did_bytes);
	if (fcs_bytes == 2)
		fcs -= 256;
	if (fcs_bytes || single)
		zf_le(f, fcs, fcs_bytes ? fcs_bytes : 1);
}

static inline void zf_block_header(struct zf *f, int last, unsigned type, uint32_t size)
{
	zf_le(f, (uint32_t)last | type << 1 | size << 3, 3);
}

static inline void zf_raw_block(struct zf *f, int last, const void *p, uint32_t n)
{
	zf_block_header(f, last, 0, n);
	zf_bytes(f, p, n);
}

static inline void zf_rle_block(struct zf *f, int last, uint8_t b, uint32_t n)
{
	zf_block_header(f, last, 1, n);
	zf_byte(f, b);
}

/* A raw literals section header (size format 11: 3 bytes, 20 bits). */
static inline void zf_raw_literals(struct zf *f, const void *lit, uint32_t n)
{
	zf_le(f, 0 | 3u << 2 | n << 4, 3);
	zf_bytes(f, lit, n);
}

static inline void zf_nseq(struct zf *f, uint32_t n)
{
	if (n < 128) {
		zf_byte(f, n);
	} else if (n < 0x7f00) {
		zf_byte(f, (n >> 8) + 128);
		zf_byte(f, n & 255);
	} else {
		zf_byte(f, 255);
		zf_le(f, n - 0x7f00, 2);
	}
}

/* The codes of a value (RFC 8878 3.1.1.3.2.1.1). */
static inline unsigned zf_ll_code(uint32_t ll, uint32_t *base, unsigned *bits)
{
	static const uint32_t b[36] = {0,   1,   2,    3,    4,    5,    6,     7,     8,
	                               9,   10,  11,   12,   13,   14,   15,    16,    18,
	                               20,  22,  24,   28,   32,   40,   48,    64,    128,
	                               256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
	static const uint8_t x[36] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  1,  1,
	                              1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	unsigned c = 35;
	while (b[c] > ll)
		c--;
	*base = b[c];
	*bits = x[c];
	return c;
}

static inline unsigned zf_ml_code(uint32_t ml, uint32_t *base, unsigned *bits)
{
	static const uint32_t hi[21] = {35,   37,   39,   41,   43,    47,    51,
	                                59,   67,   83,   99,   131,   259,   515,
	                                1027, 2051, 4099, 8195, 16387, 32771, 65539};
	static const uint8_t x[21] = {1, 1, 1, 1,  2,  2,  3,  3,  4,  4, 5,
	                              7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	if (ml < 35) {
		*base = ml;
		*bits = 0;
		return ml - 3;
	}
	unsigned c = 20;
	while (hi[c] > ml)
		c--;
	*base = hi[c];
	*bits = x[c];
	return 32 + c;
}

struct zf_seq {
	uint32_t ll, ml;
	uint32_t ofv; /* Offset_Value: offset + 3, or a repeat code 1..3 */
};

/* A compressed block: raw literals, then n sequences whose tables are in RLE mode (1) or
 * Repeat_Mode (3, meant to repeat an earlier block's RLE table) per code, in the modes byte's
 * layout: ll << 6 | of << 4 | ml << 2 (0x54: all RLE). All sequences share the first one's
 * codes: the caller picks values accordingly. */
static inline void zf_seq_block_modes(struct zf *f, int last, const void *lit, uint32_t nlit,
                                      const struct zf_seq *s, uint32_t n, unsigned modes)
{
	struct zf body = {0};
	zf_raw_literals(&body, lit, nlit);
	zf_nseq(&body, n);
	if (n) {
		uint32_t llb, mlb;
		unsigned llx, mlx;
		unsigned llc = zf_ll_code(s[0].ll, &llb, &llx);
		unsigned mlc = zf_ml_code(s[0].ml, &mlb, &mlx);
		unsigned ofc = 31 - (unsigned)__builtin_clz(s[0].ofv);
		zf_byte(&body, modes);
		if ((modes >> 6) == 1)
			zf_byte(&body, llc);
		if (((modes >> 4) & 3) == 1)
			zf_byte(&body, ofc);
		if (((modes >> 2) & 3) == 1)
			zf_byte(&body, mlc);
		for (uint32_t i = n; i-- > 0;) {
			uint32_t b;
			unsigned x;
			if (zf_ll_code(s[i].ll, &b, &x) != llc ||
			    zf_ml_code(s[i].ml, &b, &x) != mlc ||
			    31 - (unsigned)__builtin_clz(s[i].ofv) != ofc)
				abort(); /* the test asked for codes RLE mode cannot give */
			zf_bits(&body, s[i].ll - llb, llx);
			zf_bits(&body, s[i].ml - mlb, mlx);
			zf_bits(&body, s[i].ofv - (1u << ofc), ofc);
		}
		zf_bits_end(&body);
	}
	zf_block_header(f, last, 2, (uint32_t)body.len);
	zf_bytes(f, body.p, body.len);
	free(body.p);
}

static inline void zf_seq_block(struct zf *f, int last, const void *lit, uint32_t nlit,
                                const struct zf_seq *s, uint32_t n)
{
	zf_seq_block_modes(f, last, lit, nlit, s, n, 0x54);
}

#endif
