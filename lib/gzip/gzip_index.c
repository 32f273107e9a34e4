/* SPDX-License-Identifier: MIT */
/* gzip_index.c - random access into a gzip stream through an index of checkpoints. */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/common.h"
#include "deflate/deflate_resume.h"

/*
 * The technique of zlib's zran.c, gztool and rapidgzip's index: one pass decodes the stream and
 * notes, about every `spacing` bytes of output, a place where decoding can start again: a block
 * boundary inside a member (its bit, with the member's last 32 KiB of output, its CRC-32 and
 * length so far), or the byte after a member's trailer (nothing more needed). A read of a byte
 * range resumes an ordinary gzip decoder at the last checkpoint at or before the range
 * (deflate_resume.h, the hooks the parallel decoder's stitcher uses), decodes and drops the
 * output up to the range, and copies the range. So a read costs at most about `spacing` bytes
 * of decoding, whatever the offset, and the index about 32 KiB per checkpoint.
 *
 * The exported form is docs/GZIP_INDEX.md (little-endian; each window a zstd frame, level 3:
 * about a third of its 32 KiB on text), which zn_gzip_index_import() checks as untrusted input.
 * tail_crc is the CRC-32 of the input's last (up to) 4 KiB, which hold the last member's
 * trailer: an index is refused for an input that is not the one it was made from, in most cases.
 */

#define IX_MAGIC      "ZNGZIX01"
#define IX_HEAD       48u
#define IX_POINT_HEAD 44u
#define IX_ZSTD_LEVEL 3
#define IX_TAIL       4096u
#define IX_WIN        32768u

enum { IX_START = 0, IX_MEMBER = 1, IX_BLOCK = 2 };

struct ix_point {
	uint64_t in_bit, out, members;
	uint32_t crc, isize;
	uint8_t kind, subsequent;
	uint32_t wlen; /* the window's length (IX_BLOCK) */
	uint32_t
	        zlen; /* 0: win holds the window; else a zstd frame of zlen bytes (imported: decoded
	                 by the read that resumes here, so that an import costs no decoding) */
	uint8_t *win;
};

struct zn_gzip_index {
	uint64_t in_len, out_len, spacing;
	uint32_t tail_crc;
	size_t n, cap;
	struct ix_point *p;
};

static uint32_t tail_crc(const uint8_t *in, uint64_t in_len)
{
	size_t k = in_len < IX_TAIL ? (size_t)in_len : IX_TAIL;
	return zn_crc32(0, in + (in_len - k), k);
}

void zn_gzip_index_free(struct zn_gzip_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++)
		free(ix->p[i].win);
	free(ix->p);
	free(ix);
}

static zn_result add_point(struct zn_gzip_index *ix, const struct ix_point *pt, const void *win,
                           size_t win_bytes)
{
	if (ix->n == ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 16;
		struct ix_point *p = realloc(ix->p, cap * sizeof(*p));
		if (!p)
			return ZN_ERR_NOMEM;
		ix->p = p;
		ix->cap = cap;
	}
	struct ix_point *q = &ix->p[ix->n];
	*q = *pt;
	q->win = NULL;
	if (win_bytes) {
		if (!(q->win = malloc(win_bytes)))
			return ZN_ERR_NOMEM;
		memcpy(q->win, win, win_bytes);
	}
	ix->n++;
	return ZN_OK;
}

/* A checkpoint where decoder d stopped (a block or member stop), at stream output `out`. */
static zn_result note_point(struct zn_gzip_index *ix, struct zn_inflater *d, uint64_t out)
{
	struct ix_point pt = {.in_bit = zn_inflate_stream_bit_position(d), .out = out};
	int subsequent;
	zn_inflate_stream_gzip_state(d, &pt.crc, &pt.isize, &pt.members, &subsequent);
	pt.subsequent = (uint8_t)subsequent;
	if (zn_inflate_stream_at_member_end(d)) {
		pt.kind = IX_MEMBER;
		pt.crc = pt.isize = 0;
		return add_point(ix, &pt, NULL, 0);
	}
	const uint8_t *w;
	size_t n;
	zn_inflate_stream_history(d, &w, &n);
	pt.kind = IX_BLOCK;
	pt.wlen = (uint32_t)n;
	return add_point(ix, &pt, w, n);
}

static zn_result build_points(struct zn_gzip_index *ix, struct zn_inflater *d, const uint8_t *in,
                              size_t in_len)
{
	uint64_t pos = 0, out = 0, last = 0;
	for (;;) {
		size_t used, olen;
		const void *o;
		int done;
		zn_result r =
		        zn_inflate_stream(d, in + pos, in_len - pos, 1, &used, &o, &olen, &done);
		pos += used;
		out += olen;
		if (r != ZN_OK || done) {
			ix->out_len = out;
			return r;
		}
		if (out - last < ix->spacing)
			continue;
		/* Not after a final block: its trailer follows, not a block. */
		int member = zn_inflate_stream_at_member_end(d);
		if (member ||
		    (zn_inflate_stream_at_block_end(d) && !zn_inflate_stream_final_block(d))) {
			RETURN_IF_ERROR(note_point(ix, d, out));
			last = out;
		}
	}
}

zn_result zn_gzip_index_build(struct zn_gzip_index **out, const void *in, size_t in_len,
                              uint64_t spacing)
{
	if (!out || (!in && in_len))
		return ZN_ERR_INVALID_ARG;
	*out = NULL;
	struct zn_gzip_index *ix = calloc(1, sizeof(*ix));
	struct zn_inflater *d = NULL;
	if (!ix)
		return ZN_ERR_NOMEM;
	ix->in_len = in_len;
	ix->spacing = spacing ? ZN_MAX(spacing, ZN_GZIP_INDEX_SPACING_MIN)
	                      : ZN_GZIP_INDEX_SPACING_DEFAULT;
	ix->tail_crc = tail_crc(in, in_len);
	struct ix_point start = {.kind = IX_START};
	zn_result r = add_point(ix, &start, NULL, 0);
	if (r == ZN_OK)
		r = zn_inflater_new(&d, ZN_FORMAT_GZIP);
	if (r == ZN_OK) {
		zn_inflate_stream_set_block_stops(d, 1);
		zn_inflate_stream_set_member_stops(d, 1);
		r = build_points(ix, d, in, in_len);
	}
	zn_inflater_free(d);
	if (r == ZN_OK || r == ZN_ERR_TRAILING_GARBAGE)
		*out = ix;
	else
		zn_gzip_index_free(ix);
	return r;
}

uint64_t zn_gzip_index_out_len(const struct zn_gzip_index *ix)
{
	return ix ? ix->out_len : 0;
}

size_t zn_gzip_index_points(const struct zn_gzip_index *ix)
{
	return ix ? ix->n : 0;
}

/* ---- reading a range ---------------------------------------------------------------------------
 */

/* The last checkpoint at or before output offset `at`. */
static const struct ix_point *point_for(const struct zn_gzip_index *ix, uint64_t at)
{
	size_t lo = 0, hi = ix->n; /* p[lo].out <= at (p[0] is the start) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->p[mid].out <= at)
			lo = mid;
		else
			hi = mid;
	}
	return &ix->p[lo];
}

/* Decoder d put at checkpoint pt; an imported window decoded into wbuf (IX_WIN bytes). */
static zn_result resume_at(struct zn_inflater *d, const struct ix_point *pt, uint8_t *wbuf)
{
	if (pt->kind == IX_START)
		return zn_inflate_stream_reset(d);
	const uint8_t *win = pt->win;
	if (pt->zlen) {
		size_t n = ZSTD_decompress(wbuf, pt->wlen, pt->win, pt->zlen);
		SAFETY_CHECK(!ZSTD_isError(n) && n == pt->wlen, ZN_ERR_CORRUPT);
		win = wbuf;
	}
	struct zn_gzip_resume r = {
	        .at_member_end = pt->kind == IX_MEMBER,
	        .first_bit = (unsigned)(pt->in_bit % 8),
	        .window = win,
	        .window_len = pt->wlen,
	        .crc = pt->crc,
	        .isize = pt->isize,
	        .members = pt->members,
	        .subsequent = pt->subsequent,
	};
	return zn_inflate_stream_resume_gzip(d, &r);
}

/* Decode from checkpoint pt until dst[0..len) holds the output from `offset` on, or the stream
 * ends. */
static zn_result read_from(struct zn_inflater *d, const struct ix_point *pt, const uint8_t *in,
                           size_t in_len, uint64_t offset, uint8_t *dst, size_t len, size_t *got)
{
	uint64_t pos = pt->in_bit / 8, out = pt->out;
	while (*got < len) {
		size_t used, olen;
		const void *o;
		int done;
		zn_result r =
		        zn_inflate_stream(d, in + pos, in_len - pos, 1, &used, &o, &olen, &done);
		pos += used;
		if (olen && out + olen > offset) {
			uint64_t skip = offset > out ? offset - out : 0;
			size_t k = (size_t)ZN_MIN((uint64_t)olen - skip, (uint64_t)(len - *got));
			memcpy(dst + *got, (const uint8_t *)o + skip, k);
			*got += k;
		}
		out += olen;
		if (r == ZN_ERR_TRAILING_GARBAGE)
			return ZN_OK; /* the index was made up to the garbage */
		if (r != ZN_OK || done)
			return r;
	}
	return ZN_OK;
}

zn_result zn_gzip_index_read(const struct zn_gzip_index *ix, const void *in, size_t in_len,
                             uint64_t offset, void *dst, size_t len, size_t *got)
{
	if (!ix || !got || (!in && in_len) || (!dst && len))
		return ZN_ERR_INVALID_ARG;
	*got = 0;
	if (in_len != ix->in_len || tail_crc(in, in_len) != ix->tail_crc)
		return ZN_ERR_INVALID_ARG;
	if (offset >= ix->out_len || !len)
		return ZN_OK;
	const struct ix_point *pt = point_for(ix, offset);
	uint8_t *wbuf = pt->zlen ? malloc(IX_WIN) : NULL;
	struct zn_inflater *d = NULL;
	zn_result r = pt->zlen && !wbuf ? ZN_ERR_NOMEM : zn_inflater_new(&d, ZN_FORMAT_GZIP);
	if (r == ZN_OK)
		r = resume_at(d, pt, wbuf);
	if (r == ZN_OK)
		r = read_from(d, pt, in, in_len, offset, dst, len, got);
	zn_inflater_free(d);
	free(wbuf);
	return r;
}

/* ---- export and import -------------------------------------------------------------------------
 */

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 4;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Each window compressed, into z[i] (z_len[i] bytes; none for no window). */
static zn_result pack_windows(const struct zn_gzip_index *ix, uint8_t **z, size_t *z_len)
{
	for (size_t i = 0; i < ix->n; i++) {
		const struct ix_point *q = &ix->p[i];
		z_len[i] = 0;
		if (!q->wlen)
			continue;
		if (q->zlen) { /* imported: the frame as it came */
			if (!(z[i] = malloc(q->zlen)))
				return ZN_ERR_NOMEM;
			memcpy(z[i], q->win, q->zlen);
			z_len[i] = q->zlen;
			continue;
		}
		size_t cap = ZSTD_compressBound(q->wlen);
		if (!(z[i] = malloc(cap)))
			return ZN_ERR_NOMEM;
		z_len[i] = ZSTD_compress(z[i], cap, q->win, q->wlen, IX_ZSTD_LEVEL);
		if (ZSTD_isError(z_len[i]))
			return ZN_ERR_CODEC;
	}
	return ZN_OK;
}

static void put_all(const struct zn_gzip_index *ix, uint8_t *b, size_t total, uint8_t *const *z,
                    const size_t *z_len)
{
	uint8_t *p = b;
	memcpy(p, IX_MAGIC, 8);
	p = put64(p + 8, ix->in_len);
	p = put64(p, ix->out_len);
	p = put64(p, ix->spacing);
	p = put64(p, ix->n);
	p = put32(p, ix->tail_crc);
	p = put32(p, 0);
	for (size_t i = 0; i < ix->n; i++) {
		const struct ix_point *q = &ix->p[i];
		p = put64(p, q->in_bit);
		p = put64(p, q->out);
		p = put64(p, q->members);
		p = put32(p, q->crc);
		p = put32(p, q->isize);
		*p++ = q->kind;
		*p++ = q->subsequent;
		*p++ = 0;
		*p++ = 0;
		p = put32(p, q->wlen);
		p = put32(p, (uint32_t)z_len[i]);
		if (z_len[i])
			memcpy(p, z[i], z_len[i]);
		p += z_len[i];
	}
	put32(p, zn_crc32(0, b, total - 4));
}

zn_result zn_gzip_index_export(const struct zn_gzip_index *ix, void **buf, size_t *len)
{
	if (!ix || !buf || !len)
		return ZN_ERR_INVALID_ARG;
	uint8_t **z = calloc(ix->n, sizeof(*z));
	size_t *z_len = calloc(ix->n, sizeof(*z_len));
	zn_result r = z && z_len ? pack_windows(ix, z, z_len) : ZN_ERR_NOMEM;
	size_t total = IX_HEAD + 4;
	for (size_t i = 0; r == ZN_OK && i < ix->n; i++)
		total += IX_POINT_HEAD + z_len[i];
	uint8_t *b = r == ZN_OK ? malloc(total) : NULL;
	if (r == ZN_OK && !b)
		r = ZN_ERR_NOMEM;
	if (r == ZN_OK) {
		put_all(ix, b, total, z, z_len);
		*buf = b;
		*len = total;
	}
	for (size_t i = 0; z && i < ix->n; i++)
		free(z[i]);
	free(z);
	free(z_len);
	return r;
}

/* One checkpoint at b[*at..len), checked against the one before it (prev NULL: the first). */
static zn_result import_point(struct zn_gzip_index *ix, const uint8_t *b, size_t len, size_t *at,
                              const struct ix_point *prev)
{
	SAFETY_CHECK(len - *at >= IX_POINT_HEAD, ZN_ERR_CORRUPT);
	const uint8_t *p = b + *at;
	struct ix_point pt = {.in_bit = get64(p),
	                      .out = get64(p + 8),
	                      .members = get64(p + 16),
	                      .crc = get32(p + 24),
	                      .isize = get32(p + 28),
	                      .kind = p[32],
	                      .subsequent = p[33],
	                      .wlen = get32(p + 36)};
	uint32_t zlen = get32(p + 40);
	SAFETY_CHECK(pt.kind <= IX_BLOCK && pt.subsequent <= 1 && !p[34] && !p[35], ZN_ERR_CORRUPT);
	SAFETY_CHECK(pt.wlen <= IX_WIN && (pt.kind == IX_BLOCK || !pt.wlen), ZN_ERR_CORRUPT);
	SAFETY_CHECK(len - *at - IX_POINT_HEAD >= zlen && !zlen == !pt.wlen, ZN_ERR_CORRUPT);
	SAFETY_CHECK(pt.in_bit / 8 <= ix->in_len && pt.out <= ix->out_len, ZN_ERR_CORRUPT);
	if (!prev)
		SAFETY_CHECK(pt.kind == IX_START && !pt.in_bit && !pt.out && !pt.members,
		             ZN_ERR_CORRUPT);
	else
		SAFETY_CHECK(pt.kind != IX_START && pt.in_bit > prev->in_bit && pt.out >= prev->out,
		             ZN_ERR_CORRUPT);
	SAFETY_CHECK(pt.kind != IX_MEMBER || pt.in_bit % 8 == 0, ZN_ERR_CORRUPT);
	/* The frame must say it holds window_len bytes; it is decoded where a read needs it. */
	SAFETY_CHECK(!zlen || ZSTD_getFrameContentSize(p + IX_POINT_HEAD, zlen) == pt.wlen,
	             ZN_ERR_CORRUPT);
	pt.zlen = zlen;
	*at += IX_POINT_HEAD + zlen;
	return add_point(ix, &pt, p + IX_POINT_HEAD, zlen);
}

static zn_result import_points(struct zn_gzip_index *ix, const uint8_t *b, size_t len,
                               uint64_t count)
{
	size_t at = IX_HEAD;
	/* Every checkpoint takes IX_POINT_HEAD bytes at least: no allocation beyond the input's. */
	SAFETY_CHECK(count >= 1 && count <= (len - IX_HEAD) / IX_POINT_HEAD, ZN_ERR_CORRUPT);
	for (uint64_t i = 0; i < count; i++)
		RETURN_IF_ERROR(import_point(ix, b, len, &at, i ? &ix->p[ix->n - 1] : NULL));
	SAFETY_CHECK(at == len, ZN_ERR_CORRUPT);
	return ZN_OK;
}

zn_result zn_gzip_index_import(struct zn_gzip_index **out, const void *buf, size_t len)
{
	if (!out || (!buf && len))
		return ZN_ERR_INVALID_ARG;
	*out = NULL;
	const uint8_t *b = buf;
	if (len < IX_HEAD + 4 || memcmp(b, IX_MAGIC, 8))
		return ZN_ERR_BAD_HEADER;
	if (get32(b + len - 4) != zn_crc32(0, b, len - 4))
		return ZN_ERR_CHECKSUM;
	struct zn_gzip_index *ix = calloc(1, sizeof(*ix));
	if (!ix)
		return ZN_ERR_NOMEM;
	ix->in_len = get64(b + 8);
	ix->out_len = get64(b + 16);
	ix->spacing = get64(b + 24);
	ix->tail_crc = get32(b + 40);
	zn_result r = get32(b + 44) ? ZN_ERR_CORRUPT : import_points(ix, b, len - 4, get64(b + 32));
	if (r != ZN_OK) {
		zn_gzip_index_free(ix);
		return r;
	}
	*out = ix;
	return ZN_OK;
}
