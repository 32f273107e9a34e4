/* SPDX-License-Identifier: MIT */
/* fuzz_gunzip_parallel.c - libFuzzer target: the parallel gzip decoder and the gzip index agree
 * with the sequential decoder. */
/*
 * Input: byte 0 picks the thread count (bits 0-1: 1..4), whether the stream is also decoded
 * through zn_gunzip_read() with read sizes seeded by byte 1 (bit 2), and whether the rest is also
 * imported as an exported index (bit 3); bytes 2.. are the gzip stream. Chunks are the smallest
 * the decoder takes (64 KiB), so inputs past that are cut into several (the seeds are).
 *
 * The reference is zn_inflate_stream() over the whole input, as `znippy gunzip -T1`. The parallel
 * decoder must give the same result, the same in_pos and the same output, from memory and through
 * reads. Where the stream is good, an index is built (64 KiB spacing) and ranges read through it
 * must be the reference's bytes. An imported index (the input as one) must be refused or, if it
 * passes, read without a crash. A disagreement aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define CAP ((size_t)16 << 20) /* more output than this: not compared */

struct sink {
	uint8_t *p;
	size_t len;
};

static zn_result sink_write(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;
	if (!len) /* buf may be NULL then (memcpy's arguments must not be) */
		return ZN_OK;
	if (len > CAP - s->len)
		return ZN_ERR_LIMIT;
	memcpy(s->p + s->len, buf, len);
	s->len += len;
	return ZN_OK;
}

struct reader {
	const uint8_t *in;
	size_t len, pos;
	uint32_t rng;
};

static zn_result read_piece(void *ctx, void *buf, size_t cap, size_t *got)
{
	struct reader *r = ctx;
	r->rng = r->rng * 1103515245u + 12345u;
	size_t n = (r->rng >> 16) % 3 ? 1 + (r->rng >> 8) % 200000 : 1 + (r->rng >> 8) % 64;
	n = n < cap ? n : cap;
	n = n < r->len - r->pos ? n : r->len - r->pos;
	memcpy(buf, r->in + r->pos, n);
	r->pos += n;
	*got = n;
	return ZN_OK;
}

/* The sequential decoder: result, in_pos, output (0 when it passes CAP: not compared). */
static int reference(struct zn_inflater *d, const uint8_t *in, size_t len, struct sink *out,
                     zn_result *res, uint64_t *in_pos)
{
	if (zn_inflate_stream_reset(d) != ZN_OK)
		abort();
	size_t pos = 0;
	for (;;) {
		size_t used, olen;
		const void *o;
		int done;
		zn_result r = zn_inflate_stream(d, in + pos, len - pos, 1, &used, &o, &olen, &done);
		pos += used;
		if (sink_write(out, o, olen) != ZN_OK)
			return 0;
		if (r != ZN_OK || done) {
			*res = r;
			break;
		}
	}
	zn_inflate_stream_position(d, in_pos, NULL);
	return 1;
}

static void check_same(const char *what, zn_result want, uint64_t want_pos, const struct sink *ref,
                       zn_result r, const struct zn_gunzip_info *info, const struct sink *out)
{
	if (r != want || info->in_pos != want_pos || out->len != ref->len ||
	    memcmp(out->p, ref->p, ref->len)) {
		fprintf(stderr, "%s: %s at %llu, %zu bytes; want %s at %llu, %zu bytes\n", what,
		        zn_result_name(r), (unsigned long long)info->in_pos, out->len,
		        zn_result_name(want), (unsigned long long)want_pos, ref->len);
		abort();
	}
}

static void check_index(const uint8_t *in, size_t len, const struct sink *ref, uint32_t rng)
{
	struct zn_gzip_index *ix;
	zn_result r = zn_gzip_index_build(&ix, in, len, ZN_GZIP_INDEX_SPACING_MIN);
	if (r != ZN_OK && r != ZN_ERR_TRAILING_GARBAGE)
		abort(); /* the reference decoded it */
	if (zn_gzip_index_out_len(ix) != ref->len)
		abort();
	static uint8_t buf[100000];
	for (int i = 0; i < 4; i++) {
		rng = rng * 1103515245u + 12345u;
		uint64_t off = ref->len ? (rng >> 4) % (ref->len + 1) : 0;
		size_t n = (rng >> 7) % sizeof(buf), got;
		if (zn_gzip_index_read(ix, in, len, off, buf, n, &got) != ZN_OK)
			abort();
		size_t want = off >= ref->len ? 0 : ref->len - off < n ? ref->len - off : n;
		if (got != want || memcmp(buf, ref->p + off, got))
			abort();
	}
	zn_gzip_index_free(ix);
}

static void check_import(const uint8_t *in, size_t len)
{
	struct zn_gzip_index *ix;
	if (zn_gzip_index_import(&ix, in, len) != ZN_OK)
		return;
	uint8_t buf[4096];
	size_t got;
	zn_gzip_index_read(ix, in, len, 0, buf, sizeof(buf), &got);
	zn_gzip_index_free(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct zn_inflater *d;
	static struct zn_gunzip *par[5];
	static struct sink ref, out;
	if (!d) {
		if (zn_inflater_new(&d, ZN_FORMAT_GZIP) != ZN_OK)
			abort();
		for (unsigned t = 1; t <= 4; t++) {
			struct zn_gunzip_options o;
			zn_gunzip_options_init(&o);
			o.threads = t;
			o.chunk_size = ZN_GUNZIP_CHUNK_MIN;
			if (zn_gunzip_new(&par[t], &o) != ZN_OK)
				abort();
		}
		ref.p = malloc(CAP);
		out.p = malloc(CAP);
		if (!ref.p || !out.p)
			abort();
	}
	if (size < 2)
		return 0;
	unsigned threads = 1 + (data[0] & 3);
	uint32_t rng = 0x9e3779b9u * (data[1] + 1u);
	const uint8_t *in = data + 2;
	size_t len = size - 2;
	if (data[0] & 8)
		check_import(in, len);
	zn_result want;
	uint64_t want_pos;
	ref.len = 0;
	if (!reference(d, in, len, &ref, &want, &want_pos))
		return 0;
	struct zn_gunzip_info info;
	zn_gunzip_info_init(&info);
	out.len = 0;
	zn_result r = zn_gunzip_mem(par[threads], in, len, sink_write, &out, &info);
	check_same("zn_gunzip_mem", want, want_pos, &ref, r, &info, &out);
	if (data[0] & 4) {
		struct reader rd = {in, len, 0, rng};
		zn_gunzip_info_init(&info);
		out.len = 0;
		r = zn_gunzip_read(par[threads], read_piece, &rd, sink_write, &out, &info);
		check_same("zn_gunzip_read", want, want_pos, &ref, r, &info, &out);
	}
	if (want == ZN_OK || want == ZN_ERR_TRAILING_GARBAGE)
		check_index(in, len, &ref, rng);
	return 0;
}
