/* SPDX-License-Identifier: MIT */
/* archive_block.h - data blocks: their table rows, and decoding them through a block cache. */
#ifndef ZN_ARCHIVE_BLOCK_H
#define ZN_ARCHIVE_BLOCK_H

#include "archive_internal.h"

/* Block i's row of the block table, validated against the archive's bounds. */
zn_result zn_block_info(struct zn_reader *r, uint64_t i, struct zn_blockinfo *b);

/* Done with block i: drop its pages from this process's mapping (they stay in the page cache),
 * so that reading a large archive through the map does not grow the resident set. */
void zn_block_release(struct zn_reader *r, uint64_t i);

/* A zstd decoder that accepts windows up to the largest chunk size (2^28). */
void *zn_dctx_new(void);

/* How a block's bytes are checked as they are read. */
enum zn_block_check {
	/* Both XXH3s: of the stored bytes, before they reach the decoder, and of the decoded
	 * block whenever it is decoded whole in one call. */
	ZN_BLOCK_CHECKED = 0,
	/* Neither: the caller checks the SHA-256 of everything it takes from the block before it
	 * uses any of it (a file held in one block), or takes only what each file's own SHA-256
	 * confirms (a block that failed its checksums). The block must still decode to its size. */
	ZN_BLOCK_UNCHECKED = 1,
};

/* Blocks a reading thread keeps decoded (within ZN_BCACHE_BYTES of buffers): the reader's random
 * access keeps ZN_BCACHE_SLOTS, so that files read in path order that come back to a block met
 * before (a file stored once for many identical ones, the two packers' blocks) cost no decoding of
 * it from its start each time; a worker of extract or verify keeps one, its decode buffer. */
#define ZN_BCACHE_SLOTS 4
#define ZN_BCACHE_BYTES (64u << 20)

/* One decoded block, or the part of it decoded so far. */
struct zn_block_slot {
	uint8_t *buf;        /* the cache's buf_size bytes, made on first use */
	uint64_t block, len; /* buf holds bytes [0, len) of block `block` (or UINT64_MAX) */
	bool unchecked;      /* ...decoded without checking the block's checksums */
	/* Where sdctx stopped in the block when it is here only in part (len below its size), to go
	 * on from there: the input it consumed and was fed, and the next zstd block header. */
	size_t stream_in, stream_fed, stream_walk;
	void *sdctx; /* its partial (streaming) decoder, made on first use (libzstd) */
	struct zn_zstd_decoder *zd; /* ...or ours, which decodes into buf in steps */
	uint64_t used;              /* when it was last used, for the choice of the one to reuse */
};

/* A cache is used by one thread at a time (each worker has its own); it holds no reference to
 * the reader, which must outlive its use. */
struct zn_block_cache {
	unsigned nslots;            /* slots in use: slot[0 .. nslots) */
	uint64_t buf_size;          /* bytes of each slot's buffer */
	uint64_t clock;             /* counts uses, for the least recently used slot */
	void *dctx;                 /* the whole-block decoder, made on first use (libzstd) */
	struct zn_zstd_decoder *zd; /* ...or ours */
	struct zn_block_slot slot[ZN_BCACHE_SLOTS];
};

/* An empty cache of up to `slots` blocks of r's chunk size (fewer where ZN_BCACHE_BYTES would
 * not hold them, at least one); nothing is allocated until a block is decoded. `huge`: buffers of
 * whole huge pages, for buffers written once, fresh (random access: the first use costs one page
 * fault, not 256 for a 1 MiB block: 0.45 ms of the 3 ms `cat` of the file that ends a block on a
 * 2.45 GHz Zen 3 VM; 4 KiB pages made `cat` 1.43x as slow on a Zen 5 VM whose first touch of a
 * page costs 15 us); else exactly a chunk (a worker's buffer, written again for every block). */
void zn_block_cache_init(struct zn_block_cache *c, const struct zn_reader *r, unsigned slots,
                         bool huge);
/* Free its buffers and decoders; the cache is empty (and unusable until initialised) after. */
void zn_block_cache_free(struct zn_block_cache *c);

/* Bytes [0, need) of block b, whose row is bi (zn_block_info), checked as `check` says: *data
 * points into the mapping (a stored block) or into a slot of c (valid until the next call with
 * c). A block in c in whole or in the part needed is not read again; a compressed block is
 * decoded whole when need is its size, else only as far as need (and later on from there).
 * ZN_ERR_CHECKSUM or ZN_ERR_CORRUPT for a damaged block, ZN_ERR_NOMEM. */
zn_result zn_block_get(struct zn_reader *r, struct zn_block_cache *c, uint64_t b,
                       const struct zn_blockinfo *bi, uint64_t need, enum zn_block_check check,
                       const uint8_t **data);

#endif
