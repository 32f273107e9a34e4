/* SPDX-License-Identifier: MIT */
/* test_zstd_corrupt.c - damaged frames (cut at every length, bits flipped, bytes overwritten,
 * block headers and table descriptions scribbled on) are refused whenever libzstd refuses them,
 * and decoded as libzstd decodes them otherwise; whole-buffer and streaming decoding agree. */
#include "zstd_test_util.h"

#define SLACK 4096

struct tally {
	unsigned both_refuse, both_decode, only_we_refuse;
};

static void try_frame(struct zn_zstd_decoder *d, ZSTD_DCtx *zd, const uint8_t *z, size_t zn,
                      size_t cap, uint8_t *out, uint8_t *ref, struct tu_rng *g, struct tally *t,
                      const char *what)
{
	uint8_t *in = tu_guard_alloc(zn);
	memcpy(in, z, zn);
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_zstd_decompress(d, in, zn, out, cap, &info);
	size_t rn = ZSTD_decompressDCtx(zd, ref, cap, in, zn);
	tu_guard_free(in, zn);
	if (ZSTD_isError(rn)) {
		if (r == ZN_OK) {
			fprintf(stderr, "%s: libzstd: %s, znippy decoded %llu bytes\n", what,
			        ZSTD_getErrorName(rn), (unsigned long long)info.out_len);
			CHECK(0);
		}
		t->both_refuse++;
	} else if (r == ZN_OK) {
		if (info.out_len != rn || memcmp(out, ref, rn)) {
			fprintf(stderr, "%s: both decode, differently\n", what);
			CHECK(0);
		}
		t->both_decode++;
	} else {
		/* Stricter than libzstd (RFC 8878's rules it does not check): only ever "corrupt".
		 */
		if (r != ZN_ERR_CORRUPT) {
			fprintf(stderr, "%s: libzstd decodes it, znippy says %s\n", what,
			        zn_result_name(r));
			CHECK(0);
		}
		t->only_we_refuse++;
	}
	if (tu_rng_below(g, 3))
		return;
	/* Streaming must say the same (checked for a third of the frames), but for the limits of
	 * each interface: the whole-buffer one has no memory limit, the streaming one no output
	 * limit. */
	uint8_t *so;
	size_t slen;
	size_t piece = 1 + tu_rng_below(g, zn < 5000 ? 1024 : 65536);
	zn_result rs = zt_stream(d, z, zn, g, piece, &so, &slen);
	if (r == ZN_OK && rs != ZN_ERR_LIMIT) {
		if (rs != ZN_OK || slen != info.out_len || memcmp(so, out, slen)) {
			fprintf(stderr, "%s: whole: ok, %llu bytes; streaming: %s, %zu bytes\n",
			        what, (unsigned long long)info.out_len, zn_result_name(rs), slen);
			CHECK(0);
		}
	} else if (r != ZN_ERR_OUTPUT_FULL && rs == ZN_OK) {
		fprintf(stderr, "%s: whole: %s, streaming: ok\n", what, zn_result_name(r));
		CHECK(0);
	}
	free(so);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_corrupt");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_zstd_decoder *d;
	CHECK_OK(zn_zstd_decoder_new(&d));
	ZSTD_DCtx *zd = ZSTD_createDCtx();
	struct tally t = {0};
	static const int levels[] = {-3, 1, 3, 7, 12, 19};
	for (int i = 0; i < 48; i++) {
		enum zt_kind kind = (enum zt_kind)(i % ZT_NKINDS);
		size_t n = 1000 + tu_rng_below(&g, i % 3 ? 20000 : 300000);
		uint8_t *src = malloc(n);
		zt_fill(&g, src, n, kind);
		struct zt_params p = {.level = levels[i % 6],
		                      .checksum = i % 5 == 0,
		                      .no_size = i % 7 == 0,
		                      .window_log = i % 4 == 0 ? 12 : 0,
		                      .block_pieces = i % 3};
		size_t zlen;
		uint8_t *z = zt_compress(src, n, &p, &zlen);
		size_t cap = n + SLACK;
		uint8_t *out = malloc(cap), *ref = malloc(cap), *m = malloc(zlen);
		char what[128];
		/* Cut at every length of the first 64 bytes, then at about 300 places. */
		for (size_t cut = 0; cut < zlen; cut += cut < 64 ? 1 : 1 + zlen / 300) {
			snprintf(what, sizeof(what), "frame %d (%s) cut at %zu of %zu", i,
			         zt_kind_name[kind], cut, zlen);
			try_frame(d, zd, z, cut, cap, out, ref, &g, &t, what);
		}
		/* Single bit flips, byte overwrites, runs of a byte, anywhere and in the first
		 * bytes of the frame (header, first block header, literals and tables). */
		for (int k = 0; k < 200; k++) {
			memcpy(m, z, zlen);
			size_t at = k & 1 ? tu_rng_below(&g, zlen)
			                  : tu_rng_below(&g, zlen < 64 ? zlen : 64);
			switch (k % 3) {
			case 0:
				m[at] ^= (uint8_t)(1u << tu_rng_below(&g, 8));
				break;
			case 1:
				m[at] = (uint8_t)tu_rng_next(&g);
				break;
			default: {
				size_t len = 1 + tu_rng_below(&g, 8);
				memset(m + at, (int)tu_rng_below(&g, 256), ZN_MIN(len, zlen - at));
				break;
			}
			}
			snprintf(what, sizeof(what), "frame %d (%s), mutation %d at %zu", i,
			         zt_kind_name[kind], k, at);
			try_frame(d, zd, m, zlen, cap, out, ref, &g, &t, what);
		}
		free(m);
		free(out);
		free(ref);
		free(z);
		free(src);
	}
	printf("both refuse %u, both decode alike %u, only znippy refuses %u\n", t.both_refuse,
	       t.both_decode, t.only_we_refuse);
	ZSTD_freeDCtx(zd);
	zn_zstd_decoder_free(d);
	puts("ok");
	return 0;
}
