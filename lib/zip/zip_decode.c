/* SPDX-License-Identifier: MIT */
/* zip_decode.c - one entry's content: stored bytes straight from the archive, deflate through
 * our decoder, size and CRC-32 checked, never more than the declared size passed on.
 *
 * A deflate entry of up to ZIP_WHOLE_MAX bytes is decoded whole into the thread's buffer with
 * zn_inflate (the fast path: no window copies, one sink call); a bigger one is streamed through
 * zn_inflate_stream, so that a thread's memory stays bounded whatever the archive declares. */
#include <stdio.h>
#include <stdlib.h>

#include "zip/zip_internal.h"

#define ZIP_WHOLE_MAX ((size_t)32 << 20)

void zn_zip_work_release(struct zip_work *w)
{
	zn_inflater_free(w->inf);
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

static zn_result decode_whole(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                              zn_sink_fn sink, void *ctx, uint32_t *crc)
{
	/* Slack lets the decoder's fast loop run to the end; a stream longer than declared shows
	 * as out_len != size (or OUTPUT_FULL), and nothing past size is passed on. */
	size_t need = (size_t)e->size + 1024;
	if (w->buf_cap < need) {
		size_t cap = ZN_MAX(need, (size_t)64 << 10);
		uint8_t *b = realloc(w->buf, cap);
		if (!b)
			return ZN_ERR_NOMEM;
		w->buf = b, w->buf_cap = cap;
	}
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result r = zn_inflate(w->inf, in, (size_t)e->csize, w->buf, need, &info);
	if (r == ZN_ERR_OUTPUT_FULL)
		return ZN_ERR_LENGTH_MISMATCH;
	RETURN_IF_ERROR(r);
	if (info.out_len != e->size)
		return ZN_ERR_LENGTH_MISMATCH;
	return emit(sink, ctx, w->buf, info.out_len, crc);
}

static zn_result decode_stream(const struct zip_ent *e, const uint8_t *in, struct zip_work *w,
                               zn_sink_fn sink, void *ctx, uint32_t *crc)
{
	RETURN_IF_ERROR(zn_inflate_stream_reset(w->inf));
	uint64_t pos = 0, out_total = 0;
	int done = 0;
	while (!done) {
		size_t chunk = (size_t)ZN_MIN(e->csize - pos, (uint64_t)1 << 20), used = 0,
		       olen = 0;
		const void *o = NULL;
		int final = pos + chunk == e->csize;
		RETURN_IF_ERROR(
		        zn_inflate_stream(w->inf, in + pos, chunk, final, &used, &o, &olen, &done));
		pos += used;
		if (olen > e->size - out_total)
			return ZN_ERR_LENGTH_MISMATCH;
		out_total += olen;
		RETURN_IF_ERROR(emit(sink, ctx, o, olen, crc));
	}
	return out_total == e->size ? ZN_OK : ZN_ERR_LENGTH_MISMATCH;
}

zn_result zn_zip_decode(const struct zn_zip *z, uint64_t i, struct zip_work *w, zn_sink_fn sink,
                        void *ctx)
{
	const struct zip_ent *e = z->ents + i;
	if (e->damage)
		return (zn_result)e->damage;
	if (!zip_supported(e))
		return ZN_ERR_UNSUPPORTED;
	const uint8_t *in = z->base + e->data;
	uint32_t crc = 0;
	if (e->method == ZIP_METHOD_STORE) {
		RETURN_IF_ERROR(emit(sink, ctx, in, e->csize, &crc));
	} else {
		if (!w->inf)
			RETURN_IF_ERROR(zn_inflater_new(&w->inf, ZN_FORMAT_RAW));
		if (e->size < ZIP_WHOLE_MAX)
			RETURN_IF_ERROR(decode_whole(e, in, w, sink, ctx, &crc));
		else
			RETURN_IF_ERROR(decode_stream(e, in, w, sink, ctx, &crc));
	}
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
