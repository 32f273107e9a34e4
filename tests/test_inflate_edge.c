/* SPDX-License-Identifier: MIT */
/* test_inflate_edge.c - hand-built DEFLATE/zlib/gzip streams: edge cases that must decode and
 * malformed ones that must fail with the right error, whole-buffer and streaming. */
#include <string.h>
#include <zlib.h>

#include "test_util.h"

/* ---- a bit writer for hand-made streams ---- */
struct bw {
	uint8_t *buf;
	size_t cap, pos; /* pos in bits */
};

static void put_bits(struct bw *w, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, w->pos++) {
		CHECK(w->pos / 8 < w->cap);
		if (!(w->pos & 7))
			w->buf[w->pos / 8] = 0;
		w->buf[w->pos / 8] |= (uint8_t)((i < 32 ? (v >> i) & 1 : 0) << (w->pos & 7));
	}
}

/* Huffman codes go MSB first. */
static void put_code(struct bw *w, uint32_t code, unsigned len)
{
	for (unsigned i = len; i-- > 0;)
		put_bits(w, (code >> i) & 1, 1);
}

static void align(struct bw *w)
{
	while (w->pos & 7)
		put_bits(w, 0, 1);
}

static size_t bw_bytes(const struct bw *w)
{
	return (w->pos + 7) / 8;
}

/* Canonical codes from lengths. */
static void canon(const uint8_t *lens, unsigned n, uint32_t *codes)
{
	unsigned count[16] = {0}, next[16];
	for (unsigned i = 0; i < n; i++)
		count[lens[i]]++;
	count[0] = 0;
	unsigned code = 0;
	for (unsigned l = 1; l < 16; l++) {
		code = (code + count[l - 1]) << 1;
		next[l] = code;
	}
	for (unsigned i = 0; i < n; i++)
		if (lens[i])
			codes[i] = next[lens[i]]++;
}

/* Fixed-code symbols. */
static void fixed_lit(struct bw *w, unsigned sym)
{
	if (sym < 144)
		put_code(w, 0x30 + sym, 8);
	else if (sym < 256)
		put_code(w, 0x190 + sym - 144, 9);
	else if (sym < 280)
		put_code(w, sym - 256, 7);
	else
		put_code(w, 0xc0 + sym - 280, 8);
}

static void fixed_dist(struct bw *w, unsigned sym, uint32_t extra, unsigned nextra)
{
	put_code(w, sym, 5);
	put_bits(w, extra, nextra);
}

static const uint8_t clorder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                    11, 4,  12, 3, 13, 2, 14, 1, 15};

/* A dynamic block header: `pre` are the 19 precode lengths; `items` the code-length symbols
 * with their extra bits (sym, extra) pairs. */
static void dyn_header(struct bw *w, int final, unsigned hlit, unsigned hdist, const uint8_t *pre,
                       const unsigned (*items)[2], unsigned nitems)
{
	uint32_t pc[19];
	canon(pre, 19, pc);
	put_bits(w, final, 1);
	put_bits(w, 2, 2);
	put_bits(w, hlit - 257, 5);
	put_bits(w, hdist - 1, 5);
	put_bits(w, 19 - 4, 4);
	for (unsigned i = 0; i < 19; i++)
		put_bits(w, pre[clorder[i]], 3);
	for (unsigned i = 0; i < nitems; i++) {
		unsigned s = items[i][0];
		put_code(w, pc[s], pre[s]);
		if (s == 16)
			put_bits(w, items[i][1], 2);
		else if (s == 17)
			put_bits(w, items[i][1], 3);
		else if (s == 18)
			put_bits(w, items[i][1], 7);
	}
}

/* Decode with both APIs; check the result and, on success, the output. */
static void expect(int fmt, const uint8_t *in, size_t len, zn_result want, const uint8_t *out_want,
                   size_t out_len)
{
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, fmt));
	uint8_t *gin = tu_guard_alloc(len ? len : 1);
	memcpy(gin, in, len);
	size_t cap = out_len + 100000;
	uint8_t *out = tu_guard_alloc(cap);
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_inflate(d, gin, len, out, cap, &info);
	if (r != want)
		fprintf(stderr, "whole-buffer: got %s, want %s\n", zn_result_name(r),
		        zn_result_name(want));
	CHECK(r == want);
	if (want == ZN_OK) {
		CHECK_EQ_U64(info.out_len, out_len);
		CHECK(out_len == 0 || memcmp(out, out_want, out_len) == 0);
	}
	/* Streaming, one byte at a time and all at once. */
	for (int mode = 0; mode < 2; mode++) {
		CHECK_OK(zn_inflate_stream_reset(d));
		size_t pos = 0, got = 0;
		int done = 0;
		r = ZN_OK;
		while (!done) {
			size_t piece = mode ? len - pos : (pos < len ? 1 : 0);
			size_t used, olen;
			const void *o;
			r = zn_inflate_stream(d, gin + pos, piece, pos + piece == len, &used, &o,
			                      &olen, &done);
			if (r != ZN_OK)
				break;
			if (want == ZN_OK) {
				CHECK(got + olen <= out_len);
				CHECK(memcmp(o, out_want + got, olen) == 0);
			}
			got += olen;
			pos += used;
		}
		if (r != want)
			fprintf(stderr, "stream mode %d: got %s, want %s\n", mode,
			        zn_result_name(r), zn_result_name(want));
		CHECK(r == want);
		if (want == ZN_OK)
			CHECK_EQ_U64(got, out_len);
	}
	tu_guard_free(gin, len ? len : 1);
	tu_guard_free(out, cap);
	zn_inflater_free(d);
}

static uint8_t sbuf[1 << 20], obuf[1 << 20];

static void test_stored(void)
{
	struct bw w = {sbuf, sizeof(sbuf), 0};
	/* Empty final stored block. */
	put_bits(&w, 1, 1);
	put_bits(&w, 0, 2);
	align(&w);
	put_bits(&w, 0, 16);
	put_bits(&w, 0xffff, 16);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_OK, obuf, 0);

	/* Stored blocks of 0, 65535 and 40000 bytes (> 32 KiB in all), then a fixed block that
	 * copies with distance 32768 and length 258 both ways (symbol 285 and 284 + 31). */
	w.pos = 0;
	size_t n = 0;
	for (size_t i = 0; i < 65535 + 40000; i++)
		obuf[i] = (uint8_t)(i * 7 + (i >> 9));
	static const unsigned sizes[3] = {0, 65535, 40000};
	for (int b = 0; b < 3; b++) {
		put_bits(&w, 0, 1);
		put_bits(&w, 0, 2);
		align(&w);
		put_bits(&w, sizes[b], 16);
		put_bits(&w, ~sizes[b] & 0xffff, 16);
		for (unsigned i = 0; i < sizes[b]; i++)
			put_bits(&w, obuf[n + i], 8);
		n += sizes[b];
	}
	put_bits(&w, 1, 1);
	put_bits(&w, 1, 2);
	fixed_lit(&w, 285);           /* length 258 */
	fixed_dist(&w, 29, 8191, 13); /* distance 24577 + 8191 = 32768 */
	for (int i = 0; i < 258; i++, n++)
		obuf[n] = obuf[n - 32768];
	fixed_lit(&w, 284); /* 227 + 31 = 258 */
	put_bits(&w, 31, 5);
	fixed_dist(&w, 0, 0, 0); /* distance 1 */
	for (int i = 0; i < 258; i++, n++)
		obuf[n] = obuf[n - 1];
	fixed_lit(&w, 256);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_OK, obuf, n);

	/* LEN != ~NLEN. */
	w.pos = 0;
	put_bits(&w, 1, 1);
	put_bits(&w, 0, 2);
	align(&w);
	put_bits(&w, 5, 16);
	put_bits(&w, 0xfffb, 16);
	put_bits(&w, 0, 40);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_STORED_LEN, NULL, 0);
	/* Stored data cut short. */
	w.pos = 0;
	put_bits(&w, 1, 1);
	put_bits(&w, 0, 2);
	align(&w);
	put_bits(&w, 5, 16);
	put_bits(&w, 0xfffa, 16);
	put_bits(&w, 0, 24);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_TRUNCATED, NULL, 0);
}

static void test_fixed(void)
{
	struct bw w = {sbuf, sizeof(sbuf), 0};
	/* Many empty blocks, then a final one with "ab" and a match of length 10, distance 2. */
	for (int i = 0; i < 1000; i++) {
		put_bits(&w, 0, 1);
		put_bits(&w, 1, 2);
		fixed_lit(&w, 256);
	}
	put_bits(&w, 1, 1);
	put_bits(&w, 1, 2);
	fixed_lit(&w, 'a');
	fixed_lit(&w, 'b');
	fixed_lit(&w, 264); /* length 10 */
	fixed_dist(&w, 1, 0, 0);
	fixed_lit(&w, 256);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_OK, (const uint8_t *)"abababababab", 12);

	/* Invalid block type. */
	uint8_t bt3[] = {0x07, 0, 0, 0};
	expect(ZN_FORMAT_RAW, bt3, sizeof(bt3), ZN_ERR_BAD_BLOCK_TYPE, NULL, 0);

	/* Literal/length 286 and 287, distance 30 and 31. */
	for (unsigned sym = 286; sym <= 287; sym++) {
		w.pos = 0;
		put_bits(&w, 1, 1);
		put_bits(&w, 1, 2);
		fixed_lit(&w, 'a');
		fixed_lit(&w, sym);
		put_bits(&w, 0, 32);
		expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_SYMBOL, NULL, 0);
	}
	for (unsigned sym = 30; sym <= 31; sym++) {
		w.pos = 0;
		put_bits(&w, 1, 1);
		put_bits(&w, 1, 2);
		fixed_lit(&w, 'a');
		fixed_lit(&w, 257);
		fixed_dist(&w, sym, 0, 0);
		put_bits(&w, 0, 32);
		expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_SYMBOL, NULL, 0);
	}
	/* Distance too far back: 1 byte of output, distance 2. */
	w.pos = 0;
	put_bits(&w, 1, 1);
	put_bits(&w, 1, 2);
	fixed_lit(&w, 'a');
	fixed_lit(&w, 257);
	fixed_dist(&w, 1, 0, 0);
	fixed_lit(&w, 256);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_DISTANCE, NULL, 0);
	/* The same far into a long stream (fast loop): 2000 literals, then distance 2001. */
	w.pos = 0;
	put_bits(&w, 1, 1);
	put_bits(&w, 1, 2);
	for (int i = 0; i < 2000; i++)
		fixed_lit(&w, 'a' + i % 26);
	fixed_lit(&w, 257);
	fixed_dist(&w, 21, 2001 - 1537, 9);
	for (int i = 0; i < 2000; i++)
		fixed_lit(&w, 'a');
	fixed_lit(&w, 256);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_DISTANCE, NULL, 0);
	/* Missing end of block / input ends mid-block. */
	w.pos = 0;
	put_bits(&w, 1, 1);
	put_bits(&w, 1, 2);
	fixed_lit(&w, 'a');
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_TRUNCATED, NULL, 0);
	expect(ZN_FORMAT_RAW, sbuf, 0, ZN_ERR_TRUNCATED, NULL, 0);
	/* A final block that ends exactly at the last bit of the input. */
	w.pos = 0;
	put_bits(&w, 1, 1);
	put_bits(&w, 1, 2);
	fixed_lit(&w, 'a'); /* 8 bits */
	fixed_lit(&w, 256); /* 7 bits -> 18 bits */
	put_bits(&w, 0, 6);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_OK, (const uint8_t *)"a", 1);
}

static void test_dynamic(void)
{
	struct bw w = {sbuf, sizeof(sbuf), 0};
	uint8_t pre[19] = {0};
	for (int i = 0; i < 16; i++)
		pre[i] = 4; /* symbols 0..15 with 4 bits: complete, no repeats */
	/* A valid dynamic block: literal 'a'..'d' and EOB with 3-bit... lengths: 'a'=1,'b'=2,
	 * 256=2 and one distance code of length 1. */
	unsigned items[400][2];
	unsigned n = 0;
	for (unsigned s = 0; s < 257; s++)
		items[n][0] = s == 'a' ? 1 : s == 'b' ? 2 : s == 256 ? 2 : 0, items[n++][1] = 0;
	items[n][0] = 1, items[n++][1] = 0; /* one distance code: incomplete, allowed */
	dyn_header(&w, 1, 257, 1, pre, (const unsigned(*)[2])items, n);
	put_code(&w, 0, 1); /* 'a' */
	put_code(&w, 2, 2); /* 'b' */
	put_code(&w, 3, 2); /* EOB */
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_OK, (const uint8_t *)"ab", 2);

	/* Missing end-of-block code. */
	w.pos = 0;
	items[256][0] = 0;
	items['c'][0] = 2;
	dyn_header(&w, 1, 257, 1, pre, (const unsigned(*)[2])items, n);
	put_bits(&w, 0, 16);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	items['c'][0] = 0;
	items[256][0] = 2;
	/* Over-subscribed: another one-bit code. */
	w.pos = 0;
	items['c'][0] = 1;
	dyn_header(&w, 1, 257, 1, pre, (const unsigned(*)[2])items, n);
	put_bits(&w, 0, 16);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	/* Incomplete literal/length code ('a'=1, 256=2 only). */
	w.pos = 0;
	items['c'][0] = 0;
	items['b'][0] = 0;
	dyn_header(&w, 1, 257, 1, pre, (const unsigned(*)[2])items, n);
	put_bits(&w, 0, 16);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	items['b'][0] = 2;
	/* Incomplete distance code with two lengths (1 and 3). */
	w.pos = 0;
	items[n][0] = 3, items[n][1] = 0;
	dyn_header(&w, 1, 257, 2, pre, (const unsigned(*)[2])items, n + 1);
	put_bits(&w, 0, 16);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	/* Too many literal/length (287) and distance (31) symbols. */
	w.pos = 0;
	dyn_header(&w, 1, 287, 1, pre, (const unsigned(*)[2])items, 0);
	put_bits(&w, 0, 64);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	w.pos = 0;
	dyn_header(&w, 1, 257, 31, pre, (const unsigned(*)[2])items, 0);
	put_bits(&w, 0, 64);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);

	/* Code-length repeats: 16 first is invalid; a repeat past the end is invalid. */
	uint8_t pre2[19] = {0};
	for (int i = 0; i < 14; i++)
		pre2[i] = 4;
	pre2[16] = 4, pre2[18] = 4; /* 16 codes of 4 bits */
	unsigned rep[3][2] = {{16, 0}, {0, 0}, {0, 0}};
	w.pos = 0;
	dyn_header(&w, 1, 257, 1, pre2, (const unsigned(*)[2])rep, 1);
	put_bits(&w, 0, 64);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	unsigned rep2[4][2] = {{18, 127}, {18, 127}, {18, 127}}; /* 3 x 138 > 258 */
	w.pos = 0;
	dyn_header(&w, 1, 257, 1, pre2, (const unsigned(*)[2])rep2, 3);
	put_bits(&w, 0, 64);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	/* Incomplete and over-subscribed code-length codes. */
	uint8_t pre3[19] = {0};
	pre3[0] = 1;
	w.pos = 0;
	dyn_header(&w, 1, 257, 1, pre3, (const unsigned(*)[2])rep, 0);
	put_bits(&w, 0, 64);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
	pre3[1] = 1, pre3[2] = 1;
	w.pos = 0;
	dyn_header(&w, 1, 257, 1, pre3, (const unsigned(*)[2])rep, 0);
	put_bits(&w, 0, 64);
	expect(ZN_FORMAT_RAW, sbuf, bw_bytes(&w), ZN_ERR_BAD_CODE_LENGTHS, NULL, 0);
}

static void test_containers(void)
{
	/* zlib: "hello" at level 6, then corruptions. */
	uint8_t z[64];
	uLongf zl = sizeof(z);
	CHECK(compress2(z, &zl, (const Bytef *)"hello", 5, 6) == Z_OK);
	expect(ZN_FORMAT_ZLIB, z, zl, ZN_OK, (const uint8_t *)"hello", 5);
	uint8_t b[64];
	memcpy(b, z, zl);
	b[1] ^= 1; /* FCHECK */
	expect(ZN_FORMAT_ZLIB, b, zl, ZN_ERR_BAD_HEADER, NULL, 0);
	memcpy(b, z, zl);
	b[0] = 0x78, b[1] = 0x20 | (31 - ((0x78 << 8 | 0x20) % 31)); /* FDICT */
	expect(ZN_FORMAT_ZLIB, b, zl, ZN_ERR_UNSUPPORTED, NULL, 0);
	memcpy(b, z, zl);
	b[zl - 1] ^= 1;
	expect(ZN_FORMAT_ZLIB, b, zl, ZN_ERR_CHECKSUM, NULL, 0);
	expect(ZN_FORMAT_ZLIB, z, zl - 1, ZN_ERR_TRUNCATED, NULL, 0);

	/* gzip with FEXTRA, FNAME, FCOMMENT and FHCRC around a raw deflate of "hello". */
	uint8_t raw[64];
	z_stream s;
	memset(&s, 0, sizeof(s));
	CHECK(deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	s.next_in = (Bytef *)"hello";
	s.avail_in = 5;
	s.next_out = raw;
	s.avail_out = sizeof(raw);
	CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
	size_t rl = s.total_out;
	deflateEnd(&s);
	uint8_t g[256];
	size_t n = 0;
	const uint8_t head[10] = {0x1f, 0x8b, 8, 0x1e, 1, 2, 3, 4, 0, 3};
	memcpy(g, head, 10), n = 10;
	g[n++] = 3, g[n++] = 0, g[n++] = 'x', g[n++] = 'y', g[n++] = 'z';
	memcpy(g + n, "name", 5), n += 5;
	memcpy(g + n, "comment", 8), n += 8;
	uint32_t hc = (uint32_t)crc32(0, g, (uInt)n);
	g[n++] = (uint8_t)hc, g[n++] = (uint8_t)(hc >> 8);
	memcpy(g + n, raw, rl), n += rl;
	uint32_t c = (uint32_t)crc32(0, (const Bytef *)"hello", 5);
	for (int i = 0; i < 4; i++)
		g[n++] = (uint8_t)(c >> (8 * i));
	g[n++] = 5, g[n++] = 0, g[n++] = 0, g[n++] = 0;
	expect(ZN_FORMAT_GZIP, g, n, ZN_OK, (const uint8_t *)"hello", 5);
	memcpy(b, g, n);
	b[27] ^= 1; /* header CRC */
	expect(ZN_FORMAT_GZIP, b, n, ZN_ERR_HEADER_CHECKSUM, NULL, 0);
	memcpy(b, g, n);
	b[n - 6] ^= 1; /* CRC-32 */
	expect(ZN_FORMAT_GZIP, b, n, ZN_ERR_CHECKSUM, NULL, 0);
	memcpy(b, g, n);
	b[n - 4] ^= 1; /* ISIZE */
	expect(ZN_FORMAT_GZIP, b, n, ZN_ERR_LENGTH_MISMATCH, NULL, 0);
	memcpy(b, g, n);
	b[3] |= 0x20; /* reserved flag */
	expect(ZN_FORMAT_GZIP, b, n, ZN_ERR_BAD_HEADER, NULL, 0);
	memcpy(b, g, n);
	b[0] = 0x1e;
	expect(ZN_FORMAT_GZIP, b, n, ZN_ERR_BAD_HEADER, NULL, 0);
	/* Every truncation fails, never succeeds. */
	for (size_t cut = 0; cut < n; cut++)
		expect(ZN_FORMAT_GZIP, g, cut, ZN_ERR_TRUNCATED, NULL, 0);
}

/* Random corruption of real streams: any result is allowed but a crash or an overrun (guard
 * pages) or success with wrong checksums; truncations must never succeed. */
static void test_corruption(void)
{
	struct tu_rng rg;
	tu_rng_seed(&rg, tu_seed ^ 0x5eed);
	static uint8_t orig[200000], comp[220000], out[200000];
	for (size_t i = 0; i < sizeof(orig); i++)
		orig[i] =
		        (uint8_t)("abcdefgh  \n"[tu_rng_below(&rg, 11)] + (i % 1000 < 10 ? i : 0));
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_GZIP));
	for (int level = 1; level <= 9; level += 4) {
		z_stream s;
		memset(&s, 0, sizeof(s));
		CHECK(deflateInit2(&s, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
		s.next_in = orig;
		s.avail_in = sizeof(orig);
		s.next_out = comp;
		s.avail_out = sizeof(comp);
		CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
		size_t clen = s.total_out;
		deflateEnd(&s);
		uint8_t *g = tu_guard_alloc(clen);
		for (int t = 0; t < 300; t++) {
			memcpy(g, comp, clen);
			int flips = 1 + (int)tu_rng_below(&rg, 4);
			for (int f = 0; f < flips; f++) {
				size_t at = tu_rng_below(&rg, clen);
				g[at] ^= (uint8_t)(1u << tu_rng_below(&rg, 8));
			}
			struct zn_inflate_info info = {.struct_size = sizeof(info)};
			zn_result r = zn_inflate(d, g, clen, out, sizeof(out), &info);
			if (r == ZN_OK)
				CHECK(memcmp(out, orig, sizeof(orig)) == 0);
			size_t cut = tu_rng_below(&rg, clen);
			memcpy(g, comp, clen);
			r = zn_inflate(d, g + (clen - cut), cut, out, sizeof(out), &info);
			CHECK(r != ZN_OK || cut == 0 ? 1 : 1);
			r = zn_inflate(d, g, cut, out, sizeof(out), &info);
			CHECK(r != ZN_OK);
		}
		tu_guard_free(g, clen);
	}
	zn_inflater_free(d);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_edge");
	test_stored();
	test_fixed();
	test_dynamic();
	test_containers();
	test_corruption();
	return 0;
}
