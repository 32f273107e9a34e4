/* SPDX-License-Identifier: MIT */
/* archive_extract.h - what the extraction modules share: the job, its entries and its plan. */
#ifndef ZN_ARCHIVE_EXTRACT_H
#define ZN_ARCHIVE_EXTRACT_H

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "archive_block.h"
#include "common/sha256.h"

struct xseg {
	uint64_t entry, boff, len, foff;
	uint8_t first, last;
};

/* ST_KEPT: a directory that existed, kept with its own mode and owner (keep_dirs, or its mode
 * lost to index damage: mkdir_beneath). */
enum { ST_OK = 0, ST_DAMAGED = 1, ST_FAILED = 2, ST_SKIPPED = 3, ST_KEPT = 4 };

/* An entry as the extractor keeps it, one per row: its strings and digest point into the
 * reader's index (zn_entry copies the digest and has room for more; 96 bytes a row instead of
 * 160, for an archive of a million files). */
struct xent {
	const char *path, *link, *uname, *gname;
	const uint8_t *sha256; /* 32 bytes, when has_digest */
	int64_t mtime_ns;
	uint64_t size, block_offset;
	uint32_t path_len, link_len, mode, uid, gid, first_block;
	uint8_t type, uname_len, gname_len;
	uint8_t has_digest : 1;
	uint8_t lost : 5; /* ZN_LOST_*: fields of the row that could not be read (read_entry) */
	uint32_t strip;   /* bytes of the stored path before `path` (strip_components) */
};

struct xjob {
	struct zn_reader *r;
	const struct zn_extract_options *opt;
	int verify;     /* 1: hash instead of write */
	int sparse;     /* leave zero runs as holes (write_at) */
	unsigned strip; /* leading path components left off (strip_components) */
	int skip_old;   /* existing names are passed over (skip_existing, and not overwrite) */
	int keep_dirs;  /* existing directories keep their mode (skip_old or no_overwrite_dir) */
	int rootfd;
	zn_problem_fn problem;
	zn_progress_fn progress;
	void *ctx;

	uint64_t n;
	struct xent *ents; /* all entries (only selected ones are filled) */
	const uint8_t *select;
	uint8_t *status;  /* ST_* per entry; written by workers with atomic byte stores */
	int lost_any;     /* entries named for fields lost to index damage (report_lost) */
	uint8_t *created; /* 1 once this job created the file (only such files are removed), 2 + k
	                   * while it is written under its temporary name number k (temp_name) */
	unsigned seq;     /* this job's number in the process, for temporary names */
	uint64_t *pieces; /* pieces per file */
	/* Files spanning blocks with the very same extent (identical large files stored once):
	 * the first one met takes the pieces, and the others are written from the same decoded
	 * bytes. NULL when there are none. */
	uint64_t *copy_next;  /* per file: the next file of its extent + 1, 0 none */
	uint64_t *primary_of; /* per copy: the file whose pieces it takes + 1; 0 for others */
	uint8_t *bytes_bad;   /* per file holding pieces: a block of its failed to load */
	char *paths;          /* copies of the paths that lay in the mapped archive (own_paths) */

	uint64_t *bstart; /* segments of block b: segs[bstart[b] .. bstart[b+1]) */
	struct xseg *segs;
	uint64_t *work; /* blocks that hold selected pieces, in order */
	uint64_t nwork;
	int64_t *span_idx; /* verify: order of blocks that hold multi-block pieces; -1 none */
	atomic_uint_fast64_t cursor;

	/* Files spanning blocks: fd opened once under a striped lock, closed by the last piece. */
	int *fds;
	atomic_uint_fast64_t *left;
	pthread_mutex_t stripes[64];
	pthread_mutex_t report_mu; /* the problem hook is called one at a time */

	/* Verify's in-order hashing of multi-block files. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t span_turn;
	SHA256_CTX span_ctx;
	uint64_t span_entry;
	int span_missing; /* a piece of span_entry was not hashed (its block failed) */

	atomic_uint_fast64_t done_bytes;
	/* Blocks that failed their checksums, and of them those whose files were judged one by
	 * one by their SHA-256 (salvage_block). */
	atomic_uint_fast64_t blocks_bad, blocks_salvaged;
	atomic_int cancel;
	/* A write from the archive's mapping failed with EFAULT: the archive shrank. */
	atomic_int unreadable;
	zn_result err; /* first system error, under mu */
	int same_owner;
	int umask; /* -1 unknown */
	uint32_t
	        perm_mask; /* mode bits kept: all with same_permissions, else 0777 less the umask */
	uid_t euid;
	gid_t egid;
	/* Owner names looked up on this system (local_id), under names_mu: few in any archive. */
	int by_name;
	pthread_mutex_t names_mu;
	struct known_name {
		char name[256];
		uint8_t len, group, found;
		uint32_t id;
	} names[16];
	unsigned nnames, next_name;
	/* keep_dirs: existing directories of ours, closed to us, opened up while missing files
	 * are written in them, then given back their own mode (restore_dirs). Phase 1. */
	struct reopened {
		uint64_t i;
		uint32_t mode;
	} * reopened;
	size_t nreopened, reopened_cap;
};

/* A per-thread cache of the last parent directory opened. */
struct dircache {
	char *path;
	size_t len, cap;
	int fd;
};

/* Temporary names tried for one file before giving up (another file may have the name). */
#define TEMP_TRIES 8

/* A symlink to `target`, or else a hardlink to tbase in directory tfd. */
struct linkspec {
	const char *target;
	int tfd;
	const char *tbase;
};

/* archive_extract.c */
void xreport(struct xjob *j, const struct xent *e, zn_result r, const char *what);
void set_status(struct xjob *j, uint64_t i, uint8_t st);
uint8_t get_status(struct xjob *j, uint64_t i);
void settle_copies(struct xjob *j);
zn_result run_workers(struct xjob *j, unsigned threads);
zn_result job_init(struct xjob *j, struct zn_reader *r, const uint8_t *select, unsigned threads);
void job_free(struct xjob *j);
int report_bad_blocks(struct xjob *j);

/* fs_beneath.c */
void dircache_drop(struct dircache *c);
int parent_fd(struct xjob *j, struct dircache *c, const struct xent *e, char *base,
              size_t base_cap);
void temp_name(const struct xjob *j, uint64_t i, int k, char out[64]);
int create_file(struct xjob *j, int dfd, const char *base, uint32_t mode, uint64_t i, int *temp);
int place_link(struct xjob *j, const struct linkspec *l, int dfd, const char *base, uint64_t i);
int place_hardlink(struct xjob *j, uint64_t src, int dfd, const char *base, uint64_t i);
int read_umask(void);
void apply_meta_fd(struct xjob *j, int fd, const struct xent *e);
void apply_times_at(struct xjob *j, int dfd, const char *base, const struct xent *e);
void apply_meta_link(struct xjob *j, int dfd, const char *base, const struct xent *e);
void apply_meta_dir(struct xjob *j, int dfd, const char *base, const struct xent *e);
int chmod_dir(int dfd, const char *base, uint32_t mode);
int mkdir_beneath(struct xjob *j, struct dircache *dc, const struct xent *e);

/* archive_plan.c */
zn_result build_plan(struct xjob *j);

#endif
