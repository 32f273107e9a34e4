/* SPDX-License-Identifier: MIT */
/* fuzz_bzip2_block.c - libFuzzer target: one bzip2 block decoded alone, against libbz2. */
/*
 * Input: byte 0's low 3 bits k, then a block whose magic starts at bit k of byte 1. The block is
 * decoded by the block decoder (zn_bz2_read_block, the inverse transform, RLE1, CRC). When it
 * decodes, libbz2 must decode the same bits to the same bytes: they are put into a stream of
 * their own ("BZh9", the block with its CRC field set to the CRC of znippy's output, the end
 * mark) so that libbz2's CRC check cannot hide a difference in the data. libbz2 is looked up at
 * run time (dlopen), as CMake links the fuzzers against the test library only; without it only
 * memory safety and bounds are checked.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bzip2/bzip2_internal.h"
#include "bzip2_encode.h"
#include "bzip2_ref.h"
#include "common/cpu_features.h"
#include "test_util.h"

#define OUT_CAP ((size_t)8 << 20) /* longer outputs are sized, not expanded */

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

/* n bits of in from bit `bit` on, most significant first, appended to the writer. */
static void copy_bits(struct bze_bits *w, const uint8_t *in, uint64_t bit, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, bit++)
		bze_put(w, (in[bit / 8] >> (7 - bit % 8)) & 1, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bz2_block b;
	static uint8_t *out;
	if (!out) {
		if (zn_bz2_block_init(&b, zn_cpu_features()) != ZN_OK ||
		    !(out = malloc(OUT_CAP + 64)))
			abort();
	}
	if (size < 2)
		return 0;
	unsigned k = data[0] & 7;
	const uint8_t *in = data + 1;
	size_t len = size - 1;
	if (zn_bz2_read_block(&b, in, len, k, BZ2_MAX_BLOCK) != ZN_OK)
		return 0;
	if (b.end_bit > 8 * (uint64_t)len || b.n == 0 || b.n > BZ2_MAX_BLOCK || b.orig_ptr >= b.n)
		abort();
	if (zn_bz2_unsort(&b) != ZN_OK || b.out_len > OUT_CAP)
		return 0;
	struct bz2_rle1 r;
	zn_bz2_rle1_start(&r, b.ll, b.n);
	size_t got = zn_bz2_rle1_expand(&r, out, (size_t)b.out_len);
	if (got != b.out_len || zn_bz2_rle1_expand(&r, out + got, 64) != 0)
		abort();
	uint32_t crc = ~b.k.crc(~0u, out, got);
	const struct bz2_api *api = load_libbz2();
	if (!api)
		return 0;
	/* The same block in a stream of its own, its CRC the one of our output. */
	struct bze_bits w = {0};
	bze_put(&w, 'B', 8), bze_put(&w, 'Z', 8), bze_put(&w, 'h', 8), bze_put(&w, '9', 8);
	copy_bits(&w, in, k, 48);
	bze_put(&w, crc, 32);
	copy_bits(&w, in, k + 80, b.end_bit - (k + 80));
	bze_put(&w, 0x177245, 24), bze_put(&w, 0x385090, 24), bze_put(&w, crc, 32);
	while (w.nacc)
		bze_put(&w, 0, 1);
	uint8_t *ref;
	size_t ref_len;
	zn_result rr = bz2_ref_decode(api, w.p, w.n, &ref, &ref_len, OUT_CAP + 1);
	if (rr != ZN_OK || ref_len != got || memcmp(ref, out, got)) {
		fprintf(stderr, "fuzz_bzip2_block: libbz2 %s, %zu bytes; znippy %zu bytes\n",
		        zn_result_name(rr), ref_len, got);
		abort();
	}
	free(ref);
	free(w.p);
	return 0;
}
