/* SPDX-License-Identifier: MIT */
/* fuzz_bzip2_parallel.c - libFuzzer target: whole inputs through the parallel bzip2 decoder, at
 * one and three threads, from memory and from a reader of odd pieces, against each other and
 * against bzip2 -d's verdict (libbz2 stream by stream, looked up at run time). */
/*
 * Byte 0 picks the reader's piece size; the rest is the input. Every way must give the same
 * result and output. Against libbz2: the same success, trailing garbage or "not bzip2", with
 * the same output; any other error for any other error (which fault each meets first in damaged
 * data depends on how far it reads ahead). With pass_unknown, a decode fails only where a
 * stream began and broke, and passes on at least what the plain decode gave.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bzip2_ref.h"
#include "test_util.h"

#define OUT_CAP ((size_t)64 << 20)

static const struct bz2_api *load_libbz2(void)
{
	static struct bz2_api api;
	static int tried;
	if (!tried) {
		tried = 1;
		void *h = dlopen("libbz2.so.1.0", RTLD_NOW);
		if (!h)
			h = dlopen("libbz2.so.1", RTLD_NOW);
		if (h) {
			api.init = (int (*)(bz_stream *, int, int))dlsym(h, "BZ2_bzDecompressInit");
			api.decompress = (int (*)(bz_stream *))dlsym(h, "BZ2_bzDecompress");
			api.end = (int (*)(bz_stream *))dlsym(h, "BZ2_bzDecompressEnd");
		}
	}
	return api.init && api.decompress && api.end ? &api : NULL;
}

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static zn_result collect(void *ctx, const void *data, size_t len)
{
	struct buf *b = ctx;
	if (b->n + len > OUT_CAP)
		return ZN_ERR_LIMIT;
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
	size_t len, pos, piece;
};

static int64_t read_piece(void *ctx, void *buf, size_t n)
{
	struct reader *r = ctx;
	size_t k = r->piece < n ? r->piece : n;
	k = k < r->len - r->pos ? k : r->len - r->pos;
	memcpy(buf, r->in + r->pos, k);
	r->pos += k;
	return (int64_t)k;
}

static zn_result decode(const uint8_t *in, size_t len, unsigned threads, size_t piece, int pass,
                        struct buf *out)
{
	struct zn_bunzip2_options o;
	zn_bunzip2_options_init(&o);
	o.threads = threads;
	o.pass_unknown = pass;
	out->n = 0;
	if (!piece)
		return zn_bunzip2_mem(&o, in, len, collect, out, NULL);
	struct reader r = {in, len, 0, piece};
	return zn_bunzip2(&o, read_piece, &r, collect, out, NULL);
}

static int good(zn_result r)
{
	return r == ZN_OK || r == ZN_ERR_TRAILING_GARBAGE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t piece = 1 + (size_t)data[0] * 37;
	const uint8_t *in = data + 1;
	size_t len = size - 1;
	static struct buf a, b;
	zn_result r1 = decode(in, len, 1, 0, 0, &a);
	if (r1 == ZN_ERR_LIMIT) /* more output than the fuzzer keeps */
		return 0;
	static const struct {
		unsigned threads;
		size_t piece;
	} ways[] = {{3, 0}, {2, 1}, {1, 1}};
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		zn_result r2 = decode(in, len, ways[w].threads, ways[w].piece ? piece : 0, 0, &b);
		if (r2 != r1 || (good(r1) && (a.n != b.n || memcmp(a.p, b.p, a.n)))) {
			fprintf(stderr,
			        "fuzz_bzip2_parallel: 1 thread %s (%zu), %u threads %s (%zu)\n",
			        zn_result_name(r1), a.n, ways[w].threads, zn_result_name(r2), b.n);
			abort();
		}
	}
	/* pass_unknown: what the plain decode gave, then what is not a stream, as it is */
	zn_result rp = decode(in, len, 2, 0, 1, &b);
	if (rp == ZN_ERR_TRAILING_GARBAGE || rp == ZN_ERR_BAD_HEADER)
		abort();
	if (rp != ZN_ERR_LIMIT && (good(r1) || r1 == ZN_ERR_BAD_HEADER) &&
	    (rp != ZN_OK || b.n < a.n || memcmp(a.p, b.p, a.n)))
		abort();
	const struct bz2_api *api = load_libbz2();
	if (!api)
		return 0;
	uint8_t *ref;
	size_t ref_len;
	zn_result want = bz2_ref_decode(api, in, len, &ref, &ref_len, OUT_CAP);
	if (want != ZN_ERR_LIMIT) {
		int same = good(want) || want == ZN_ERR_BAD_HEADER || good(r1) ||
		                           r1 == ZN_ERR_BAD_HEADER
		                   ? want == r1
		                   : 1;
		if (!same || (good(want) && (ref_len != a.n || memcmp(ref, a.p, a.n)))) {
			fprintf(stderr, "fuzz_bzip2_parallel: libbz2 %s (%zu), znippy %s (%zu)\n",
			        zn_result_name(want), ref_len, zn_result_name(r1), a.n);
			abort();
		}
	}
	free(ref);
	return 0;
}
