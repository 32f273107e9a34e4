/* SPDX-License-Identifier: MIT */
/* fuzz_zstd_raw.c - libFuzzer target: zstd decoding of arbitrary bytes, whole and streaming,
 * with libzstd as referee. */
/*
 * Input: byte 0 picks the setup (bits 0-1: no dictionary, a raw-content one, a trained one in
 * the zstd format; bit 2: the portable kernels; bit 3: tiny streaming pieces), byte 1 seeds the
 * streaming pieces, the rest is the input. For each:
 *   1. zn_zstd_decompress() into a 1 MiB buffer whose end touches a guard page (the replay
 *      driver puts the input against one too); on success again into exactly out_len bytes
 *      (same bytes) and out_len - 1 (ZN_ERR_OUTPUT_FULL);
 *   2. the streaming decoder in pieces of random sizes (each against a guard page) agrees:
 *      the same output where the whole decode succeeded, an error where it failed (but for
 *      the output limit of the one and the memory limit of the other);
 *   3. libzstd (ZSTD_decompressDCtx, the same dictionary) decodes the same input: where it
 *      refuses, znippy refuses; where both decode, the outputs agree. (znippy refuses a few
 *      things libzstd lets through, each a rule of RFC 8878: see tests/test_zstd_edge.c.)
 *   4. zn_zstd_frame_scan() on the input, which must not read past it;
 *   5. zn_zstd_frame_begin/step in random steps: where the input is one zstd frame and
 *      nothing else, success exactly where the whole decode succeeded, with the same bytes.
 * A disagreement aborts, which libFuzzer reports as a crash with the input saved.
 * The seed corpus: frames libzstd wrote (levels -5 to 22, dictionaries, several and skippable
 * frames, small windows, no checksum or size), cut and damaged copies, and frames from
 * tests/zstd_test_frames.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDDict_advanced: raw-content dictionaries */
#include <zstd.h>
#include <zstd_errors.h>

#include "test_util.h"
#include "zstd/zstd_frame.h"

#define FUZZ_CAP (1u << 20)

void zn_zstd_decoder_force_generic(struct zn_zstd_decoder *d);

static void fail(const char *what, zn_result r, size_t a, size_t b)
{
	fprintf(stderr, "fuzz_zstd_raw: %s (znippy %s, %zu vs %zu)\n", what, zn_result_name(r), a,
	        b);
	abort();
}

/* The same dictionary every run: trained on generated log lines. */
static void *make_dict(size_t *len)
{
	enum { NS = 2000 };
	char *s = malloc((size_t)NS * 200);
	size_t sizes[NS], total = 0;
	struct tu_rng g;
	tu_rng_seed(&g, 42);
	for (int i = 0; i < NS; i++) {
		sizes[i] = (size_t)snprintf(s + total, 200, "level=%s svc=%u msg=\"%s\" n=%llu\n",
		                            tu_rng_below(&g, 2) ? "info" : "warn",
		                            (unsigned)tu_rng_below(&g, 20),
		                            tu_rng_below(&g, 3) ? "request done" : "retrying",
		                            (unsigned long long)tu_rng_below(&g, 100000));
		total += sizes[i];
	}
	void *d = malloc(8192);
	size_t n = ZDICT_trainFromBuffer(d, 8192, s, sizes, NS);
	free(s);
	if (ZDICT_isError(n))
		abort();
	*len = n;
	return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct zn_zstd_decoder *d[3][2];
	static ZSTD_DCtx *zd;
	static ZSTD_DDict *ddict[3];
	static uint8_t *out, *copy, *ref, *sout;
	static const void *dict[3];
	static size_t dict_len[3];
	if (!out) {
		static uint8_t raw[3000];
		for (size_t i = 0; i < sizeof(raw); i++)
			raw[i] = (uint8_t)("level=info svc= msg=\"request done\" n=\n"[i % 38] +
			                   i / 999);
		dict[1] = raw;
		dict_len[1] = sizeof(raw);
		dict[2] = make_dict(&dict_len[2]);
		for (int k = 0; k < 3; k++) {
			for (int v = 0; v < 2; v++) {
				if (zn_zstd_decoder_new(&d[k][v]) != ZN_OK ||
				    zn_zstd_set_dictionary(d[k][v], dict[k], dict_len[k]) != ZN_OK)
					abort();
				if (v)
					zn_zstd_decoder_force_generic(d[k][v]);
			}
			if (k)
				ddict[k] = ZSTD_createDDict_advanced(
				        dict[k], dict_len[k], ZSTD_dlm_byRef,
				        k == 1 ? ZSTD_dct_rawContent : ZSTD_dct_fullDict,
				        ZSTD_defaultCMem);
		}
		zd = ZSTD_createDCtx();
		out = tu_guard_alloc(FUZZ_CAP);
		copy = malloc(FUZZ_CAP);
		ref = malloc(FUZZ_CAP);
		sout = malloc(FUZZ_CAP);
	}
	if (size < 2)
		return 0;
	int k = data[0] & 3;
	if (k == 3)
		k = 0;
	struct zn_zstd_decoder *dec = d[k][(data[0] >> 2) & 1];
	int tiny = (data[0] >> 3) & 1;
	uint32_t rng = 0x9e3779b9u * (data[1] + 1u);
	const uint8_t *in = data + 2;
	size = size - 2;

	/* 1. Whole. */
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_zstd_decompress(dec, in, size, out, FUZZ_CAP, &info);
	if (info.out_len > FUZZ_CAP || info.in_used > size)
		fail("info out of range", r, info.out_len, info.in_used);
	size_t n = info.out_len;
	if (r == ZN_OK) {
		memcpy(copy, out, n);
		struct zn_zstd_info i2 = {.struct_size = sizeof(i2)};
		zn_result r2 = zn_zstd_decompress(dec, in, size, out + FUZZ_CAP - n, n, &i2);
		if (r2 != ZN_OK || i2.out_len != n || memcmp(out + FUZZ_CAP - n, copy, n))
			fail("exact-size output differs", r2, i2.out_len, n);
		if (n && zn_zstd_decompress(dec, in, size, out + FUZZ_CAP - (n - 1), n - 1, &i2) !=
		                 ZN_ERR_OUTPUT_FULL)
			fail("one byte short is not OUTPUT_FULL", r2, n - 1, n);
	}

	/* 2. Streaming, in pieces. */
	if (zn_zstd_stream_reset(dec) != ZN_OK)
		abort();
	size_t pos = 0, slen = 0;
	int done = 0;
	zn_result rs = ZN_OK;
	while (!done) {
		rng = rng * 1103515245u + 12345u;
		size_t piece = (rng >> 16) % (tiny ? 9 : 5000);
		if (piece > size - pos)
			piece = size - pos;
		int final = pos + piece == size;
		uint8_t *gb = tu_guard_alloc(piece);
		if (piece)
			memcpy(gb, in + pos, piece);
		size_t used = 0, olen = 0;
		const void *o = NULL;
		rs = zn_zstd_stream(dec, gb, piece, final, &used, &o, &olen, &done);
		tu_guard_free(gb, piece);
		if (used > piece)
			fail("streaming consumed more than given", rs, used, piece);
		if (slen + olen > FUZZ_CAP)
			break; /* more than the whole decode could hold */
		if (olen)
			memcpy(sout + slen, o, olen);
		slen += olen;
		pos += used;
		if (rs != ZN_OK)
			break;
	}
	if (r == ZN_OK && rs != ZN_ERR_LIMIT && (rs != ZN_OK || slen != n || memcmp(sout, copy, n)))
		fail("streaming differs from the whole decode", rs, slen, n);
	if (r != ZN_OK && r != ZN_ERR_OUTPUT_FULL && rs == ZN_OK && done)
		fail("streaming decodes what the whole decode refused", r, slen, n);

	/* 3. libzstd. */
	size_t rn = k ? ZSTD_decompress_usingDDict(zd, ref, FUZZ_CAP, in, size, ddict[k])
	              : ZSTD_decompressDCtx(zd, ref, FUZZ_CAP, in, size);
	if (ZSTD_isError(rn) && r == ZN_OK && ZSTD_getErrorCode(rn) != ZSTD_error_dstSize_tooSmall)
		fail(ZSTD_getErrorName(rn), r, n, 0);
	if (!ZSTD_isError(rn) && r == ZN_OK && (rn != n || memcmp(ref, copy, n)))
		fail("output differs from libzstd's", r, n, rn);

	/* 4. Frame scanning. */
	struct zn_zstd_frame_info fi = {.struct_size = sizeof(fi)};
	zn_result rf = zn_zstd_frame_scan(in, size, &fi);
	if (rf == ZN_OK && fi.frame_size > size)
		fail("frame_scan past the input", ZN_OK, (size_t)fi.frame_size, size);

	/* 5. One frame in steps (the archive's partial reads): where the input is one zstd frame
	 * and nothing else, the same bytes as the whole decode, and success exactly where it
	 * succeeded. */
	size_t len = 0, need = 0;
	done = 0;
	zn_result rp = zn_zstd_frame_begin(dec, in, size, out, FUZZ_CAP, FUZZ_CAP);
	while (rp == ZN_OK && !done) {
		rng = rng * 1103515245u + 12345u;
		need += (rng >> 16) % (tiny ? 300 : 300000);
		size_t before = len;
		rp = zn_zstd_frame_step(dec, need, &len, &done);
		if (len < before || len > FUZZ_CAP || (rp == ZN_OK && !done && len < need))
			fail("a step's output out of range", rp, len, need);
	}
	const int one_frame = rf == ZN_OK && !fi.skippable && fi.frame_size == size;
	if (rp == ZN_OK && (r != ZN_OK || !one_frame || len != n || memcmp(out, copy, n)))
		fail("steps decode what the whole decode did not", r, len, n);
	if (rp != ZN_OK && r == ZN_OK && one_frame)
		fail("steps refuse what the whole decode took", rp, len, n);
	return 0;
}
