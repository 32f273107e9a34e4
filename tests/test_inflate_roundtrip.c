/* SPDX-License-Identifier: MIT */
/* test_inflate_roundtrip.c - random data compressed by zlib at every level and strategy decodes
 * byte-exactly (raw, zlib, gzip), whole-buffer into guard pages and streaming in random pieces. */
#include <string.h>
#include <zlib.h>

#include "gzip_test_util.h"
#include "test_util.h"

const char *zn_inflater_kernel_name(const struct zn_inflater *d);

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Data with the shapes DEFLATE meets: text-like, runs, short periods, random, long repeats. */
static void gen_data(struct tu_rng *g, uint8_t *buf, size_t len)
{
	size_t i = 0;
	static const char *words[] = {"the ",    "quick ", "brown ", "fox ", "jumps ",
	                              "over ",   "lazy ",  "dog ",   "\n",   "int ",
	                              "return ", "{ ",     "} "};
	while (i < len) {
		size_t n = 1 + tu_rng_below(g, 600);
		if (n > len - i)
			n = len - i;
		switch (tu_rng_below(g, 7)) {
		case 0: /* random bytes */
			tu_rng_fill(g, buf + i, n);
			break;
		case 1: /* a run */
			memset(buf + i, (int)tu_rng_below(g, 256), n);
			break;
		case 2: { /* a short period */
			size_t p = 1 + tu_rng_below(g, 40);
			for (size_t k = 0; k < n; k++)
				buf[i + k] =
				        (uint8_t)(k < p ? tu_rng_below(g, 256) : buf[i + k - p]);
			break;
		}
		case 3: /* words */
			for (size_t k = 0; k < n;) {
				const char *w = words[tu_rng_below(g, 13)];
				for (; *w && k < n; w++)
					buf[i + k++] = (uint8_t)*w;
			}
			break;
		case 4: /* copy from far back */
			if (i > 0) {
				size_t back = 1 + tu_rng_below(g, i < 40000 ? i : 40000);
				for (size_t k = 0; k < n; k++)
					buf[i + k] = buf[i + k - back];
				break;
			}
			/* fall through */
		default: /* small alphabet */
			for (size_t k = 0; k < n; k++)
				buf[i + k] = (uint8_t)('a' + tu_rng_below(g, 4));
			break;
		}
		i += n;
	}
}

static void check_whole(struct zn_inflater *d, const uint8_t *comp, size_t clen,
                        const uint8_t *orig, size_t len)
{
	/* Exact-size output against a guard page: any overwrite faults. */
	uint8_t *out = tu_guard_alloc(len ? len : 1);
	uint8_t *in = tu_guard_alloc(clen);
	memcpy(in, comp, clen);
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	CHECK_OK(zn_inflate(d, in, clen, out, len, &info));
	CHECK_EQ_U64(info.out_len, len);
	CHECK_EQ_U64(info.in_used, clen);
	CHECK(memcmp(out, orig, len) == 0);
	/* One byte short must fail cleanly. */
	if (len) {
		zn_result r = zn_inflate(d, in, clen, out, len - 1, &info);
		CHECK(r == ZN_ERR_OUTPUT_FULL);
	}
	tu_guard_free(out, len ? len : 1);
	tu_guard_free(in, clen);
}

static void check_stream(struct zn_inflater *d, struct tu_rng *g, const uint8_t *comp, size_t clen,
                         const uint8_t *orig, size_t len)
{
	CHECK_OK(zn_inflate_stream_reset(d));
	size_t pos = 0, got = 0;
	int done = 0, rounds = 0;
	size_t max_piece =
	        tu_rng_below(g, 2) ? 1 + tu_rng_below(g, 64) : 1 + tu_rng_below(g, 70000);
	while (!done) {
		size_t piece = min_size(1 + tu_rng_below(g, max_piece), clen - pos);
		int final = pos + piece == clen;
		uint8_t *in = tu_guard_alloc(piece ? piece : 1);
		memcpy(in, comp + pos, piece);
		size_t used;
		const void *o;
		size_t olen;
		CHECK_OK(zn_inflate_stream(d, in, piece, final, &used, &o, &olen, &done));
		tu_guard_free(in, piece ? piece : 1);
		CHECK(used <= piece);
		CHECK(got + olen <= len);
		CHECK(memcmp(o, orig + got, olen) == 0);
		got += olen;
		pos += used;
		CHECK(++rounds < 10000000);
	}
	CHECK_EQ_U64(got, len);
}

/* The stream is followed by junk: decoding stops exactly at its end (raw, zlib) or reports the
 * junk as trailing garbage at the right offset (gzip), however the input is cut up. */
static void check_stream_end(struct zn_inflater *d, int fmt, struct tu_rng *g, const uint8_t *comp,
                             size_t clen, size_t len)
{
	uint8_t buf[64 * 1024 + 32];
	if (clen + 16 > sizeof(buf))
		return;
	memcpy(buf, comp, clen);
	memset(buf + clen, 'J', 16);
	CHECK_OK(zn_inflate_stream_reset(d));
	size_t pos = 0, got = 0, total = clen + 16;
	int done = 0;
	zn_result r = ZN_OK;
	size_t max_piece = 1 + tu_rng_below(g, 3000);
	while (!done) {
		size_t piece = min_size(1 + tu_rng_below(g, max_piece), total - pos);
		size_t used, olen;
		const void *o;
		r = zn_inflate_stream(d, buf + pos, piece, pos + piece == total, &used, &o, &olen,
		                      &done);
		CHECK(r == ZN_OK || r == ZN_ERR_TRAILING_GARBAGE);
		got += olen;
		pos += used;
	}
	CHECK_EQ_U64(got, len);
	CHECK(r == (fmt == ZN_FORMAT_GZIP ? ZN_ERR_TRAILING_GARBAGE : ZN_OK));
	CHECK(pos >= clen && pos <= total);
	uint64_t at;
	zn_inflate_stream_position(d, &at, NULL);
	CHECK_EQ_U64(at, clen);
	/* Whole buffer: the same. */
	uint8_t *out = malloc(len + 1);
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	r = zn_inflate(d, buf, total, out, len, &info);
	CHECK(r == (fmt == ZN_FORMAT_GZIP ? ZN_ERR_TRAILING_GARBAGE : ZN_OK));
	CHECK_EQ_U64(info.in_used, clen);
	free(out);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_roundtrip");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_inflater *dr, *dz, *dg;
	CHECK_OK(zn_inflater_new(&dr, ZN_FORMAT_RAW));
	CHECK_OK(zn_inflater_new(&dz, ZN_FORMAT_ZLIB));
	CHECK_OK(zn_inflater_new(&dg, ZN_FORMAT_GZIP));
	printf("kernel: %s\n", zn_inflater_kernel_name(dr));

	const size_t max_len = 1 << 20;
	uint8_t *orig = malloc(max_len);
	size_t cap = max_len + max_len / 100 + 1024;
	uint8_t *comp = malloc(cap);
	static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE,
	                                 Z_FIXED};
	for (int iter = 0; iter < 120; iter++) {
		size_t len = iter < 4 ? (size_t)iter
		                      : tu_rng_below(&g, iter % 10 == 0 ? max_len : 70000);
		gen_data(&g, orig, len);
		int level = (int)tu_rng_below(&g, 10);
		int strategy = strategies[tu_rng_below(&g, 5)];
		int fmt = (int)tu_rng_below(&g, 3);
		int wbits = fmt == 0 ? -15 : fmt == 1 ? 15 : 31;
		if (tu_rng_below(&g, 4) == 0)
			wbits = wbits < 0 ? -(9 + (int)tu_rng_below(&g, 7))
			                  : wbits - (int)tu_rng_below(&g, 6);
		size_t clen = compress_zlib(orig, len, comp, cap, level, wbits, strategy);
		struct zn_inflater *d = fmt == 0 ? dr : fmt == 1 ? dz : dg;
		check_whole(d, comp, clen, orig, len);
		check_stream(d, &g, comp, clen, orig, len);
		check_stream_end(d, fmt, &g, comp, clen, len);
	}

	/* gzip: several members in a row, then zero padding, then garbage. */
	{
		size_t l1 = 50000, l2 = 123456;
		gen_data(&g, orig, l1 + l2);
		size_t c1 = compress_zlib(orig, l1, comp, cap, 6, 31, Z_DEFAULT_STRATEGY);
		size_t c2 = compress_zlib(orig + l1, l2, comp + c1, cap - c1, 1, 31,
		                          Z_DEFAULT_STRATEGY);
		size_t clen = c1 + c2;
		check_whole(dg, comp, clen, orig, l1 + l2);
		check_stream(dg, &g, comp, clen, orig, l1 + l2);
		memset(comp + clen, 0, 100);
		uint8_t *out = malloc(l1 + l2);
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		CHECK_OK(zn_inflate(dg, comp, clen + 100, out, l1 + l2, &info));
		CHECK_EQ_U64(info.members, 2);
		CHECK_EQ_U64(info.in_used, clen + 100);
		comp[clen + 100] = 'x';
		CHECK(zn_inflate(dg, comp, clen + 101, out, l1 + l2, &info) ==
		      ZN_ERR_TRAILING_GARBAGE);
		CHECK_EQ_U64(info.out_len, l1 + l2);
		CHECK(memcmp(out, orig, l1 + l2) == 0);
		comp[clen] = 'x';
		CHECK(zn_inflate(dg, comp, clen + 1, out, l1 + l2, &info) ==
		      ZN_ERR_TRAILING_GARBAGE);
		CHECK_EQ_U64(info.in_used, clen);
		comp[clen] = 0x1f; /* a member cut short after one byte, as GNU gzip sees it */
		CHECK(zn_inflate(dg, comp, clen + 1, out, l1 + l2, &info) == ZN_ERR_TRUNCATED);
		comp[clen + 1] = 'x';
		CHECK(zn_inflate(dg, comp, clen + 2, out, l1 + l2, &info) ==
		      ZN_ERR_TRAILING_GARBAGE);
		CHECK_EQ_U64(info.in_used, clen);
		CHECK(memcmp(out, orig, l1 + l2) == 0);
		free(out);
	}
	zn_inflater_free(dr);
	zn_inflater_free(dz);
	zn_inflater_free(dg);
	free(orig);
	free(comp);
	return 0;
}
