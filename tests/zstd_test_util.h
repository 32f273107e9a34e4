/* SPDX-License-Identifier: MIT */
/* zstd_test_util.h - data generators, libzstd compression with parameters, and the decode checks
 * shared by the zstd decoder tests. */
/*
 * Header-only (every function `static`), as tests/inflate_test_streams.h. The check decodes a
 * frame with znippy's decoder whole into a guard-page buffer of exactly the content's size and
 * streaming in random pieces (each piece copied against a guard page), and compares both with
 * what libzstd compressed.
 */
#ifndef ZN_ZSTD_TEST_UTIL_H
#define ZN_ZSTD_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_* of the advanced API where libzstd has them */
#include <zstd.h>

#include "common/common.h" /* zn_get_le32 and friends */
#include "test_util.h"

const char *zn_zstd_decoder_kernel_name(const struct zn_zstd_decoder *d);
void zn_zstd_decoder_force_generic(struct zn_zstd_decoder *d);

/* ---- data ---------------------------------------------------------------------------------- */

enum zt_kind {
	ZT_TEXT,
	ZT_BINARY,
	ZT_RANDOM,
	ZT_ZEROS,
	ZT_RUNS,
	ZT_DELTAS,
	ZT_ZIPF,
	ZT_MIXED,
	ZT_NKINDS
};
static const char *const zt_kind_name[ZT_NKINDS] = {
        "text", "binary", "random", "zeros", "int64-runs", "int64-deltas", "int64-zipf", "mixed"};

static inline void zt_text(struct tu_rng *g, uint8_t *p, size_t n)
{
	static const char *words[] = {"the ",   "of ",    "and ",    "compression ", "zstd ",
	                              "frame ", "block ", "window ", "literal ",     "offset ",
	                              "match ", "\n",     "int ",    "return ",      "{\n\t",
	                              "}\n",    "0x",     "; ",      "struct ",      "size_t "};
	for (size_t i = 0; i < n;) {
		const char *w = words[tu_rng_below(g, 20)];
		if (tu_rng_below(g, 50) == 0) { /* a misspelt word */
			p[i++] = (uint8_t)('a' + tu_rng_below(g, 26));
			continue;
		}
		for (; *w && i < n; w++)
			p[i++] = (uint8_t)*w;
	}
}

/* Machine-code-like: records of small fields, pointers, runs of zeros, repeated opcodes. */
static inline void zt_binary(struct tu_rng *g, uint8_t *p, size_t n)
{
	static const uint8_t ops[][4] = {{0x48, 0x89, 0xe5, 0}, {0x48, 0x8b, 0x45, 0xf8},
	                                 {0xe8, 0, 0, 0},       {0xc3, 0x90, 0x90, 0x90},
	                                 {0x0f, 0x1f, 0x44, 0}, {0x31, 0xc0, 0x5d, 0xc3}};
	for (size_t i = 0; i < n;) {
		size_t k = tu_rng_below(g, 8);
		uint8_t tmp[16];
		size_t len;
		if (k < 4) {
			memcpy(tmp, ops[tu_rng_below(g, 6)], 4);
			len = 4;
		} else if (k < 6) {
			uint64_t v = 0x400000 + tu_rng_below(g, 1 << 16) * 8;
			memcpy(tmp, &v, 8);
			len = 8;
		} else if (k == 6) {
			memset(tmp, 0, 16);
			len = 1 + tu_rng_below(g, 16);
		} else {
			tu_rng_fill(g, tmp, 16);
			len = 1 + tu_rng_below(g, 16);
		}
		len = len < n - i ? len : n - i;
		memcpy(p + i, tmp, len);
		i += len;
	}
}

static inline void zt_int64(struct tu_rng *g, uint8_t *p, size_t n, enum zt_kind kind)
{
	int64_t v = kind == ZT_DELTAS ? 1600000000000 : 1000;
	static int64_t ids[1000];
	for (int i = 0; i < 1000; i++)
		ids[i] = (int64_t)(tu_rng_next(g) >> 24);
	size_t run = 0;
	for (size_t i = 0; i < n; i += 8) {
		if (kind == ZT_RUNS) {
			if (run == 0) {
				run = 1 + tu_rng_below(g, 300);
				v = tu_rng_below(g, 4) ? v + (int64_t)tu_rng_below(g, 100)
				                       : (int64_t)tu_rng_below(g, 1u << 30);
			}
			run--;
		} else if (kind == ZT_DELTAS) {
			v += (int64_t)tu_rng_below(g, 16);
		} else { /* Zipf-like: id k with probability about 1/(k+1) */
			uint64_t r = tu_rng_below(g, 1u << 20) + 1;
			v = ids[(1000u * 1024 / r < 999u ? 1000u * 1024 / r : 999u)];
		}
		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

static inline void zt_fill(struct tu_rng *g, uint8_t *p, size_t n, enum zt_kind kind);

/* Pieces of every other kind, with long-range repeats of earlier pieces. */
static inline void zt_mixed(struct tu_rng *g, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = 1 + tu_rng_below(g, 20000);
		len = len < n - i ? len : n - i;
		if (i > 0 && tu_rng_below(g, 4) == 0) {
			size_t from = tu_rng_below(g, i);
			size_t k = len < i - from ? len : i - from;
			memmove(p + i, p + from, k);
			len = k;
		} else {
			zt_fill(g, p + i, len, (enum zt_kind)tu_rng_below(g, ZT_MIXED));
		}
		i += len;
	}
}

static inline void zt_fill(struct tu_rng *g, uint8_t *p, size_t n, enum zt_kind kind)
{
	switch (kind) {
	case ZT_TEXT:
		zt_text(g, p, n);
		break;
	case ZT_BINARY:
		zt_binary(g, p, n);
		break;
	case ZT_RANDOM:
		tu_rng_fill(g, p, n);
		break;
	case ZT_ZEROS:
		memset(p, 0, n);
		break;
	case ZT_RUNS:
	case ZT_DELTAS:
	case ZT_ZIPF:
		zt_int64(g, p, n, kind);
		break;
	default:
		zt_mixed(g, p, n);
		break;
	}
}

/* ---- compression --------------------------------------------------------------------------- */

struct zt_params {
	int level;
	int checksum;   /* content checksum */
	int no_size;    /* no content size in the header */
	int window_log; /* 0: the level's */
	int long_match; /* long-distance matching (--long) */
	int workers;    /* ZSTD_c_nbWorkers */
	int rsyncable;
	int block_pieces; /* > 0: compress in that many streaming calls (flushes make blocks) */
	const void *dict; /* ZSTD_CCtx_loadDictionary (raw content or zstd format) */
	size_t dict_len;
};

/* Compress with libzstd; returns a malloc'd frame, *zlen its size. */
static inline uint8_t *zt_compress(const uint8_t *src, size_t n, const struct zt_params *p,
                                   size_t *zlen)
{
	/* One context for the program: a fresh one per frame spent most of the tests' time
	 * mapping and clearing its tables. */
	static ZSTD_CCtx *cc;
	if (!cc)
		cc = ZSTD_createCCtx();
	CHECK(cc != NULL);
	CHECK(!ZSTD_isError(ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters)));
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, p->level);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, p->checksum);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, !p->no_size);
	if (p->window_log)
		CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, p->window_log)));
	if (p->long_match)
		ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, 1);
	if (p->workers)
		CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_nbWorkers, p->workers)));
	if (p->rsyncable)
		CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_rsyncable, 1)));
	if (p->dict)
		CHECK(!ZSTD_isError(ZSTD_CCtx_loadDictionary(cc, p->dict, p->dict_len)));
	size_t cap = ZSTD_compressBound(n) + 1024;
	uint8_t *z = malloc(cap);
	CHECK(z != NULL);
	ZSTD_outBuffer out = {z, cap, 0};
	size_t pieces = p->block_pieces > 0 ? (size_t)p->block_pieces : 1;
	for (size_t k = 0; k < pieces; k++) {
		size_t a = n * k / pieces, b = n * (k + 1) / pieces;
		ZSTD_inBuffer in = {src + a, b - a, 0};
		ZSTD_EndDirective mode = k + 1 == pieces ? ZSTD_e_end : ZSTD_e_flush;
		size_t left;
		do {
			left = ZSTD_compressStream2(cc, &out, &in, mode);
			CHECK(!ZSTD_isError(left));
		} while (left != 0 || in.pos < in.size);
	}
	*zlen = out.pos;
	return z;
}

/* ---- decode checks ------------------------------------------------------------------------- */

/* Streaming decode of z[0..zn) in random pieces (1..max_piece bytes, each copied to the end of
 * a guard-page buffer); returns the result and the output (malloc'd, *olen bytes). */
static inline zn_result zt_stream(struct zn_zstd_decoder *d, const uint8_t *z, size_t zn,
                                  struct tu_rng *g, size_t max_piece, uint8_t **outp, size_t *olen)
{
	size_t cap = 1 << 16, len = 0, pos = 0;
	uint8_t *o = malloc(cap);
	CHECK(o != NULL);
	CHECK_OK(zn_zstd_stream_reset(d));
	/* Each piece is copied to the end of one guard-page buffer, so that reading past it
	 * faults. */
	size_t gcap = max_piece < zn ? max_piece : zn;
	uint8_t *gbuf = tu_guard_alloc(gcap);
	zn_result r = ZN_OK;
	int done = 0;
	unsigned idle = 0;
	while (!done) {
		size_t piece = 1 + tu_rng_below(g, max_piece);
		if (piece > zn - pos)
			piece = zn - pos;
		int final = pos + piece == zn;
		uint8_t *gb = gbuf + gcap - piece;
		if (piece)
			memcpy(gb, z + pos, piece);
		size_t used = 0, n = 0;
		const void *out = NULL;
		r = zn_zstd_stream(d, gb, piece, final, &used, &out, &n, &done);
		CHECK(used <= piece);
		if (n) {
			while (len + n > cap) {
				cap *= 2;
				o = realloc(o, cap);
				CHECK(o != NULL);
			}
			memcpy(o + len, out, n);
			len += n;
		}
		pos += used;
		if (r != ZN_OK)
			break;
		idle = used || n ? 0 : idle + 1;
		CHECK(idle < 4 || !final); /* every call makes progress */
	}
	tu_guard_free(gbuf, gcap);
	*outp = o;
	*olen = len;
	return r;
}

/* Decode z both ways and compare with orig[0..n): whole into a guard buffer of exactly n bytes
 * (and fail with ZN_ERR_OUTPUT_FULL into n - 1 bytes), streaming in pieces of random sizes. */
static inline void zt_check(struct zn_zstd_decoder *d, const uint8_t *z, size_t zn,
                            const uint8_t *orig, size_t n, struct tu_rng *g, const char *what)
{
	uint8_t *out = tu_guard_alloc(n);
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_zstd_decompress(d, z, zn, out, n, &info);
	if (r != ZN_OK || info.out_len != n || memcmp(out, orig, n)) {
		size_t at = 0;
		while (at < info.out_len && at < n && out[at] == orig[at])
			at++;
		fprintf(stderr, "%s: whole: %s, %llu of %zu bytes, first difference at %zu\n", what,
		        zn_result_name(r), (unsigned long long)info.out_len, n, at);
		CHECK(0);
	}
	CHECK_EQ_U64(info.in_used, zn);
	tu_guard_free(out, n);
	if (n > 0) {
		out = tu_guard_alloc(n - 1);
		r = zn_zstd_decompress(d, z, zn, out, n - 1, &info);
		if (r != ZN_ERR_OUTPUT_FULL)
			fprintf(stderr, "%s: into n - 1 bytes: %s\n", what, zn_result_name(r));
		CHECK(r == ZN_ERR_OUTPUT_FULL);
		tu_guard_free(out, n - 1);
	}
	static const size_t pieces[] = {1 << 20, 100000, 4096, 7};
	uint8_t *so;
	size_t slen;
	/* Tiny pieces only for small frames: each is a call. */
	size_t max_piece = pieces[tu_rng_below(g, zn < 30000 ? 4 : 3)];
	r = zt_stream(d, z, zn, g, max_piece, &so, &slen);
	if (r != ZN_OK || slen != n || memcmp(so, orig, n)) {
		fprintf(stderr, "%s: streaming (pieces up to %zu): %s, %zu of %zu bytes\n", what,
		        max_piece, zn_result_name(r), slen, n);
		CHECK(0);
	}
	free(so);
}

#endif
