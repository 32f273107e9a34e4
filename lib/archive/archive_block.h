/* SPDX-License-Identifier: MIT */
/* archive_block.h - data blocks: their table rows, decoding them, and the reader's block cache. */
#ifndef ZN_ARCHIVE_BLOCK_H
#define ZN_ARCHIVE_BLOCK_H

#include "archive_internal.h"

/* Done with block i: drop its pages from this process's mapping (they stay in the page cache),
 * so that reading a large archive through the map does not grow the resident set. */
void zn_block_release(struct zn_reader *r, uint64_t i);

/* A zstd decoder that accepts windows up to the largest chunk size (2^28). */
void *zn_dctx_new(void);

/* Block i's descriptor, validated against the archive's bounds. */
zn_result zn_block_info(struct zn_reader *r, uint64_t i, struct zn_blockinfo *b);

/* Decode block i: *data points at its bytes (into the map when stored, else into buf, which
 * holds chunk_size bytes); the XXH3 is checked. `dctx` is a ZSTD_DCtx owned by the caller. */
zn_result zn_block_load(struct zn_reader *r, uint64_t i, void *dctx, uint8_t *buf,
                        const uint8_t **data, uint64_t *len);

/* Block i's bytes as zn_block_load gives them but without its checksums, for a block that
 * failed them: only what each file's own SHA-256 then confirms may be used. ZN_ERR_CORRUPT if
 * it does not decode to its size. */
zn_result zn_block_salvage(struct zn_reader *r, uint64_t i, void *dctx, uint8_t *buf,
                           const uint8_t **data);

/* Bytes [0, need) of block b (bi its row) for random access, from the reader's block cache; see
 * archive_block.c. */
zn_result zn_block_prefix(struct zn_reader *r, uint64_t b, const struct zn_blockinfo *bi,
                          uint64_t need, bool digest_first, const uint8_t **data);

#endif
