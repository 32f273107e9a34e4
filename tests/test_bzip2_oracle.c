/* SPDX-License-Identifier: MIT */
/* test_bzip2_oracle.c - zn_bunzip2 against libbz2: text, a binary, random bytes, int64 columns,
 * every run-length edge, empty and one-byte inputs, at levels 1..9, decoded at 1, 2 and 4
 * threads from memory and through a reader of odd-sized pieces; several streams; what follows
 * the last stream; damaged inputs (truncations, bit flips) give libbz2's verdict. */
#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bzip2_ref.h"
#include "test_util.h"

static struct tu_rng rng;
static const struct bz2_api api = {BZ2_bzDecompressInit, BZ2_bzDecompress, BZ2_bzDecompressEnd};

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static zn_result collect(void *ctx, const void *data, size_t len)
{
	struct buf *b = ctx;
	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return ZN_OK;
}

/* A reader of in[] in pieces of 1..max bytes (random). */
struct reader {
	const uint8_t *in;
	size_t len, pos, max;
	struct tu_rng g;
};

static int64_t read_piece(void *ctx, void *buf, size_t n)
{
	struct reader *r = ctx;
	size_t k = 1 + (size_t)tu_rng_below(&r->g, r->max);
	k = k < n ? k : n;
	k = k < r->len - r->pos ? k : r->len - r->pos;
	memcpy(buf, r->in + r->pos, k);
	r->pos += k;
	return (int64_t)k;
}

/* Decode bz[0..n) in memory at `threads`, or through the reader (piece > 0). */
static zn_result decode(const uint8_t *bz, size_t n, unsigned threads, size_t piece,
                        struct buf *out, struct zn_bunzip2_info *info)
{
	struct zn_bunzip2_options o;
	zn_bunzip2_options_init(&o);
	o.threads = threads;
	zn_bunzip2_info_init(info);
	out->n = 0;
	if (!piece)
		return zn_bunzip2_mem(&o, bz, n, collect, out, info);
	struct reader r = {bz, n, 0, piece, {{0}}};
	tu_rng_seed(&r.g, tu_rng_next(&rng));
	return zn_bunzip2(&o, read_piece, &r, collect, out, info);
}

/* Every way of decoding bz gives the referee's result and output; with `loose`, any error for
 * any error (which fault libbz2 meets first in damaged data depends on how far it reads ahead). */
static int loose;
static void check_all_ways(const uint8_t *bz, size_t n, const char *what)
{
	uint8_t *ref;
	size_t ref_len;
	zn_result want = bz2_ref_decode(&api, bz, n, &ref, &ref_len, (size_t)1 << 30);
	static const struct {
		unsigned threads;
		size_t piece;
	} ways[] = {{1, 0}, {2, 0}, {4, 0}, {1, 7}, {3, 100000}};
	struct buf out = {0};
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		struct zn_bunzip2_info info;
		zn_result r = decode(bz, n, ways[w].threads, ways[w].piece, &out, &info);
		int same = bz2_ref_same(want, r) ||
		           (loose && want != ZN_OK && want != ZN_ERR_TRAILING_GARBAGE &&
		            r != ZN_OK && r != ZN_ERR_TRAILING_GARBAGE);
		if (!same) {
			fprintf(stderr, "%s: %u threads, pieces of %zu: %s, libbz2 %s\n", what,
			        ways[w].threads, ways[w].piece, zn_result_name(r),
			        zn_result_name(want));
			CHECK(0);
		}
		if (want == ZN_OK || want == ZN_ERR_TRAILING_GARBAGE) {
			CHECK_EQ_U64(out.n, ref_len);
			CHECK(!ref_len || !memcmp(out.p, ref, ref_len)); /* out.p NULL when empty */
			CHECK_EQ_U64(info.out_len, ref_len);
		}
	}
	free(out.p);
	free(ref);
}

static uint8_t *compress(const uint8_t *in, size_t n, int level, size_t *bzlen)
{
	unsigned cap = (unsigned)(n + n / 50 + 1000);
	uint8_t *bz = malloc(cap);
	CHECK(BZ2_bzBuffToBuffCompress((char *)bz, &cap, (char *)in, (unsigned)n, level, 0, 0) ==
	      BZ_OK);
	*bzlen = cap;
	return bz;
}

/* ---- data ---------------------------------------------------------------------------------- */

static size_t make_text(uint8_t *p, size_t n)
{
	static const char *words[] = {"the",     "of",      "bzip2", "block", "and",   "sort",
	                              "a",       "wheeler", "to",    "in",    "data",  "is",
	                              "Burrows", "that",    "it",    "for",   "magic", "stream"};
	size_t o = 0;
	while (o < n) {
		const char *w = words[tu_rng_below(&rng, 18) * tu_rng_below(&rng, 18) / 18];
		size_t k = strlen(w);
		for (size_t i = 0; i < k && o < n; i++)
			p[o++] = (uint8_t)w[i];
		if (o < n)
			p[o++] = tu_rng_below(&rng, 12) ? ' ' : tu_rng_below(&rng, 2) ? '\n' : '7';
	}
	return n;
}

static size_t make_columns(uint8_t *p, size_t n)
{
	int64_t t = 1700000000000, v = 0;
	size_t o = 0;
	for (; o + 16 <= n; o += 16) {
		t += (int64_t)tu_rng_below(&rng, 1000);
		v += (int64_t)tu_rng_below(&rng, 7) - 3;
		memcpy(p + o, &t, 8);
		memcpy(p + o + 8, &v, 8);
	}
	return o;
}

/* Runs of 1..5 and 250..260 of each byte value, then 100,000 of one. */
static size_t make_runs(uint8_t *p, size_t n)
{
	size_t o = 0;
	for (unsigned v = 0; v < 256; v++)
		for (unsigned len = 1; len <= 260; len += len == 5 ? 245 : 1)
			for (unsigned i = 0; i < len && o < n; i++)
				p[o++] = (uint8_t)(v ^ (len & 1 ? 0 : 0x55) ^ (i == 0 ? 0 : 0));
	for (size_t i = 0; i < 100000 && o < n; i++)
		p[o++] = 'z';
	return o;
}

static size_t make_binary(uint8_t *p, size_t n)
{
	size_t len = 0;
	uint8_t *exe = tu_read_file("/proc/self/exe", &len);
	CHECK(exe);
	len = len < n ? len : n;
	memcpy(p, exe, len);
	free(exe);
	return len;
}

static void test_levels(void)
{
	enum { N = 700000 };
	uint8_t *data = malloc(N);
	size_t (*makers[])(uint8_t *, size_t) = {make_text, make_columns, make_runs, make_binary};
	const char *names[] = {"text",   "int64 columns", "runs",    "binary",
	                       "random", "empty",         "one byte"};
	for (int d = 0; d < 7; d++) {
		size_t n;
		if (d < 4) {
			n = makers[d](data, d == 2 ? 2 * N / 3 : N / (d == 3 ? 2 : 1));
		} else if (d == 4) {
			n = 250000;
			tu_rng_fill(&rng, data, n);
		} else {
			n = d == 5 ? 0 : 1;
			data[0] = 'x';
		}
		/* ZN_TEST_QUICK: levels 1, 5 and 9 */
		for (int level = 1; level <= 9;
		     level += !tu_quick && (d < 4 || level >= 8) ? 1 : 4) {
			size_t bzlen;
			uint8_t *bz = compress(data, n, level, &bzlen);
			char what[64];
			snprintf(what, sizeof(what), "%s at -%d", names[d], level);
			check_all_ways(bz, bzlen, what);
			struct buf out = {0};
			struct zn_bunzip2_info info;
			CHECK_OK(decode(bz, bzlen, 2, 0, &out, &info));
			CHECK_EQ_U64(out.n, n);
			CHECK(!n || !memcmp(out.p, data, n));
			CHECK_EQ_U64(info.in_used, bzlen);
			CHECK_EQ_U64(info.streams, 1);
			free(out.p);
			free(bz);
		}
	}
	free(data);
}

/* pbzip2's way: several streams in a row (an empty one too), then what may follow them. */
static void test_streams(void)
{
	uint8_t *data = malloc(300000);
	make_text(data, 300000);
	size_t lens[4], total = 0;
	uint8_t *parts[4];
	parts[0] = compress(data, 120000, 1, &lens[0]);
	parts[1] = compress(data, 0, 9, &lens[1]);
	parts[2] = compress(data + 120000, 180000, 2, &lens[2]);
	parts[3] = compress(data + 5, 1, 5, &lens[3]);
	uint8_t *all = malloc(lens[0] + lens[1] + lens[2] + lens[3] + 64);
	for (int i = 0; i < 4; i++) {
		memcpy(all + total, parts[i], lens[i]);
		total += lens[i];
	}
	check_all_ways(all, total, "four streams");
	struct buf out = {0};
	struct zn_bunzip2_info info;
	CHECK_OK(decode(all, total, 3, 0, &out, &info));
	CHECK_EQ_U64(info.streams, 4);
	CHECK_EQ_U64(out.n, 300001);
	/* What may follow: garbage (a warning), a started header (truncated), a bad level. */
	static const char *tails[] = {
	        "garbage\n", "\0\0\0\0\0\0", "B",   "BZ",      "BZh",
	        "BZh9",      "BZh0",         "BZx", "BZh91AY", "BZh9\x17\x72\x45\x38\x50\x90"};
	static const size_t tail_len[] = {8, 6, 1, 2, 3, 4, 4, 3, 7, 10};
	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		memcpy(all + total, tails[t], tail_len[t]);
		check_all_ways(all, total + tail_len[t], tails[t]);
		zn_result r = decode(all, total + tail_len[t], 2, 0, &out, &info);
		if (r == ZN_ERR_TRAILING_GARBAGE)
			CHECK_EQ_U64(info.in_used, total);
	}
	/* pass_unknown: what is not bzip2 goes through as it is */
	struct zn_bunzip2_options o;
	zn_bunzip2_options_init(&o);
	o.pass_unknown = 1;
	memcpy(all + total, "garbage\n", 8);
	out.n = 0;
	CHECK_OK(zn_bunzip2_mem(&o, all, total + 8, collect, &out, &info));
	CHECK_EQ_U64(out.n, 300001 + 8);
	CHECK(!memcmp(out.p + 300001, "garbage\n", 8));
	out.n = 0;
	CHECK_OK(zn_bunzip2_mem(&o, "plain text", 10, collect, &out, &info));
	CHECK(out.n == 10 && !memcmp(out.p, "plain text", 10));
	for (int i = 0; i < 4; i++)
		free(parts[i]);
	free(all), free(data), free(out.p);
}

/* Damage: truncations and bit flips; libbz2's verdict, at every thread count. */
static void test_damage(void)
{
	uint8_t *data = malloc(250000);
	make_text(data, 250000);
	size_t bzlen;
	uint8_t *bz = compress(data, 250000, 1, &bzlen);
	uint8_t *copy = malloc(bzlen);
	for (int k = 0; k < 25; k++) {
		size_t cut = k < 12 ? (size_t)k : (size_t)tu_rng_below(&rng, bzlen);
		check_all_ways(bz, cut, "truncated");
	}
	loose = 1;
	for (int k = 0; k < 60; k++) {
		memcpy(copy, bz, bzlen);
		size_t at = k < 20 ? (size_t)k : (size_t)tu_rng_below(&rng, bzlen);
		copy[at] ^= (uint8_t)(1u << tu_rng_below(&rng, 8));
		char what[64];
		snprintf(what, sizeof(what), "bit flipped in byte %zu", at);
		check_all_ways(copy, bzlen, what);
	}
	loose = 0;
	free(copy), free(bz), free(data);
}

/* A sink that fails stops the decoder with its error, at every thread count. */
static int sink_calls;
static zn_result failing_sink(void *ctx, const void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return ++sink_calls == 2 ? ZN_ERR_IO : ZN_OK;
}

static void test_sink_error(void)
{
	uint8_t *data = malloc(600000);
	make_text(data, 600000);
	size_t bzlen;
	uint8_t *bz = compress(data, 600000, 1, &bzlen);
	for (unsigned t = 1; t <= 4; t++) {
		struct zn_bunzip2_options o;
		zn_bunzip2_options_init(&o);
		o.threads = t;
		sink_calls = 0;
		CHECK(zn_bunzip2_mem(&o, bz, bzlen, failing_sink, NULL, NULL) == ZN_ERR_IO);
		CHECK_EQ_U64(sink_calls, 2);
	}
	free(bz), free(data);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_bzip2_oracle");
	tu_rng_seed(&rng, tu_seed);
	test_levels();
	test_streams();
	test_damage();
	test_sink_error();
	printf("test_bzip2_oracle: ok\n");
	return 0;
}
