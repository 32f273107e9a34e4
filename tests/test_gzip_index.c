/* SPDX-License-Identifier: MIT */
/* test_gzip_index.c - random reads through a gzip index give exactly the bytes at those offsets. */
/*
 * Streams are made with zlib (single members at several levels, many members, full flushes,
 * stored blocks, fixed blocks, trailing garbage, empty members) from text, random data and int64
 * columns. For each: the index is built with small spacing (64 KiB) and the default, its length
 * compared with the sequential decoder's output, and random ranges (random offsets and lengths,
 * ranges at and around every checkpoint, past the end) read through it and through an exported
 * and imported copy, compared byte for byte with that output. An index is refused for another
 * input; every bit flip and cut of an exported index is refused on import; a well-formed index
 * with a bad field (its CRC made right) is refused too.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip_test_util.h"
#include "test_util.h"

#define MIN(a, b)    ((a) < (b) ? (a) : (b))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The sequential decoder's output for the whole input (up to trailing garbage). */
static uint8_t *reference(const uint8_t *in, size_t len, size_t *out_len)
{
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_GZIP));
	CHECK_OK(zn_inflate_stream_reset(d));
	size_t cap = 1 << 20, n = 0, pos = 0;
	uint8_t *out = malloc(cap);
	CHECK(out);
	for (;;) {
		size_t used, olen;
		const void *o;
		int done;
		zn_result r = zn_inflate_stream(d, in + pos, len - pos, 1, &used, &o, &olen, &done);
		pos += used;
		if (n + olen > cap) {
			cap = 2 * (n + olen);
			CHECK((out = realloc(out, cap)));
		}
		if (olen)
			memcpy(out + n, o, olen);
		n += olen;
		CHECK(r == ZN_OK || r == ZN_ERR_TRAILING_GARBAGE);
		if (r != ZN_OK || done)
			break;
	}
	zn_inflater_free(d);
	*out_len = n;
	return out;
}

static void check_range(const struct zn_gzip_index *ix, const uint8_t *in, size_t len,
                        const uint8_t *ref, size_t ref_len, uint64_t off, size_t n)
{
	static uint8_t buf[300000];
	n = MIN(n, sizeof(buf));
	size_t got = 12345;
	CHECK_OK(zn_gzip_index_read(ix, in, len, off, buf, n, &got));
	size_t want = off >= ref_len ? 0 : (size_t)MIN((uint64_t)n, ref_len - off);
	CHECK_EQ_U64(got, want);
	if (want && memcmp(buf, ref + off, want)) {
		fprintf(stderr, "range %llu+%zu differs\n", (unsigned long long)off, n);
		CHECK(0);
	}
}

static void check_reads(const struct zn_gzip_index *ix, const uint8_t *in, size_t len,
                        const uint8_t *ref, size_t ref_len, struct tu_rng *g)
{
	for (int i = 0; i < 60; i++) {
		uint64_t off = tu_rng_below(g, ref_len + 2);
		size_t n = (size_t)(tu_rng_below(g, 4) ? tu_rng_below(g, 5000)
		                                       : tu_rng_below(g, 300000));
		check_range(ix, in, len, ref, ref_len, off, n);
	}
	check_range(ix, in, len, ref, ref_len, 0, 300000);
	check_range(ix, in, len, ref, ref_len, ref_len ? ref_len - 1 : 0, 10);
	check_range(ix, in, len, ref, ref_len, ref_len, 10);
	check_range(ix, in, len, ref, ref_len, (uint64_t)ref_len + 1000, 10);
	/* Around checkpoints: every 64 KiB of output is within a byte or two of one. */
	for (uint64_t off = 65536; off < ref_len; off += 65536 * 7) {
		check_range(ix, in, len, ref, ref_len, off - 1, 3);
		check_range(ix, in, len, ref, ref_len, off, 70000);
	}
}

/* Export and import: the same reads; damage refused. */
static void check_export(const struct zn_gzip_index *ix, const uint8_t *in, size_t len,
                         const uint8_t *ref, size_t ref_len, struct tu_rng *g)
{
	void *buf;
	size_t n;
	CHECK_OK(zn_gzip_index_export(ix, &buf, &n));
	struct zn_gzip_index *back;
	CHECK_OK(zn_gzip_index_import(&back, buf, n));
	CHECK_EQ_U64(zn_gzip_index_out_len(back), ref_len);
	CHECK_EQ_U64(zn_gzip_index_points(back), zn_gzip_index_points(ix));
	check_reads(back, in, len, ref, ref_len, g);
	zn_gzip_index_free(back);
	uint8_t *c = malloc(n);
	CHECK(c);
	for (int i = 0; i < 40; i++) {
		memcpy(c, buf, n);
		c[tu_rng_below(g, n)] ^= (uint8_t)(1u << tu_rng_below(g, 8));
		back = (void *)1;
		CHECK(zn_gzip_index_import(&back, c, n) != ZN_OK && back == NULL);
		CHECK(zn_gzip_index_import(&back, buf, (size_t)tu_rng_below(g, n)) != ZN_OK);
	}
	free(c);
	free(buf);
}

/* A well-formed index with a bad field, its CRC made right, is refused. */
static void check_bad_fields(const struct zn_gzip_index *ix)
{
	void *buf;
	size_t n;
	CHECK_OK(zn_gzip_index_export(ix, &buf, &n));
	uint8_t *b = buf;
	const size_t p1 = 48 + 44; /* the second checkpoint (the first has no window) */
	struct {
		size_t at;
		uint8_t v;
	} bad[] = {
	        {48 + 32, 2},    /* the first checkpoint not the start */
	        {p1 + 32, 9},    /* an unknown kind */
	        {p1 + 39, 0x7f}, /* a window over 32 KiB */
	        {p1 + 37, 0x01}, /* a window of another length than its frame's */
	        {p1 + 40, 0x07}, /* a frame of another length */
	        {p1 + 7, 0x7f},  /* an input bit past the input */
	        {p1 + 15, 0x7f}, /* an output offset past the output */
	        {32, 0x7f},      /* more checkpoints than fit */
	        {44, 1},         /* a reserved field */
	};
	struct zn_gzip_index *back;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		uint8_t *c = malloc(n);
		CHECK(c);
		memcpy(c, b, n);
		c[bad[i].at] = bad[i].v;
		uint32_t crc = zn_crc32(0, c, n - 4);
		for (int k = 0; k < 4; k++)
			c[n - 4 + k] = (uint8_t)(crc >> (8 * k));
		CHECK(zn_gzip_index_import(&back, c, n) == ZN_ERR_CORRUPT);
		free(c);
	}
	CHECK(zn_gzip_index_import(&back, "not an index at all, not at all, not at all, no!!",
	                           50) == ZN_ERR_BAD_HEADER);
	free(buf);
}

static void gen(uint8_t *p, size_t n, int kind, struct tu_rng *g)
{
	static const char *const w[] = {"index", "gzip ",        "window ", "the ",
	                                "of ",   "checkpoint\n", "random ", "access "};
	if (kind == 1) {
		tu_rng_fill(g, p, n);
		return;
	}
	uint64_t v = 1000;
	for (size_t i = 0; i < n;) {
		if (kind == 2) {
			if (tu_rng_below(g, 50) == 0)
				v += tu_rng_below(g, 1000);
			for (int k = 0; k < 8 && i < n; k++)
				p[i++] = (uint8_t)(v >> (8 * k));
			continue;
		}
		const char *s = w[tu_rng_below(g, ARRAY_LEN(w))];
		for (size_t k = 0; s[k] && i < n; k++)
			p[i++] = (uint8_t)s[k];
	}
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_gzip_index");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	const size_t N = tu_quick ? 1u << 20 : 3u << 20; /* ZN_TEST_QUICK: 1 MiB */
	size_t cap = 2 * N + 65536;
	uint8_t *data = malloc(N), *gz = malloc(cap + 100);
	CHECK(data && gz);
	struct {
		const char *name;
		int level, strategy, flush;
		size_t every;
		unsigned members;
		int garbage;
	} ways[] = {
	        {"gzip -6", 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1, 0},
	        {"gzip -1", 1, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1, 0},
	        {"gzip -9, garbage", 9, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1, 1},
	        {"members", 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 40, 0},
	        {"full flush", 6, Z_DEFAULT_STRATEGY, Z_FULL_FLUSH, 100000, 2, 0},
	        {"stored", 0, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1, 0},
	        {"fixed", 6, Z_FIXED, Z_NO_FLUSH, 0, 1, 0},
	};
	for (int kind = 0; kind < 3; kind++) {
		size_t n = N - tu_rng_below(&g, 1000);
		gen(data, n, kind, &g);
		for (size_t w = 0; w < ARRAY_LEN(ways); w++) {
			size_t len = compress_gz(gz, cap, data, n, ways[w].level, ways[w].strategy,
			                         ways[w].flush, ways[w].every, ways[w].members);
			if (ways[w].garbage)
				len += (size_t)snprintf((char *)gz + len, 100, "garbage");
			printf("kind %d, %s: %zu bytes\n", kind, ways[w].name, len);
			size_t ref_len;
			uint8_t *ref = reference(gz, len, &ref_len);
			CHECK_EQ_U64(ref_len, n);
			struct zn_gzip_index *ix;
			zn_result r = zn_gzip_index_build(&ix, gz, len, ZN_GZIP_INDEX_SPACING_MIN);
			CHECK(r == (ways[w].garbage ? ZN_ERR_TRAILING_GARBAGE : ZN_OK));
			CHECK_EQ_U64(zn_gzip_index_out_len(ix), ref_len);
			/* About one checkpoint per 64 KiB of output, or per block where blocks
			 * are bigger (zlib -9 blocks of this text are about 300 KiB). */
			printf("  %zu checkpoints\n", zn_gzip_index_points(ix));
			CHECK(zn_gzip_index_points(ix) >= n / (16 * ZN_GZIP_INDEX_SPACING_MIN));
			check_reads(ix, gz, len, ref, ref_len, &g);
			check_export(ix, gz, len, ref, ref_len, &g);
			if (w == 0 && kind == 0)
				check_bad_fields(ix);
			/* Another input of the same length is refused. */
			gz[len - 1] ^= 1;
			size_t got;
			uint8_t b[10];
			CHECK(zn_gzip_index_read(ix, gz, len, 0, b, 10, &got) ==
			      ZN_ERR_INVALID_ARG);
			gz[len - 1] ^= 1;
			zn_gzip_index_free(ix);
			/* The default spacing. */
			CHECK_OK(
			        zn_gzip_index_build(&ix, gz, len - 7 * (size_t)ways[w].garbage, 0));
			check_reads(ix, gz, len - 7 * (size_t)ways[w].garbage, ref, ref_len, &g);
			zn_gzip_index_free(ix);
			free(ref);
		}
	}
	/* An empty member; a damaged stream gives no index. */
	size_t len = compress_gz(gz, cap, data, 0, 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1);
	struct zn_gzip_index *ix;
	CHECK_OK(zn_gzip_index_build(&ix, gz, len, 0));
	CHECK_EQ_U64(zn_gzip_index_out_len(ix), 0);
	check_range(ix, gz, len, data, 0, 0, 10);
	zn_gzip_index_free(ix);
	len = compress_gz(gz, cap, data, N, 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 1);
	gz[len - 2] ^= 1; /* ISIZE */
	ix = (void *)1;
	CHECK(zn_gzip_index_build(&ix, gz, len, 0) == ZN_ERR_LENGTH_MISMATCH && ix == NULL);
	free(data);
	free(gz);
	printf("ok\n");
	return 0;
}
