/* SPDX-License-Identifier: MIT */
/* archive_internal.h - structures shared by the archive writer, index, reader and extractor. */
#ifndef ZN_ARCHIVE_INTERNAL_H
#define ZN_ARCHIVE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>

#include "archive_format.h"
#include "common/common.h"

/* Checksum comparisons go through this. Fuzzing builds accept any checksum so that mutated inputs
 * reach the parsers behind them; such a build must never be used on real data. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define ZN_SUM_OK(cond) ((void)(cond), 1)
#else
#define ZN_SUM_OK(cond) (cond)
#endif

/* One row of the block table. */
struct zn_blockinfo {
	uint64_t offset, csize, usize;
	uint64_t xxh3;  /* of the uncompressed bytes */
	uint64_t cxxh3; /* of the bytes as stored in the archive (equal to xxh3 when stored) */
	uint8_t codec;
};

/* One row of the entry table as the writer hands it to the index builder. */
struct zn_index_row {
	const char *path, *link, *uname, *gname;
	uint32_t path_len, link_len;
	uint8_t type;
	uint32_t mode, uid, gid;
	int64_t mtime_ns;
	uint64_t size, first_block, block_offset;
	const uint8_t *sha;
	uint8_t pkg_type; /* enum zn_pkg_type; with packages, group, name and version ("" if none)
	                   */
	const char *pkg_group, *pkg_name, *pkg_version;
};

/* How the index's columns are stored: as the writer chooses (paged lookup columns, the others
 * one frame, each only when that saves 10%), or, for tests, every column raw or one frame. */
enum { ZN_IX_CHOSEN = 0, ZN_IX_RAW = 1, ZN_IX_WHOLE = 2 };

struct zn_index_input {
	const struct zn_index_row *rows; /* or NULL, and each row comes from get_row */
	uint64_t nrows;
	const struct zn_blockinfo *blocks;
	uint64_t nblocks;
	uint64_t chunk_size, content_bytes;
	int level, digest;
	void (*get_row)(const void *ctx, uint64_t i, struct zn_index_row *row);
	const void *row_ctx;
	uint8_t layout;           /* a ZN_IX_* above */
	uint64_t digest_min_size; /* files smaller than this: an all-zero sha256 row */
	uint8_t filters;          /* 1: columns may be filtered (version 2) */
	uint8_t packages;         /* 1: the package columns (rows' pkg_*) */
	const char *repo;         /* the repository name (column REPO), or NULL: none */
};

/* Where the index goes, piece by piece: begin() once with its total size, then put() with
 * consecutive pieces; either returning non-zero stops it with ZN_ERR_IO. */
struct zn_index_sink {
	int (*begin)(void *ctx, size_t total);
	int (*put)(void *ctx, const void *p, size_t n);
	void *ctx;
};

/* Serialise the index (header, column directory, columns) into sink; each column is freed once
 * given, so the index is never held twice. */
zn_result zn_index_emit(const struct zn_index_input *in, const struct zn_index_sink *sink);

/* The same into a malloc'd buffer. */
zn_result zn_index_build(const struct zn_index_input *in, uint8_t **out, size_t *out_len);

/* A column of an opened index. Raw columns point into the mapped archive; compressed ones are
 * decompressed on first use (once, under the reader's lock) into `heap`: a whole column at once,
 * a paged one page by page as rows are asked for, each page in its place. */
struct zn_column {
	/* Set by zn_reader_open (parse), read-only after. */
	const uint8_t *stored;
	uint64_t stored_size, raw_size;
	uint8_t codec, present, page_log;
	uint8_t filter; /* ZN_FILTER_*, undone on each page or column decoded */
	/* Written under the reader's lock (zn_col, decode_page) by whichever thread first needs
	 * the column, published by a release store; read without the lock by any thread. */
	_Atomic(uint8_t *) heap;
	_Atomic int state; /* 0 not loaded, 1 ready, -1 invalid (as a whole) */
	/* Paged columns: a bit per page decoded, then a bit per page found damaged; set under the
	 * reader's lock, a page's bit released after its bytes are in `heap`. */
	_Atomic(_Atomic uint64_t *) pages;
};

/* An open archive. zn_reader_entry and zn_reader_find may be called from several threads at
 * once (extract's and verify's workers do); zn_reader_read_entry from one at a time. */
struct zn_reader {
	/* Set by zn_reader_open (parse), read-only after. */
	const uint8_t *map;
	uint64_t map_size;
	int mapped; /* 1: munmap on close */
	uint64_t nentries, nblocks, index_offset, index_size, chunk_size, content_bytes;
	int level, digest;
	/* Data blocks are decoded by our own zstd decoder rather than libzstd's: ZN_ZSTD_DECODER=
	 * znippy in the environment when the archive is opened (docs/BENCHMARKS.md has the A/B
	 * that keeps libzstd the default). */
	bool own_zstd;
	struct zn_column cols[ZN_COL_MAX_ID + 1]; /* the fields marked so in zn_column */
	const uint8_t *ix;                        /* the index */
	const uint8_t *pagesums;                  /* XXH3 of each ZN_IX_PAGE page of the index */
	/* Bit per index page: checked, and checked and damaged (not hashed again); set by any
	 * thread (a relaxed atomic or: pages never change, a race only checks one twice). */
	_Atomic uint64_t *ix_ok;
	_Atomic uint64_t *ix_bad;
	pthread_mutex_t mu; /* guards decoding index columns and pages (zn_col, pages_ready) */
	void *ixdctx;       /* decoder of index pages, made and used under mu */
	/* zn_reader_read_entry's blocks (archive_block.h), made on its first use; used by its one
	 * caller at a time. */
	struct zn_block_cache *blocks;
	/* Written once by whichever thread gets there first, the same by all (release store),
	 * read by all. */
	_Atomic int offsets_state; /* 0 not scanned, 1 in order, -1 not (see offsets_scan) */
	/* Prefix sums over the blocks for the stored size of entries spanning many of them, made
	 * on first need by whichever thread gets there (see block_sums); freed on close. */
	_Atomic(struct zn_block_sums *) sums;
	atomic_uint_fast64_t blocks_loaded; /* counted by every block read; read by tests */
	char err[256];                      /* zn_reader_open's message; written by it alone */
	uint32_t version;                   /* the format version, 1 or 2; set by parse */
	uint64_t digest_min_size; /* version 2: files smaller than this have no stored digest */
};

/* Whether id is a column this reader knows; it ignores the others entirely (docs/FORMAT.md). */
int zn_col_known(uint32_t id);
/* Checks of a column that need no decoding: sizes that fit the row count, codec allowed. */
zn_result zn_col_check_shape(struct zn_reader *r, int id);

/* Check the index pages covering [off, off + len) (relative to the index) against their page
 * checksums, once each; returns 0 if one is damaged or the range is out of bounds. */
int zn_ix_ensure(struct zn_reader *r, uint64_t off, uint64_t len);

/* Row i of a fixed-width column (offsets columns have entry_count + 1 rows), its pages checked or
 * its column decoded; NULL if absent, out of range or damaged. */
const uint8_t *zn_row(struct zn_reader *r, int id, uint64_t i);
/* Row i (< nentries) as zn_reader_entry gives it, less the work a reader of every row does not
 * need: the digest is left in the index (*sha points at it, or NULL) and stored_size is 0. With
 * lost non-NULL, as zn_reader_entry_lost. */
zn_result zn_entry_fields(struct zn_reader *r, uint64_t i, struct zn_entry *e, const uint8_t **sha,
                          unsigned *lost);
/* Row i's path alone, for naming an entry whose other fields cannot be read. */
zn_result zn_entry_path(struct zn_reader *r, uint64_t i, const char **path, size_t *len);
/* Row i's string of the offsets column off_id (and the bytes column after it). */
zn_result zn_entry_str(struct zn_reader *r, int off_id, uint64_t i, const char **s, size_t *len);

/* Bytes [a, b) of a string-bytes column (checked or decoded); NULL if damaged. */
const uint8_t *zn_bytes(struct zn_reader *r, int id, uint64_t a, uint64_t b);

/* A validated column's data (decompressing it if needed), or NULL if absent/invalid. */
const uint8_t *zn_col(struct zn_reader *r, int id);
/* Whether the path fence, if present, holds the paths of rows 0, ZN_FENCE_STEP, ... exactly (rows
 * whose path cannot be read are passed over): ZN_OK, or an error with *bad_row the first row whose
 * fence entry disagrees or cannot be read. */
zn_result zn_fence_check(struct zn_reader *r, uint64_t *bad_row);

/* Write all n bytes to fd (retrying short writes and EINTR); ZN_ERR_IO otherwise. */
zn_result zn_write_all(int fd, const void *p, uint64_t n);

#endif
