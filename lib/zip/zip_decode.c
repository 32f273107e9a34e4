/* SPDX-License-Identifier: MIT */
/* zip_decode.c - one entry's content: stored bytes straight from the archive, deflate, bzip2
 * and zstd through our decoders, size and CRC-32 checked, never more than the declared size
 * passed on.
 *
 * A deflate or zstd entry of up to ZIP_WHOLE_MAX bytes is decoded whole into the thread's
 * buffer (the fast path: no window copies, one sink call); a bigger one is streamed, so that a
 * thread's memory stays bounded whatever the archive declares (zstd: its window, within the
 * decoder's memory limit). bzip2 decodes block by block into the sink on the worker's own
 * thread: the entries are what the workers share out. */
#include <stdio.h>
#include <stdlib.h>

#include "zip/zip_internal.h"

#define ZIP_WHOLE_MAX ((size_t)32 << 20)

void zn_zip_work_release(struct zip_work *w)
{
	zn_inflater_free(w->inf);
	zn_zstd_decoder_free(w->zd);
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

void zn_zip_unsupported_message(const struct zip_ent *e, char out[96])
{
	static const struct {
		unsigned m;
		const char *name;
	} names[] = {{1, "Shrink"}, {6, "Implode"},        {9, "Deflate64"},
	             {12, "bzip2"}, {14, "LZMA"},          {93, "zstd"},
	             {95, "xz"},    {96, "JPEG"},          {97, "WavPack"},
	             {98, "PPMd"},  {99, "AES encryption"}};
	if (e->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENC)) {
		snprintf(out, 96, "encrypted (not supported)");
		return;
	}
	const char *n = "unknown";
	for (size_t k = 0; k < ZN_ARRAY_LEN(names); k++)
		if (names[k].m == e->method)
			n = names[k].name;
	snprintf(out, 96, "unsupported compression method %u (%s)", e->method, n);
}

/* Pass p[0, n) to sink in pieces of at most 1 GiB, adding to the CRC. */
static zn_result emit(zn_sink_fn sink, void *ctx, const uint8_t *p, uint64_t n, uint32_t *crc)
{
	while (n) {
		size_t k = (size_t)ZN_MIN(n, (uint64_t)1 << 30);
		*crc = zn_crc32(*crc, p, k);
		RETURN_IF_ERROR(sink(ctx, p, k));
		p += k, n -= k;
	}
	return ZN_OK;
}

/* The thread's buffer with room for `need` bytes. */
static zn_result work_buf(struct zip_work *w, size_t need)
{
	if (w->buf_cap >= need)
		return ZN_OK;
	size_t cap = ZN_MAX(need, (size_t)64 << 10);
	uint8_t *b = realloc(w->buf, cap);
	if (!b)
		return ZN_ERR_NOMEM;
	w->buf = b, w->buf_cap = cap;
	return ZN_OK;
}

/* Slack after the declared size lets the decoders' fast loops run to the end; a stream longer
 * than declared shows as a longer output (or OUTPUT_FULL), and nothing past size is passed on. */
#define WHOLE_SLACK 1024

static zn_result inflate_whole(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                               size_t cap, size_t *out_len)
{
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	RETURN_IF_ERROR(zn_inflate(w->inf, in, (size_t)e->csize, w->buf, cap, &info));
	*out_len = info.out_len;
	return ZN_OK;
}

static zn_result zstd_whole(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                            size_t cap, size_t *out_len)
{
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	RETURN_IF_ERROR(zn_zstd_decompress(w->zd, in, (size_t)e->csize, w->buf, cap, &info));
	*out_len = (size_t)info.out_len;
	return ZN_OK;
}

typedef zn_result (*whole_fn)(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                              size_t cap, size_t *out_len);

static zn_result decode_whole(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                              whole_fn fn, zn_sink_fn sink, void *ctx, uint32_t *crc)
{
	const size_t cap = (size_t)e->size + WHOLE_SLACK;
	RETURN_IF_ERROR(work_buf(w, cap));
	size_t len = 0;
	zn_result r = fn(e, in, w, cap, &len);
	if (r == ZN_ERR_OUTPUT_FULL)
		return ZN_ERR_LENGTH_MISMATCH;
	RETURN_IF_ERROR(r);
	if (len != e->size)
		return ZN_ERR_LENGTH_MISMATCH;
	return emit(sink, ctx, w->buf, len, crc);
}

/* The streaming interfaces of both decoders take the same arguments. */
static zn_result inflate_step(struct zip_work *w, const uint8_t *in, size_t n, int final,
                              size_t *used, const void **out, size_t *olen, int *done)
{
	return zn_inflate_stream(w->inf, in, n, final, used, out, olen, done);
}

static zn_result zstd_step(struct zip_work *w, const uint8_t *in, size_t n, int final, size_t *used,
                           const void **out, size_t *olen, int *done)
{
	return zn_zstd_stream(w->zd, in, n, final, used, out, olen, done);
}

typedef zn_result (*step_fn)(struct zip_work *w, const uint8_t *in, size_t n, int final,
                             size_t *used, const void **out, size_t *olen, int *done);

static zn_result decode_stream(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                               step_fn step, zn_sink_fn sink, void *ctx, uint32_t *crc)
{
	uint64_t pos = 0, out_total = 0;
	int done = 0;
	while (!done) {
		size_t chunk = (size_t)ZN_MIN(e->csize - pos, (uint64_t)1 << 20), used = 0,
		       olen = 0;
		const void *o = NULL;
		int final = pos + chunk == e->csize;
		RETURN_IF_ERROR(step(w, in + pos, chunk, final, &used, &o, &olen, &done));
		pos += used;
		if (olen > e->size - out_total)
			return ZN_ERR_LENGTH_MISMATCH;
		out_total += olen;
		RETURN_IF_ERROR(emit(sink, ctx, o, olen, crc));
	}
	return out_total == e->size ? ZN_OK : ZN_ERR_LENGTH_MISMATCH;
}

/* bzip2's output, passed on while within the declared size. */
struct bz_limit {
	zn_sink_fn sink;
	void *ctx;
	uint64_t left;
	uint32_t *crc;
};

static zn_result bz_limit_sink(void *ctx, const void *data, size_t len)
{
	struct bz_limit *l = ctx;
	if (len > l->left)
		return ZN_ERR_LENGTH_MISMATCH;
	l->left -= len;
	return emit(l->sink, l->ctx, data, len, l->crc);
}

static zn_result decode_bzip2(const struct zip_ent *e, const uint8_t *in, zn_sink_fn sink,
                              void *ctx, uint32_t *crc)
{
	struct zn_bunzip2_options opt;
	zn_bunzip2_options_init(&opt);
	opt.threads = 1;
	struct bz_limit l = {sink, ctx, e->size, crc};
	RETURN_IF_ERROR(zn_bunzip2_mem(&opt, in, (size_t)e->csize, bz_limit_sink, &l, NULL));
	return l.left == 0 ? ZN_OK : ZN_ERR_LENGTH_MISMATCH;
}

static zn_result decode_entry(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                              zn_sink_fn sink, void *ctx, uint32_t *crc)
{
	switch (e->method) {
	case ZIP_METHOD_STORE:
		return emit(sink, ctx, in, e->csize, crc);
	case ZIP_METHOD_BZIP2:
		return decode_bzip2(e, in, sink, ctx, crc);
	case ZIP_METHOD_ZSTD:
		if (!w->zd)
			RETURN_IF_ERROR(zn_zstd_decoder_new(&w->zd));
		if (e->size < ZIP_WHOLE_MAX)
			return decode_whole(e, in, w, zstd_whole, sink, ctx, crc);
		RETURN_IF_ERROR(zn_zstd_stream_reset(w->zd));
		return decode_stream(e, in, w, zstd_step, sink, ctx, crc);
	default: /* deflate */
		if (!w->inf)
			RETURN_IF_ERROR(zn_inflater_new(&w->inf, ZN_FORMAT_RAW));
		if (e->size < ZIP_WHOLE_MAX)
			return decode_whole(e, in, w, inflate_whole, sink, ctx, crc);
		RETURN_IF_ERROR(zn_inflate_stream_reset(w->inf));
		return decode_stream(e, in, w, inflate_step, sink, ctx, crc);
	}
}

zn_result zn_zip_decode(const struct zn_zip *z, uint64_t i, struct zip_work *w, zn_sink_fn sink,
                        void *ctx)
{
	const struct zip_ent *e = z->ents + i;
	if (e->damage)
		return (zn_result)e->damage;
	if (!zip_supported(e))
		return ZN_ERR_UNSUPPORTED;
	uint32_t crc = 0;
	RETURN_IF_ERROR(decode_entry(e, z->base + e->data, w, sink, ctx, &crc));
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	crc = e->crc; /* let the fuzzer past the CRC, into what follows a good entry */
#endif
	return crc == e->crc ? ZN_OK : ZN_ERR_CHECKSUM;
}

zn_result zn_zip_read(const struct zn_zip *z, uint64_t i, zn_sink_fn sink, void *ctx)
{
	if (!z || !sink || i >= z->count)
		return ZN_ERR_INVALID_ARG;
	struct zip_work w = {0};
	zn_result r = zn_zip_decode(z, i, &w, sink, ctx);
	zn_zip_work_release(&w);
	return r;
}

struct to_buf {
	uint8_t *out;
	size_t cap, len;
};

static zn_result to_buf_sink(void *ctx, const void *data, size_t len)
{
	struct to_buf *t = ctx;
	if (len > t->cap - t->len)
		return ZN_ERR_OUTPUT_FULL;
	memcpy(t->out + t->len, data, len);
	t->len += len;
	return ZN_OK;
}

zn_result zn_zip_read_to(const struct zn_zip *z, uint64_t i, void *out, size_t cap)
{
	if (!z || i >= z->count || (!out && cap))
		return ZN_ERR_INVALID_ARG;
	if (z->ents[i].size > cap)
		return ZN_ERR_OUTPUT_FULL;
	struct to_buf t = {out, cap, 0};
	return zn_zip_read(z, i, to_buf_sink, &t);
}
