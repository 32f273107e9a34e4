/* SPDX-License-Identifier: MIT */
/* archive_block.c - data blocks: their table rows, decoding them, and the reader's block cache. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/xxh3.h"
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_stableOutBuffer, a parameter of the shared library */
#include <zstd.h>

#include "archive_block.h"
#include "common/big_alloc.h"

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

zn_result zn_block_load(struct zn_reader *r, uint64_t i, void *dctx, uint8_t *buf,
                        const uint8_t **data, uint64_t *len)
{
	struct zn_blockinfo b;
	RETURN_IF_ERROR(zn_block_info(r, i, &b));
	const uint8_t *src = r->map + b.offset;
	atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
	/* The stored bytes are checked before they reach the decoder: every byte of the archive is
	 * covered by a checksum, and zstd never sees damaged input. */
	SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(src, b.csize) == b.cxxh3), ZN_ERR_CHECKSUM);
	if (b.codec == ZN_BLOCK_STORED) {
		*data = src; /* zero copy: straight from the mapping; the check above covered it */
		*len = b.usize;
		return ZN_SUM_OK(b.xxh3 == b.cxxh3) ? ZN_OK : ZN_ERR_CORRUPT;
	} else {
		size_t n = ZSTD_decompressDCtx(dctx, buf, b.usize, src, b.csize);
		SAFETY_CHECK(!ZSTD_isError(n) && n == b.usize, ZN_ERR_CORRUPT);
		*data = buf;
	}
	SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(*data, b.usize) == b.xxh3), ZN_ERR_CHECKSUM);
	*len = b.usize;
	return ZN_OK;
}

zn_result zn_block_salvage(struct zn_reader *r, uint64_t i, void *dctx, uint8_t *buf,
                           const uint8_t **data)
{
	struct zn_blockinfo b;
	RETURN_IF_ERROR(zn_block_info(r, i, &b));
	const uint8_t *src = r->map + b.offset;
	if (b.codec == ZN_BLOCK_STORED) {
		SAFETY_CHECK(b.csize == b.usize, ZN_ERR_CORRUPT);
		*data = src;
		return ZN_OK;
	}
	/* zstd decodes damaged or crafted input safely, into at most usize bytes. */
	size_t n = ZSTD_decompressDCtx(dctx, buf, b.usize, src, b.csize);
	SAFETY_CHECK(!ZSTD_isError(n) && n == b.usize, ZN_ERR_CORRUPT);
	*data = buf;
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

/* The slot holding block b, or NULL. */
static struct zn_bcache *cache_find(struct zn_reader *r, uint64_t b)
{
	for (int k = 0; k < ZN_BCACHE_SLOTS; k++)
		if (r->bc[k].block == b)
			return &r->bc[k];
	return NULL;
}

/* A slot for a block not in the cache: one never used, else the least recently used of the
 * first n, where n keeps the buffers within ZN_BCACHE_BYTES (one slot for 64 MiB chunks and up:
 * a `cat` of one file makes one buffer whatever n is). */
static struct zn_bcache *cache_victim(struct zn_reader *r)
{
	const uint64_t n =
	        ZN_MAX(1, ZN_MIN(ZN_BCACHE_SLOTS, ZN_BCACHE_BYTES / zn_big_round(r->chunk_size)));
	struct zn_bcache *v = &r->bc[0];
	for (uint64_t k = 0; k < n; k++) {
		if (!r->bc[k].buf)
			return &r->bc[k];
		if (r->bc[k].used < v->used)
			v = &r->bc[k];
	}
	return v;
}

/* Bytes [0, need) of block b, for random access. A compressed block is decoded only as far as
 * needed (a file in the middle of a block costs half a block, not all of it), and the
 * decoding of the block in the cache goes on from where it stopped when a later file of the same
 * block needs more: files read in their order (extract -O, diff, cat of many paths) cost one
 * decoding of each block, not one from the block's start for each file (10,000 files of the
 * small corpus to stdout: 17.7 s before, as many half-block decodings as files). The stored
 * bytes' checksum is checked first unless `digest_first`: the caller then checks the SHA-256 of
 * everything it takes from the block before handing any of it out, which is a stronger check of
 * those bytes and saves hashing the whole compressed block (a fifth of a millisecond per MB,
 * most of `cat`'s cost for a file near the start of a block). Without `digest_first` the
 * whole-block XXH3 is checked whenever the whole block is decoded at once. */
zn_result zn_block_prefix(struct zn_reader *r, uint64_t b, const struct zn_blockinfo *bi,
                          uint64_t need, bool digest_first, const uint8_t **data)
{
	struct zn_bcache *c = cache_find(r, b);
	if (c && c->len >= need && (digest_first || !c->unchecked)) {
		c->used = ++r->bc_clock;
		*data = c->buf;
		return ZN_OK;
	}
	uint64_t len;
	if (bi->codec == ZN_BLOCK_STORED) { /* read from the mapping: nothing to keep */
		if (!digest_first)
			return zn_block_load(r, b, NULL, NULL, data, &len);
		atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
		return zn_block_salvage(r, b, NULL, NULL, data);
	}
	/* Only a decoding that stopped part way leaves a block in the cache in part. */
	const bool resume = c && c->len < bi->usize;
	if (!c)
		c = cache_victim(r);
	c->used = ++r->bc_clock;
	/* Whole huge pages: the first use costs one page fault, not 256 for a 1 MiB block (0.45 ms
	 * of the 3 ms `cat` of the file that ends a block on a 2.45 GHz Zen 3 VM; 4 KiB pages made
	 * `cat` 1.43x as slow on a Zen 5 VM whose first touch of a page costs 15 us). */
	if (!c->buf)
		SAFETY_CHECK(c->buf = zn_big_alloc(zn_big_round(r->chunk_size)), ZN_ERR_NOMEM);
	uint8_t *const buf = c->buf;
	if (need == bi->usize && !resume) {
		c->block = UINT64_MAX; /* until it holds this block */
		/* Made on first use, as sdctx below: creating a context costs ~35 us here (zstd
		 * runs CPUID for each, a VM exit), and one `cat` needs at most one of them. */
		if (!r->dctx)
			SAFETY_CHECK(r->dctx = zn_dctx_new(), ZN_ERR_NOMEM);
		/* With `digest_first` the file's SHA-256 is the check, as for a prefix below: the
		 * block's two XXH3s (of the whole block and of its compressed bytes) would add a
		 * twentieth to `cat` of the file that ends a block. A damaged block (one flipped
		 * byte among many packed files) then still holds this file intact if its SHA-256
		 * says so. */
		zn_result res;
		if (digest_first) {
			atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
			res = zn_block_salvage(r, b, r->dctx, buf, data);
			len = bi->usize;
		} else
			res = zn_block_load(r, b, r->dctx, buf, data, &len);
		RETURN_IF_ERROR(res);
		c->block = b;
		c->len = len;
		c->unchecked = digest_first;
		return ZN_OK;
	}
	const uint8_t *src = r->map + bi->offset;
	const bool check = !digest_first && (!resume || c->unchecked);
	if (check)
		SAFETY_CHECK(ZN_SUM_OK(zn_xxh3(src, bi->csize) == bi->cxxh3), ZN_ERR_CHECKSUM);
	ZSTD_outBuffer out = {buf, bi->usize, 0};
	ZSTD_inBuffer in = {src, 0, 0};
	size_t walk;
	if (resume) {
		out.pos = c->len;
		in.pos = c->stream_in;
		in.size = c->stream_fed;
		walk = c->stream_walk;
		if (check) /* what was decoded came from the bytes just checked */
			c->unchecked = false;
	} else {
		atomic_fetch_add_explicit(&r->blocks_loaded, 1, memory_order_relaxed);
		if (!c->sdctx) {
			/* Decode straight into the cache (no window buffer of its own, no copy):
			 * the output buffer stays the same across calls, and stopping early is done
			 * by feeding the input in pieces rather than by a short output buffer. */
			c->sdctx = zn_dctx_new();
			SAFETY_CHECK(c->sdctx, ZN_ERR_NOMEM);
			ZSTD_DCtx_setParameter(c->sdctx, ZSTD_d_stableOutBuffer, 1);
		}
		ZSTD_DCtx_reset(c->sdctx, ZSTD_reset_session_only);
		walk = frame_blocks_start(src, bi->csize);
		c->unchecked = digest_first;
	}
	/* Not resumable, nor in the cache, until this decoding has succeeded. */
	c->block = UINT64_MAX;
	while (out.pos < need) {
		size_t in0 = in.pos, out0 = out.pos;
		in.size = next_feed(src, bi->csize, &walk, in.pos, in.size);
		size_t ret = ZSTD_decompressStream(c->sdctx, &out, &in);
		SAFETY_CHECK(!ZSTD_isError(ret), ZN_ERR_CORRUPT);
		/* The frame ended early, or no progress at all: truncated or crafted. */
		if (out.pos < need)
			SAFETY_CHECK(ret != 0 && (in.pos > in0 || out.pos > out0), ZN_ERR_CORRUPT);
	}
	/* Everything decoded is good to hand out, also the rest of the last zstd block. */
	c->block = b;
	c->len = out.pos;
	c->stream_in = in.pos;
	c->stream_fed = in.size;
	c->stream_walk = walk;
	*data = buf;
	return ZN_OK;
}
