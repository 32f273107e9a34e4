/* SPDX-License-Identifier: MIT */
/* fuzz_zstd_roundtrip.c - libFuzzer target: the input compressed by libzstd decodes back to
 * itself, whole and streaming. */
/*
 * Input: byte 0 the level (-5 .. 22), byte 1 the parameters (bit 0: checksum, bit 1: no
 * content size, bits 2-4: a window log of 10 + 2 * value (0: the level's, or 17 when compressed
 * in pieces), bit 5: compressed in three streaming calls (flushes make more blocks), bit 6: the
 * portable kernels, bit 7: long-distance matching), the rest the data. The frame libzstd writes
 * must decode to the data with zn_zstd_decompress() into exactly its size (the buffer's end against
 * a guard page) and with the streaming interface in pieces of random sizes. Any difference aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "test_util.h"

void zn_zstd_decoder_force_generic(struct zn_zstd_decoder *d);

static void fail(const char *what, zn_result r, int level, unsigned params)
{
	fprintf(stderr, "fuzz_zstd_roundtrip: %s (%s, level %d, params 0x%02x)\n", what,
	        zn_result_name(r), level, params);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct zn_zstd_decoder *d[2];
	static ZSTD_CCtx *cc;
	if (!cc) {
		if (zn_zstd_decoder_new(&d[0]) != ZN_OK || zn_zstd_decoder_new(&d[1]) != ZN_OK ||
		    !(cc = ZSTD_createCCtx()))
			abort();
		zn_zstd_decoder_force_generic(d[1]);
	}
	if (size < 2)
		return 0;
	int level = (int)(data[0] % 28) - 5;
	unsigned params = data[1];
	const uint8_t *src = data + 2;
	size_t n = size - 2;
	struct zn_zstd_decoder *dec = d[(params >> 6) & 1];

	ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, params & 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, !(params & 2));
	int pieces = params & 32 ? 3 : 1;
	if ((params >> 2) & 7)
		ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 10 + 2 * (int)((params >> 2) & 7));
	else if (pieces > 1) /* the size unknown: the level's full tables, slow at 20-22 */
		ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 17);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, (params >> 7) & 1);
	size_t cap = ZSTD_compressBound(n) + 64;
	uint8_t *z = malloc(cap);
	ZSTD_outBuffer zo = {z, cap, 0};
	for (int k = 0; k < pieces; k++) {
		size_t a = n * (size_t)k / (size_t)pieces, b = n * (size_t)(k + 1) / (size_t)pieces;
		ZSTD_inBuffer zi = {src + a, b - a, 0};
		size_t left;
		do {
			left = ZSTD_compressStream2(cc, &zo, &zi,
			                            k + 1 == pieces ? ZSTD_e_end : ZSTD_e_flush);
			if (ZSTD_isError(left))
				abort();
		} while (left || zi.pos < zi.size);
	}

	uint8_t *out = tu_guard_alloc(n);
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_zstd_decompress(dec, z, zo.pos, out, n, &info);
	if (r != ZN_OK || info.out_len != n || (n && memcmp(out, src, n)))
		fail("whole decode differs", r, level, params);
	tu_guard_free(out, n);

	uint8_t *s = malloc(n + 1);
	if (zn_zstd_stream_reset(dec) != ZN_OK)
		abort();
	size_t pos = 0, slen = 0;
	int done = 0;
	uint32_t rng = 0x9e3779b9u * (uint32_t)(size + 1);
	while (!done) {
		rng = rng * 1103515245u + 12345u;
		size_t piece = 1 + (rng >> 16) % 3000;
		if (piece > zo.pos - pos)
			piece = zo.pos - pos;
		size_t used, olen;
		const void *o;
		r = zn_zstd_stream(dec, z + pos, piece, pos + piece == zo.pos, &used, &o, &olen,
		                   &done);
		if (r != ZN_OK || slen + olen > n)
			fail("streaming decode fails", r, level, params);
		memcpy(s + slen, o, olen);
		slen += olen;
		pos += used;
	}
	if (slen != n || (n && memcmp(s, src, n)))
		fail("streaming decode differs", r, level, params);
	free(s);
	free(z);
	return 0;
}
