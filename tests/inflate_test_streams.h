/* SPDX-License-Identifier: MIT */
/* inflate_test_streams.h - a bit writer and DEFLATE/zlib/gzip stream builders for decoder tests. */
/*
 * Header-only so each test program (and a fuzz corpus dump) can build streams bit by bit,
 * including streams no compressor would write: odd Huffman codes, repeats past the end, block
 * type 3. Everything is `static` and allocation failures abort: this is test code.
 *
 * Bits are written least significant first, as DEFLATE packs them; Huffman codewords are
 * written most significant bit first (bs_code reverses them), as RFC 1951 3.1.1 requires.
 */
#ifndef ZN_INFLATE_TEST_STREAMS_H
#define ZN_INFLATE_TEST_STREAMS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct bs {
	uint8_t *buf;
	size_t len, cap;
	uint64_t acc; /* pending bits, not yet a whole byte */
	unsigned n;   /* how many */
};

static inline void bs_byte(struct bs *b, uint8_t v)
{
	if (b->len == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->buf = realloc(b->buf, b->cap);
		if (!b->buf)
			abort();
	}
	b->buf[b->len++] = v;
}

/* Append the low `nbits` (<= 32) bits of v. */
static inline void bs_bits(struct bs *b, uint32_t v, unsigned nbits)
{
	b->acc |= (uint64_t)(nbits < 32 ? v & ((1u << nbits) - 1) : v) << b->n;
	b->n += nbits;
	while (b->n >= 8) {
		bs_byte(b, (uint8_t)b->acc);
		b->acc >>= 8;
		b->n -= 8;
	}
}

/* A Huffman codeword of `len` bits, most significant bit first. */
static inline void bs_code(struct bs *b, uint32_t code, unsigned len)
{
	uint32_t r = 0;
	for (unsigned i = 0; i < len; i++)
		r |= ((code >> i) & 1) << (len - 1 - i);
	bs_bits(b, r, len);
}

/* Pad to a byte boundary with zero bits. */
static inline void bs_align(struct bs *b)
{
	if (b->n)
		bs_bits(b, 0, 8 - b->n);
}

static inline void bs_bytes(struct bs *b, const void *p, size_t n)
{
	const uint8_t *s = p;
	if (b->n) {
		for (size_t i = 0; i < n; i++)
			bs_bits(b, s[i], 8);
		return;
	}
	for (size_t i = 0; i < n; i++)
		bs_byte(b, s[i]);
}

static inline void bs_le16(struct bs *b, uint32_t v)
{
	bs_bits(b, v & 0xffff, 16);
}
static inline void bs_le32(struct bs *b, uint32_t v)
{
	bs_bits(b, v, 32);
}

static inline void bs_free(struct bs *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* ---- DEFLATE symbols ------------------------------------------------------------------------ */
static const uint16_t len_base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {
        1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t precode_order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                          11, 4,  12, 3, 13, 2, 14, 1, 15};

/* A Huffman code as lengths plus the canonical codewords RFC 1951 3.2.2 derives from them. */
struct hcode {
	unsigned n;
	uint8_t len[320];
	uint16_t code[320];
};

/* GCC 12.2 for aarch64 (Debian 12's cross and native compilers) drops the calls to this function
 * at -O1 and above, leaving every codeword 0: its modref and pure-const analyses together get the
 * stores through `h` wrong (found by running the suite under qemu-aarch64; -fno-ipa-modref
 * -fno-ipa-pure-const also cures it; x86-64 GCC and clang are right). Keep it out of IPA. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#endif
static void
hcode_build(struct hcode *h)
{
	unsigned count[16] = {0}, next[16] = {0};
	for (unsigned i = 0; i < h->n; i++)
		count[h->len[i]]++;
	count[0] = 0;
	for (unsigned bits = 1, code = 0; bits < 16; bits++) {
		code = (code + count[bits - 1]) << 1;
		next[bits] = code;
	}
	for (unsigned i = 0; i < h->n; i++)
		if (h->len[i])
			h->code[i] = (uint16_t)next[h->len[i]]++;
}

static inline void hcode_put(struct bs *b, const struct hcode *h, unsigned sym)
{
	if (sym >= h->n || !h->len[sym])
		abort(); /* a bug in the test */
	bs_code(b, h->code[sym], h->len[sym]);
}

/* The fixed codes of RFC 1951 3.2.6 (all 288 / 32 symbols, including the invalid ones). */
static inline void fixed_codes(struct hcode *lit, struct hcode *dist)
{
	lit->n = 288;
	for (unsigned i = 0; i < 288; i++)
		lit->len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	hcode_build(lit);
	dist->n = 32;
	for (unsigned i = 0; i < 32; i++)
		dist->len[i] = 5;
	hcode_build(dist);
}

/* A match of length 3..258 and distance 1..32768 with the given codes. `len284` writes 258 as
 * symbol 284 with extra bits 31 (227 + 31), which zlib never emits but decoders accept. */
static inline void put_match(struct bs *b, const struct hcode *lit, const struct hcode *dist,
                             unsigned len, unsigned d, int len284)
{
	unsigned ls = 28;
	if (len284 && len == 258)
		ls = 27;
	else
		while (len_base[ls] > len)
			ls--;
	hcode_put(b, lit, 257 + ls);
	bs_bits(b, len - len_base[ls], len_extra[ls]);
	unsigned ds = 29;
	while (dist_base[ds] > d)
		ds--;
	hcode_put(b, dist, ds);
	bs_bits(b, d - dist_base[ds], dist_extra[ds]);
}

/* Block headers. */
static inline void put_stored(struct bs *b, int final, const void *data, unsigned n)
{
	bs_bits(b, final, 1);
	bs_bits(b, 0, 2);
	bs_align(b);
	bs_le16(b, n);
	bs_le16(b, ~n & 0xffff);
	bs_bytes(b, data, n);
}

static inline void put_fixed_header(struct bs *b, int final)
{
	bs_bits(b, final, 1);
	bs_bits(b, 1, 2);
}

/*
 * A dynamic block header for litlen code `lit` (lit->n = HLIT, 257..288 allowed by the field) and
 * distance code `dist` (1..32). The code lengths are sent with precode `pre` (19 lengths) as the
 * sequence `seq` of (symbol, extra value) pairs; with seq == NULL they are sent plainly, one
 * symbol 0..15 per length, with a complete precode of 4-bit codes for 0..15.
 * `hclen` is how many precode lengths are sent (4..19; 0 = 19).
 */
struct cl_item {
	uint8_t sym, extra;
};
static inline void put_dynamic_header(struct bs *b, int final, const struct hcode *lit,
                                      const struct hcode *dist, const struct hcode *pre_in,
                                      const struct cl_item *seq, size_t nseq, unsigned hclen)
{
	struct hcode pre;
	if (pre_in) {
		pre = *pre_in;
	} else {
		memset(&pre, 0, sizeof(pre));
		pre.n = 19;
		for (unsigned i = 0; i < 16; i++)
			pre.len[i] = 4;
	}
	hcode_build(&pre);
	if (!hclen)
		hclen = 19;
	bs_bits(b, final, 1);
	bs_bits(b, 2, 2);
	bs_bits(b, lit->n - 257, 5);
	bs_bits(b, dist->n - 1, 5);
	bs_bits(b, hclen - 4, 4);
	for (unsigned i = 0; i < hclen; i++)
		bs_bits(b, pre.len[precode_order[i]], 3);
	if (seq) {
		for (size_t i = 0; i < nseq; i++) {
			hcode_put(b, &pre, seq[i].sym);
			if (seq[i].sym == 16)
				bs_bits(b, seq[i].extra, 2);
			else if (seq[i].sym == 17)
				bs_bits(b, seq[i].extra, 3);
			else if (seq[i].sym == 18)
				bs_bits(b, seq[i].extra, 7);
		}
		return;
	}
	for (unsigned i = 0; i < lit->n; i++)
		hcode_put(b, &pre, lit->len[i]);
	for (unsigned i = 0; i < dist->n; i++)
		hcode_put(b, &pre, dist->len[i]);
}

/* ---- containers ----------------------------------------------------------------------------- */
/* zlib header for a 32 KiB window, no dictionary, valid FCHECK. */
static inline void put_zlib_header(struct bs *b)
{
	bs_byte(b, 0x78);
	bs_byte(b, 0x9c);
}

static inline void put_zlib_trailer(struct bs *b, const void *data, size_t n)
{
	uint32_t a = (uint32_t)adler32(1, data, (uInt)n);
	bs_align(b);
	bs_byte(b, (uint8_t)(a >> 24));
	bs_byte(b, (uint8_t)(a >> 16));
	bs_byte(b, (uint8_t)(a >> 8));
	bs_byte(b, (uint8_t)a);
}

/* gzip header: flags FTEXT=1 FHCRC=2 FEXTRA=4 FNAME=8 FCOMMENT=16 (0x100 with FEXTRA: an empty
 * extra field); `bad_hcrc` corrupts the header CRC. */
static inline void put_gzip_header(struct bs *b, unsigned flags, int bad_hcrc)
{
	size_t start = b->len;
	static const uint8_t fixed[10] = {0x1f, 0x8b, 8, 0, 0x12, 0x34, 0x56, 0x78, 0, 3};
	bs_bytes(b, fixed, 10);
	b->buf[start + 3] = (uint8_t)flags;
	if ((flags & 0x104) == 0x104) {
		bs_le16(b, 0);
	} else if (flags & 4) {
		/* Two subfields, as bgzip writes (BC) plus another. */
		static const uint8_t extra[] = {'B', 'C', 2, 0, 0x34, 0x12, 'Z',
		                                'N', 3,   0, 1, 2,    3};
		bs_le16(b, sizeof(extra));
		bs_bytes(b, extra, sizeof(extra));
	}
	if (flags & 8)
		bs_bytes(b, "name.txt", 9);
	if (flags & 16)
		bs_bytes(b, "a comment\n", 11);
	if (flags & 2) {
		uint32_t c = (uint32_t)crc32(0, b->buf + start, (uInt)(b->len - start));
		bs_le16(b, (c & 0xffff) ^ (bad_hcrc ? 1u : 0u));
	}
}

static inline void put_gzip_trailer(struct bs *b, const void *data, size_t n)
{
	bs_align(b);
	bs_le32(b, (uint32_t)crc32(0, data, (uInt)n));
	bs_le32(b, (uint32_t)n);
}

#endif
