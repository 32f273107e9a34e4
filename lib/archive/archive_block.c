/* SPDX-License-Identifier: MIT */
/* archive_block.c - data blocks: their table rows, and decoding them through a block cache.
 *
 * Everything that reads a block's bytes goes through zn_block_get: the reader's random access
 * (zn_reader_read_entry: a file, or a prefix of a block, with a cache of a few blocks), and the
 * workers of extract and verify (whole blocks, a cache of one slot each, never shared). A stored
 * block is handed out straight from the mapping; a compressed one is decoded into a slot's buffer,
 * whole in one call when all of it is wanted, else as far as wanted by a streaming decoder that can
 * go on later from where it stopped.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/xxh3.h"
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_stableOutBuffer, a parameter of the shared library */
#include <zstd.h>

#include "archive_block.h"
#include "common/big_alloc.h"
#include "zstd/zstd_frame.h"

void zn_block_release(struct zn_reader *r, uint64_t i)
{
	struct zn_blockinfo b;
	if (!r->mapped || zn_block_info(r, i, &b) != ZN_OK)
		return;
	/* Only whole pages inside the block: its neighbours may still be used by other workers. */
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)(r->map + b.offset) + ps - 1) & ~(ps - 1);
	uintptr_t end = ((uintptr_t)(r->map + b.offset + b.csize)) & ~(ps - 1);
	if (end > start)
		madvise((void *)start, end - start, MADV_DONTNEED);
}

void *zn_dctx_new(void)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (d)
		ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 28);
	return d;
}

zn_result zn_block_info(struct zn_reader *r, uint64_t i, struct zn_blockinfo *b)
{
	SAFETY_CHECK(i < r->nblocks, ZN_ERR_CORRUPT);
	const uint8_t *off = zn_row(r, ZN_COL_BLK_OFFSET, i), *cs = zn_row(r, ZN_COL_BLK_CSIZE, i),
	              *us = zn_row(r, ZN_COL_BLK_USIZE, i), *co = zn_row(r, ZN_COL_BLK_CODEC, i),
	              *xx = zn_row(r, ZN_COL_BLK_XXH3, i), *cx = zn_row(r, ZN_COL_BLK_CXXH3, i);
	SAFETY_CHECK(off && cs && us && co && xx && cx, ZN_ERR_CORRUPT);
	b->offset = zn_get_le64(off);
	b->csize = zn_get_le64(cs);
	b->usize = zn_get_le64(us);
	b->codec = *co;
	b->xxh3 = zn_get_le64(xx);
	b->cxxh3 = zn_get_le64(cx);
	SAFETY_CHECK(b->offset >= ZN_HEADER_SIZE && b->offset <= r->index_offset, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->csize <= r->index_offset - b->offset, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->usize <= r->chunk_size, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->codec == ZN_BLOCK_STORED || b->codec == ZN_BLOCK_ZSTD, ZN_ERR_CORRUPT);
	SAFETY_CHECK(b->codec != ZN_BLOCK_STORED || b->csize == b->usize, ZN_ERR_CORRUPT);
	return ZN_OK;
}

/* Where the first block header of the zstd frame at p (n bytes) lies (RFC 8878, 3.1.1.1), or 0
 * if p does not start with a frame header. */
static size_t frame_blocks_start(const uint8_t *p, size_t n)
{
	static const uint8_t did_size[4] = {0, 1, 2, 4}, fcs_size[4] = {0, 2, 4, 8};
	if (n < 5 || zn_get_le32(p) != 0xFD2FB528u)
		return 0;
	const unsigned fhd = p[4], single = fhd >> 5 & 1, fcs = fhd >> 6;
	const size_t start = 5 + !single + did_size[fhd & 3] + (fcs ? fcs_size[fcs] : single);
	return start <= n ? start : 0; /* a header longer than the block: crafted, walk lost */
}

/* How far the decoder of a block's prefix is fed next: to the end of the next whole zstd block
 * (RFC 8878, 3.1.1.2) past the `pos` bytes it has consumed, as *walk (the next block header, 0
 * once unknown) finds them, so that each call decodes one block of at most 128 KiB and the
 * decoding stops within one block of the bytes wanted (feeding 64 KiB of input a call decoded
 * about 180 KiB more than needed, a sixth of a millisecond here), and so that the decoder never
 * copies a block split between two feeds into a buffer of its own. Where the walk is lost (a
 * crafted block), the input goes in steps of 64 KiB. Bounds are checked here; the decoder checks
 * the rest. */
static size_t next_feed(const uint8_t *p, size_t n, size_t *walk, size_t pos, size_t fed)
{
	size_t w = *walk;
	while (w && w <= pos) {
		if (w + 3 > n) {
			w = 0;
			break;
		}
		const uint32_t h = p[w] | (uint32_t)p[w + 1] << 8 | (uint32_t)p[w + 2] << 16;
		const uint32_t type = h >> 1 & 3, size = h >> 3;
		w += 3 + (type == 1 ? 1 : size); /* RLE: one byte stored */
		if (type == 3 || w > n)
			w = 0; /* reserved, or past the end: crafted */
		else if (h & 1)
			w = n; /* the last block: the rest (a checksum) goes too */
	}
	*walk = w;
	return w ? ZN_MAX(w, fed) : ZN_MIN(n, fed + (64 << 10));
}

void zn_block_cache_init(struct zn_block_cache *c, const struct zn_reader *r, unsigned slots,
                         bool huge)
{
	memset(c, 0, sizeof(*c));
	c->buf_size = huge ? zn_big_round(r->chunk_size) : r->chunk_size;
	/* Within ZN_BCACHE_BYTES of buffers: one slot for 64 MiB chunks and up (a `cat` of one
	 * file makes one buffer whatever the count). */
	const uint64_t fit = ZN_BCACHE_BYTES / c->buf_size;
	c->nslots = (unsigned)ZN_MAX(1, ZN_MIN(ZN_MIN(slots, ZN_BCACHE_SLOTS), fit));
	for (unsigned k = 0; k < ZN_BCACHE_SLOTS; k++)
		c->slot[k].block = UINT64_MAX;
}

void zn_block_cache_free(struct zn_block_cache *c)
{
	for (unsigned k = 0; k < ZN_BCACHE_SLOTS; k++) {
		zn_big_free(c->slot[k].buf, c->buf_size);
		ZSTD_freeDCtx(c->slot[k].sdctx);
		zn_zstd_decoder_free(c->slot[k].zd);
	}
	ZSTD_freeDCtx(c->dctx);
	zn_zstd_decoder_free(c->zd);
	memset(c, 0, sizeof(*c));
}

/* The slot holding block b, or NULL. */
static struct zn_block_slot *slot_find(struct zn_block_cache *c, uint64_t b)
{
	for (unsigned k = 0; k < c->nslots; k++)
		if (c->slot[k].block == b)
			return &c->slot[k];
	return NULL;
}

/* A slot for a block not in the cache: one never used, else the least recently used. */
static struct zn_block_slot *slot_victim(struct zn_block_cache *c)
{
	struct zn_block_slot *v = &c->slot[0];
	for (unsigned k = 0; k < c->nslots; k++) {
		if (!c->slot[k].buf)
			return &c->slot[k];
		if (c->slot[k].used < v->used)
			v = &c->slot[k];
	}
	return v;
}

/* A stored block, from the mapping (nothing to keep): its stored bytes checked unless
 * `unchecked`; they are its content, so their two sums must agree. */
static zn_result get_stored(struct zn_reader *r, const struct zn_blockinfo *bi, bool unchecked,
                            const uint8_t **data)
{
	const uint8_t *src = r->map + bi->offset;
	atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
	if (!unchecked) {
		SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(src, bi->csize) == bi->cxxh3), ZN_ERR_CHECKSUM);
		SAFETY_CHECK(ZN_SUM_OK(bi->xxh3 == bi->cxxh3), ZN_ERR_CORRUPT);
	}
	*data = src; /* zero copy: straight from the mapping */
	return ZN_OK;
}

/* Block bi's frame at src decoded by our decoder into buf (buf_size bytes writable) up to at
 * least `need` bytes, begun afresh or gone on with from where it stopped. Any failure of a
 * frame whose stored bytes passed their checksum is a corrupt block. */
static zn_result frame_decode(struct zn_zstd_decoder *zd, const uint8_t *src,
                              const struct zn_blockinfo *bi, uint8_t *buf, uint64_t buf_size,
                              uint64_t need, bool begin, uint64_t *out_len)
{
	size_t len = 0;
	int done = 0;
	zn_result e = ZN_OK;
	if (begin)
		e = zn_zstd_frame_begin(zd, src, bi->csize, buf, bi->usize, buf_size);
	if (e == ZN_OK)
		e = zn_zstd_frame_step(zd, need, &len, &done);
	SAFETY_CHECK(e == ZN_OK || e == ZN_ERR_NOMEM, ZN_ERR_CORRUPT);
	RETURN_IF_ERROR(e);
	/* The frame ended early, or ended short of the block's size. */
	SAFETY_CHECK(len >= need && (!done || len == bi->usize), ZN_ERR_CORRUPT);
	*out_len = len;
	return ZN_OK;
}

/* All of compressed block b into slot s, in one call. Checked: the stored bytes before they
 * reach the decoder (every byte of the archive is covered by a checksum, and zstd never sees
 * damaged input), the decoded bytes after. Unchecked, zstd still decodes damaged or crafted
 * input safely, into at most usize bytes. */
static zn_result decode_whole(struct zn_reader *r, struct zn_block_cache *c,
                              struct zn_block_slot *s, uint64_t b, const struct zn_blockinfo *bi,
                              bool unchecked)
{
	const uint8_t *src = r->map + bi->offset;
	s->block = UINT64_MAX; /* until it holds this block */
	/* Made on first use, as a slot's sdctx: creating a context costs ~35 us here (zstd runs
	 * CPUID for each, a VM exit), and one `cat` needs at most one of them. */
	if (!r->own_zstd && !c->dctx)
		SAFETY_CHECK(c->dctx = zn_dctx_new(), ZN_ERR_NOMEM);
	if (r->own_zstd && !c->zd)
		RETURN_IF_ERROR(zn_zstd_decoder_new(&c->zd));
	atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
	if (!unchecked)
		SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(src, bi->csize) == bi->cxxh3), ZN_ERR_CHECKSUM);
	if (!r->own_zstd) {
		size_t n = ZSTD_decompressDCtx(c->dctx, s->buf, bi->usize, src, bi->csize);
		SAFETY_CHECK(!ZSTD_isError(n) && n == bi->usize, ZN_ERR_CORRUPT);
	} else {
		uint64_t n;
		RETURN_IF_ERROR(
		        frame_decode(c->zd, src, bi, s->buf, c->buf_size, bi->usize, true, &n));
	}
	if (!unchecked)
		SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(s->buf, bi->usize) == bi->xxh3), ZN_ERR_CHECKSUM);
	s->block = b;
	s->len = bi->usize;
	s->unchecked = unchecked;
	return ZN_OK;
}

/* libzstd's part of decode_prefix: its streaming decoder straight into the slot, fed a zstd block
 * at a time. */
static zn_result prefix_libzstd(struct zn_block_slot *s, const struct zn_blockinfo *bi,
                                const uint8_t *src, uint64_t need, bool resume)
{
	ZSTD_outBuffer out = {s->buf, bi->usize, 0};
	ZSTD_inBuffer in = {src, 0, 0};
	size_t walk;
	if (resume) {
		out.pos = s->len;
		in.pos = s->stream_in;
		in.size = s->stream_fed;
		walk = s->stream_walk;
	} else {
		if (!s->sdctx) {
			/* Decode straight into the slot (no window buffer of its own, no copy): the
			 * output buffer stays the same across calls, and stopping early is done by
			 * feeding the input in pieces rather than by a short output buffer. */
			s->sdctx = zn_dctx_new();
			SAFETY_CHECK(s->sdctx, ZN_ERR_NOMEM);
			ZSTD_DCtx_setParameter(s->sdctx, ZSTD_d_stableOutBuffer, 1);
		}
		ZSTD_DCtx_reset(s->sdctx, ZSTD_reset_session_only);
		walk = frame_blocks_start(src, bi->csize);
	}
	while (out.pos < need) {
		size_t in0 = in.pos, out0 = out.pos;
		in.size = next_feed(src, bi->csize, &walk, in.pos, in.size);
		size_t ret = ZSTD_decompressStream(s->sdctx, &out, &in);
		SAFETY_CHECK(!ZSTD_isError(ret), ZN_ERR_CORRUPT);
		/* The frame ended early, or no progress at all: truncated or crafted. */
		if (out.pos < need)
			SAFETY_CHECK(ret != 0 && (in.pos > in0 || out.pos > out0), ZN_ERR_CORRUPT);
	}
	s->len = out.pos;
	s->stream_in = in.pos;
	s->stream_fed = in.size;
	s->stream_walk = walk;
	return ZN_OK;
}

/* Bytes [0, need) of compressed block b in slot s, decoding on from where the slot's decoder
 * stopped when it holds the block in part (`resume`). Decoding stops within a zstd block of
 * `need` (libzstd: next_feed; ours: its steps): a file in the middle of a block costs half a
 * block, not all of it. */
static zn_result decode_prefix(struct zn_reader *r, struct zn_block_cache *c,
                               struct zn_block_slot *s, uint64_t b, const struct zn_blockinfo *bi,
                               uint64_t need, bool unchecked, bool resume)
{
	const uint8_t *src = r->map + bi->offset;
	const bool check = !unchecked && (!resume || s->unchecked);
	if (check)
		SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(src, bi->csize) == bi->cxxh3), ZN_ERR_CHECKSUM);
	if (resume) {
		if (check) /* what was decoded came from the bytes just checked */
			s->unchecked = false;
	} else {
		atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
		s->unchecked = unchecked;
	}
	/* Not resumable, nor in the cache, until this decoding has succeeded. */
	s->block = UINT64_MAX;
	if (!r->own_zstd) {
		RETURN_IF_ERROR(prefix_libzstd(s, bi, src, need, resume));
	} else {
		/* Ours decodes into the slot in steps of whole zstd blocks, and keeps where it
		 * stopped. */
		if (!s->zd)
			RETURN_IF_ERROR(zn_zstd_decoder_new(&s->zd));
		RETURN_IF_ERROR(
		        frame_decode(s->zd, src, bi, s->buf, c->buf_size, need, !resume, &s->len));
	}
	/* Everything decoded is good to hand out, also the rest of the last zstd block. */
	s->block = b;
	return ZN_OK;
}

zn_result zn_block_get(struct zn_reader *r, struct zn_block_cache *c, uint64_t b,
                       const struct zn_blockinfo *bi, uint64_t need, enum zn_block_check check,
                       const uint8_t **data)
{
	const bool unchecked = check == ZN_BLOCK_UNCHECKED;
	struct zn_block_slot *s = slot_find(c, b);
	if (s && s->len >= need && (unchecked || !s->unchecked)) {
		s->used = ++c->clock;
		*data = s->buf;
		return ZN_OK;
	}
	if (bi->codec == ZN_BLOCK_STORED)
		return get_stored(r, bi, unchecked, data);
	/* Only a decoding that stopped part way leaves a block in the cache in part. */
	const bool resume = s && s->len < bi->usize;
	if (!s)
		s = slot_victim(c);
	s->used = ++c->clock;
	if (!s->buf)
		SAFETY_CHECK(s->buf = zn_big_alloc(c->buf_size), ZN_ERR_NOMEM);
	zn_result res = need == bi->usize && !resume
	                        ? decode_whole(r, c, s, b, bi, unchecked)
	                        : decode_prefix(r, c, s, b, bi, need, unchecked, resume);
	if (res == ZN_OK)
		*data = s->buf;
	return res;
}
