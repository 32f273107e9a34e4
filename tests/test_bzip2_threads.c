/* SPDX-License-Identifier: MIT */
/* test_bzip2_threads.c - the parallel bzip2 decoder: the same output and the same error at
 * every thread count, with slabs made small (many slab bounds, blocks across them), false
 * candidates every few hundred bytes, a reader of odd pieces, outputs too large to hold
 * (expanded again as they are written), and faults in a block amid others. */
#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static struct tu_rng rng;

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

struct reader {
	const uint8_t *in;
	size_t len, pos;
};

static int64_t read_odd(void *ctx, void *buf, size_t n)
{
	struct reader *r = ctx;
	size_t k = n < 77777 ? n : 77777; /* never what was asked for */
	k = k < r->len - r->pos ? k : r->len - r->pos;
	memcpy(buf, r->in + r->pos, k);
	r->pos += k;
	return (int64_t)k;
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

/* Decode at `threads` (reader: through read_odd); the result, output in *out. */
static zn_result decode(const uint8_t *bz, size_t n, unsigned threads, int reader, struct buf *out)
{
	struct zn_bunzip2_options o;
	zn_bunzip2_options_init(&o);
	o.threads = threads;
	out->n = 0;
	if (!reader)
		return zn_bunzip2_mem(&o, bz, n, collect, out, NULL);
	struct reader r = {bz, n, 0};
	return zn_bunzip2(&o, read_odd, &r, collect, out, NULL);
}

/* Every thread count and both inputs give `want` and (when it succeeds) `data`. */
static void check_threads(const uint8_t *bz, size_t n, zn_result want, const uint8_t *data,
                          size_t len, const char *what)
{
	static const unsigned all[] = {1, 2, 3, 4, 7, 16}, quick[] = {1, 3, 16};
	const unsigned *counts = tu_quick ? quick : all; /* ZN_TEST_QUICK: three counts */
	const size_t ncounts =
	        tu_quick ? sizeof(quick) / sizeof(quick[0]) : sizeof(all) / sizeof(all[0]);
	struct buf out = {0};
	for (size_t t = 0; t < ncounts; t++)
		for (int reader = 0; reader < 2; reader++) {
			zn_result r = decode(bz, n, counts[t], reader, &out);
			if (r != want) {
				fprintf(stderr, "%s: %u threads%s: %s, want %s\n", what, counts[t],
				        reader ? " (reader)" : "", zn_result_name(r),
				        zn_result_name(want));
				CHECK(0);
			}
			if (r == ZN_OK) {
				CHECK_EQ_U64(out.n, len);
				CHECK(!memcmp(out.p, data, len));
			}
		}
	free(out.p);
}

static void make_text(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = tu_rng_below(&rng, 100);
		p[i] = x < 15 ? ' ' : x < 17 ? '\n' : (uint8_t)('a' + (x * x + i / 4096) % 26);
	}
}

static void test_many_blocks(void)
{
	size_t n = tu_quick ? 800000 : 2500000, bzlen;
	uint8_t *data = malloc(n);
	make_text(data, n);
	uint8_t *bz = compress(data, n, 1, &bzlen); /* 25 blocks (ZN_TEST_QUICK: 8) */
	check_threads(bz, bzlen, ZN_OK, data, n, "many blocks");
	/* a fault in a middle block: the same error, whichever thread finds it */
	uint8_t *bad = malloc(bzlen);
	memcpy(bad, bz, bzlen);
	bad[bzlen / 2] ^= 0x20;
	/* (a checksum or a corruption error, as the bit falls; one thread's is the reference) */
	struct buf ref = {0};
	zn_result want = decode(bad, bzlen, 1, 0, &ref);
	free(ref.p);
	CHECK(want == ZN_ERR_CHECKSUM || want == ZN_ERR_CORRUPT);
	check_threads(bad, bzlen, want, NULL, 0, "a flipped bit");
	check_threads(bz, bzlen * 2 / 3, ZN_ERR_TRUNCATED, NULL, 0, "truncated");
	free(bad), free(bz), free(data);
}

/* An output larger than a job holds, written by expanding the block again. */
static void test_large_output(void)
{
	size_t n = 9000000, bzlen; /* one block: more than the 4 MiB a job holds */
	uint8_t *data = calloc(n, 1);
	for (size_t i = 0; i < n; i += 1000003)
		data[i] = (uint8_t)i;
	uint8_t *bz = compress(data, n, 9, &bzlen);
	check_threads(bz, bzlen, ZN_OK, data, n, "large outputs");
	free(bz), free(data);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_bzip2_threads");
	tu_rng_seed(&rng, tu_seed);
	test_large_output();
	test_many_blocks();
	/* again with slabs of 64 KiB (blocks span several) and a false candidate every 397 bytes
	 * (each decoded, or skipped, and dropped) */
	setenv("ZN_BZ2_SLAB_SIZE", "65536", 1);
	setenv("ZN_BZ2_FAKE_CANDIDATES", "397", 1);
	test_many_blocks();
	unsetenv("ZN_BZ2_FAKE_CANDIDATES");
	test_large_output();
	printf("test_bzip2_threads: ok\n");
	return 0;
}
