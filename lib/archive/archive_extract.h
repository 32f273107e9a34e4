/* SPDX-License-Identifier: MIT */
/* archive_extract.h - what extraction and verification share: the job, its entries, the plan.
 *
 * A job reads every block the selected files need once, on a pool of workers: zn_extract writes
 * the files (archive_extract.c), zn_verify hashes them (archive_verify.c). The entries are read
 * from the index once, in parallel, into a small record each (archive_job.c); the plan
 * (archive_plan.c) maps each block to the pieces of files it holds. What is made on disk goes
 * through fs_beneath.h.
 */
#ifndef ZN_ARCHIVE_EXTRACT_H
#define ZN_ARCHIVE_EXTRACT_H

#include <pthread.h>

#include "archive_block.h"
#include "common/pool.h"
#include "common/sha256.h"
#include "fs_beneath.h"

/* What became of an entry. ST_KEPT: a directory that existed, kept with its own mode and owner
 * (keep_dirs, or its mode lost to index damage: zn_fs_mkdir). */
enum { ST_OK = 0, ST_DAMAGED = 1, ST_FAILED = 2, ST_SKIPPED = 3, ST_KEPT = 4 };

/* Flags of a job entry. */
enum {
	JE_PLANNED = 1,    /* a file whose bytes are in the plan (its extent is sound) */
	JE_BAD_TARGET = 2, /* a symlink whose target is empty or holds a NUL byte */
};

/* One row as the job keeps it from start to end: what every phase needs to find, order and name
 * it (24 bytes; a million entries cost 24 MB). The rest of the row is read from the index where
 * it is needed (job_read_row): the reader has it decoded already, and keeping a copy of every
 * field cost 96 bytes a row. Written by the caller's thread before the workers start, read by
 * all; `status` is also written by the workers (job_set_status and friends, atomic byte
 * stores). */
struct job_entry {
	const char *path; /* as extracted (after strip_components); NULL: unreadable or refused */
	uint32_t path_len;
	uint32_t strip; /* bytes of the stored path before `path` */
	uint8_t type;   /* ZN_TYPE_* */
	uint8_t lost;   /* ZN_LOST_*: fields of the row that could not be read */
	uint8_t status; /* ST_* */
	uint8_t flags;  /* JE_* */
};

/* A row read whole (job_read_row), for the moment it is used. Strings point into the reader's
 * memory (path: the job's own copy). */
struct job_row {
	struct zn_meta meta;
	const char *path, *link;
	uint32_t path_len, link_len;
	const uint8_t *sha256; /* 32 bytes; NULL when the archive has none or the index lost it */
	uint64_t size, block_offset;
	uint32_t first_block;
};

/* A piece of a file in a block: bytes [boff, boff + len) of the block. `owner` is the entry, for
 * a file held in one block, or PIECE_SPAN | its span (plan_span) for a file spanning blocks. */
struct plan_piece {
	uint64_t owner;
	uint32_t boff, len;
};
#define PIECE_SPAN (UINT64_C(1) << 63)

/* A file whose bytes span blocks, or a copy of one: a file with the very same extent (identical
 * large files stored once), written from the same decoded bytes. Only a primary has pieces in the
 * plan; each piece written to it is written to its copies too. */
struct plan_span {
	/* Set by the plan; read by the workers. */
	uint64_t entry;
	uint64_t size;
	uint64_t first_block, last_block;
	uint64_t start;     /* its first byte, in the blocks' bytes end to end */
	uint64_t next_copy; /* the next copy's span + 1; 0: none */
	uint64_t primary;   /* a copy's primary span + 1; 0: a primary */
	/* Written by the workers: out under the job's stripe lock for this span (out.fd -1 not
	 * yet open, -2 could not be made); left counts the pieces not yet written (the writer of
	 * the last one finishes the file); bytes_bad (atomic byte) a block of the primary failed
	 * to load. */
	struct zn_outfile out;
	atomic_uint_fast64_t left;
	uint8_t bytes_bad;
};

/* The plan: for each block, the pieces of files it holds, in offset order. Built on the caller's
 * thread before the workers start; read-only for them but for the spans' runtime fields. */
struct plan {
	uint64_t nblocks;
	uint64_t *cum;    /* bytes before block b, nblocks + 1 rows */
	uint64_t *bstart; /* pieces of block b: pieces[bstart[b] .. bstart[b + 1]) */
	struct plan_piece *pieces;
	uint64_t *work; /* blocks that hold pieces, in order: the workers' queue */
	uint64_t nwork;
	/* Per block: its turn among the blocks holding pieces of spanning files, whose pieces are
	 * hashed in order (a file's SHA-256 is one chain); -1: none. */
	int64_t *span_turn;
	struct plan_span *spans;
	uint64_t nspans, spans_cap;
};

/* Columns the phases read again after job_init read every row once (job_read_meta, the plan,
 * hashing): whole, as pointers to row 0, where every row was read (no selection: their pages are
 * decoded already) and the column loads whole; else NULL, and rows are read one by one
 * (zn_row). A field is then one load instead of a lookup (a tenth of extract's instructions for
 * many small files). */
struct job_cols {
	const uint8_t *mode, *uid, *gid, *mtime, *size, *first_block, *block_offset, *sha256;
	const uint8_t *uname_off, *uname_bytes, *gname_off, *gname_bytes;
};

/* An extraction or a verification. Labels say who writes a field and who reads it. */
struct job {
	/* Set by the caller's thread before any worker runs; read by all. */
	struct zn_reader *r;
	const struct zn_extract_options *opt; /* NULL for verify */
	int verify;                           /* hash instead of write */
	int hashing;                          /* check SHA-256 (verify, or check_digest) */
	int sparse;                           /* leave zero runs as holes (write_at) */
	unsigned strip; /* leading path components left off (strip_components) */
	int skip_old;   /* existing names are passed over (skip_existing, and not overwrite) */
	int keep_dirs;  /* existing directories keep their mode (skip_old or no_overwrite_dir) */
	zn_problem_fn problem;
	zn_progress_fn progress;
	zn_extracted_fn extracted; /* extract only */
	void *ctx;
	struct zn_pool *pool;    /* the workers; its first error is the job's (job_fail) */
	struct zn_target target; /* extract: the destination (fs_beneath.h) */
	uint64_t n;
	struct job_entry *ents; /* every row; status written by workers too (see job_entry) */
	const uint8_t *select;  /* NULL: all */
	struct job_cols cols;
	char *paths; /* copies of the paths that lay in the mapped archive */
	struct plan plan;
	int lost_any; /* caller's thread: entries named for fields lost (job_report_lost) */

	/* Shared by the workers. */
	atomic_uint_fast64_t cursor; /* the next index into plan.work */
	pthread_mutex_t stripes[64]; /* stripe k % 64 guards plan.spans[k].fd */
	pthread_mutex_t report_mu;   /* the problem hook is called one at a time */
	/* Hashing spanning files in block order: under mu, the turn (a plan.span_turn value) of
	 * the block whose pieces may be hashed now; cv is broadcast when it moves on or the job is
	 * cancelled. span_ctx, span_entry and span_missing belong to the worker holding the turn.
	 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t span_turn;
	SHA256_CTX span_ctx;
	uint64_t span_entry;
	int span_missing; /* a piece of span_entry was not hashed (its block failed) */
	/* Counters, added to by the workers, read at the end. */
	atomic_uint_fast64_t done_bytes;
	/* Blocks that failed their checksums, and of them those whose files were judged one by
	 * one by their SHA-256 (salvage_block). */
	atomic_uint_fast64_t blocks_bad, blocks_salvaged;
	/* A write from the archive's mapping failed with EFAULT: the archive shrank. */
	atomic_int unreadable;
};

/* Status of entry i, read and written atomically (the workers share the array). */
static inline uint8_t job_status(const struct job *j, uint64_t i)
{
	return __atomic_load_n(&j->ents[i].status, __ATOMIC_RELAXED);
}
static inline void job_set_status(struct job *j, uint64_t i, uint8_t st)
{
	__atomic_store_n(&j->ents[i].status, st, __ATOMIC_RELAXED);
}
/* ST_OK -> st, and only from ST_OK: a file that was not overwritten (ST_FAILED) must never become
 * "damaged", which would have its pre-existing namesake removed. Returns whether this call made
 * the change (so that one thread names what went wrong). */
static inline int job_downgrade(struct job *j, uint64_t i, uint8_t st)
{
	uint8_t ok = ST_OK;
	return __atomic_compare_exchange_n(&j->ents[i].status, &ok, st, 0, __ATOMIC_RELAXED,
	                                   __ATOMIC_RELAXED);
}

/* archive_job.c: setting up, rows, reports. */

/* The job for reader r (entries picked by select, NULL all), with a pool of `threads` (0: one per
 * CPU): reads every row into ents (in parallel), names those that cannot be read in path order,
 * and refuses rows the writer never makes (refuse_unsound_rows). j is zeroed first; the caller
 * sets the fields above "ents" that matter to it before, job_free after. */
zn_result job_init(struct job *j, struct zn_reader *r, const uint8_t *select, unsigned threads);
void job_free(struct job *j);
/* Row i read whole; non-zero if it cannot be read (a damaged page of a column the row needs). */
int job_read_row(struct job *j, uint64_t i, struct job_row *x);
/* Entry i's metadata alone (what is applied to what is made of it), as job_read_row gives it. */
int job_read_meta(struct job *j, uint64_t i, struct zn_meta *m);
/* Entry i's stored digest, or NULL (none, or lost). */
const uint8_t *job_sha256(struct job *j, uint64_t i);
/* Row i of a fixed-width column, from the whole column when the job has it (job_cols). */
static inline const uint8_t *job_col_row(struct job *j, const uint8_t *whole, int id,
                                         unsigned width, uint64_t i)
{
	return whole ? whole + i * width : zn_row(j->r, id, i);
}
/* Name entry i through the problem hook (one call at a time, from any thread). */
void job_report(struct job *j, uint64_t i, zn_result r, const char *what);
void job_report_errno(struct job *j, uint64_t i, const char *what, int err);
/* Name an entry whose fields were lost, saying which; sets lost_any. */
void job_report_lost(struct job *j, uint64_t i);
/* Blocks that failed their checksums, named once in a line of their own; whether any did. */
int job_report_bad_blocks(struct job *j);
/* Record the first error (the pool's) and cancel the rest of the work. */
void job_fail(struct job *j, zn_result r);
/* Whether the job is cancelled; a stop asked by the caller (zn_extract_options.stop) becomes a
 * cancellation (ZN_ERR_CANCELED) here. */
int job_halted(struct job *j);
/* The first row after row i whose stored path is at or after "PATH/" (PATH: row i's). */
uint64_t job_below_start(const struct job *j, uint64_t i);

/* archive_plan.c */

/* Build j->plan from the entries still ST_OK: files whose extent leaves the blocks are named and
 * damaged; overlapping extents are ZN_ERR_CORRUPT (named once). */
zn_result plan_build(struct job *j);
void plan_free(struct plan *p);
/* The entry owning a piece, and its span or NULL. */
static inline struct plan_span *piece_span(const struct plan *p, const struct plan_piece *g)
{
	return g->owner & PIECE_SPAN ? &p->spans[g->owner & ~PIECE_SPAN] : NULL;
}
static inline uint64_t piece_entry(const struct plan *p, const struct plan_piece *g)
{
	return g->owner & PIECE_SPAN ? p->spans[g->owner & ~PIECE_SPAN].entry : g->owner;
}

/* archive_extract.c: the workers, shared by extract and verify. */

/* Run the workers over the plan, on the job's pool, until every block is done or the job is
 * cancelled; then settle the copies of spanning files (settle_copies). */
void job_run_workers(struct job *j);

#endif
