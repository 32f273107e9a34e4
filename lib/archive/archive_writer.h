/* SPDX-License-Identifier: MIT */
/* archive_writer.h - the archive writer's state and the functions its modules share. */
#ifndef ZN_ARCHIVE_WRITER_H
#define ZN_ARCHIVE_WRITER_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#ifdef ZN_HAVE_URING
#include <liburing.h>
#endif

#include "archive_format.h"
#include "archive_internal.h"
#include "common/big_alloc.h"
#include "common/common.h"
#include "common/pool.h"
#include "common/sized.h"
#include "common/sha256.h"
#include "common/xxh3.h"
#include "pkg/pkg_internal.h"

/* A slot's states. FREE -> FILLING (the producer) -> QUEUED (its compression job and, for pieces
 * of multi-block files, the span job) -> DONE (the output job) -> FREE. A chunk the output job
 * reads from the file itself (slot.rfd) goes from FILLING to DONE at once, and from the output
 * job to the span job: WRITTEN until it is hashed. */
enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_QUEUED, SLOT_DONE, SLOT_WRITTEN };

enum data_class { CLASS_COMPRESS = 0, CLASS_STORE = 1 };

/* A piece of one file in a block. */
struct seg {
	uint64_t entry; /* index into the entry table */
	uint64_t off;   /* offset in the block */
	uint64_t len;
	uint8_t first;    /* first piece of the file */
	uint8_t last;     /* last piece: the digest is final after it */
	uint8_t pkg_kind; /* a package file's kind (zn_pkg_file_kind), 0 for any other */
	uint8_t sha[32]; /* set by the compression job (whole files) or the span job (last piece) */
	/* Package files only, set by the producer: the entry's path and size. */
	const char *path;
	uint32_t path_len;
	uint64_t fsize;
	char *pkg; /* the coordinates found (wr_pkg_pack), set on the last piece by the compression
	              job (a whole file) or the output job (a file of several blocks); harvest
	              moves it to the entry */
};

/* One block in the making (see archive_pipeline.c). */
struct slot {
	struct zn_writer *writer; /* set at open */
	/* Set by the producer while FILLING; read-only for the jobs once QUEUED. */
	uint8_t *in;
	uint64_t usize;
	int klass; /* enum data_class */
	uint64_t seq;
	int64_t span_seq; /* -1: holds no piece of a multi-block file */
	struct seg *segs;
	size_t nsegs, segs_cap;
	/* A chunk of a large file stored as it is: the output job reads it from rfd at roff into
	 * `in` a piece at a time and writes each piece while it is in the cache, as cp does, then
	 * the span job hashes `in`. Read by the producer, the data crossed between cores three
	 * times (read, hashed, written) and made 500 MB of random data take 1.7x as long as cp;
	 * read by the output job, the only crossing is the hash's. rfd is the producer's (a dup()
	 * of the file's descriptor, closed by harvest), -1 for a block filled by the producer. */
	int rfd;
	uint8_t sampled; /* the producer's samples said to compress it (defer_read) */
	uint8_t rlast;   /* the file's last chunk the output job reads: harvest checks the file
	                    unchanged since rmtim (set by the producer once it knows) */
	struct timespec rmtim;
	uint64_t roff;
	int rerr; /* set by the output job: 0, an errno value of the read, or -1: the file ended */
	/* Set by the compression job; read by the output job once DONE. */
	uint8_t *out;
	uint64_t csize;
	int codec;
	uint64_t xxh3, cxxh3;
	/* Guarded by pipe.mu. */
	int state;
	uint8_t worked, hashed; /* DONE once both: compressed (or not), its span pieces hashed */
	/* Producer only: counts fills, so that an entry placed here knows whether its bytes are
	 * still in `in` (see is_duplicate). */
	uint64_t gen;
	size_t nsegs_checked; /* segs before this one are final (duplicates taken out) */
};

/* An entry: what its row in the index will hold, and what finish needs to make the row (136
 * bytes; a million files take 136 MB of these). What only packing needs is in struct wpack. */
struct went {
	char *path;
	char *link;
	uint32_t path_len, link_len;
	uint8_t type;
	uint8_t dropped; /* left out: 1, or DROPPED_REMOVED */
	uint8_t has_digest;
	uint8_t shrunk;   /* ended early while read: said so once (store_shrunk, emit_content) */
	uint8_t walked;   /* a directory whose contents were walked (walked_before) */
	uint8_t pkg_kind; /* zn_pkg_file_kind of a regular file's path, unless no_packages */
	uint32_t mode, uid, gid;
	uint32_t uname, gname; /* ids in the name table */
	uint32_t first_block;  /* a u32 in the index too (finish refuses more blocks) */
	uint32_t block_offset; /* below the chunk size, 256 MiB at most */
	int64_t mtime_ns;
	uint64_t size;
	int64_t link_entry; /* hardlinks found on disk: the entry holding the content, else -1 */
	int64_t dup_of;     /* a file identical to this earlier one, stored once; else -1 */
	uint8_t sha[32];
	char *pkg; /* its package coordinates (wr_pkg_pack), or NULL */
};

/* Which directory a walk went through (walked_before). */
struct dev_ino {
	uint64_t dev, ino;
};

/* An entry's packing state, beside it (writer.packs), freed before the index is made. */
struct wpack {
	union {
		struct {
			uint64_t ckey; /* XXH3-64 of a small file's content, or of a large one's
			                  ends */
			uint64_t gen;  /* the fill of slots[slot] that holds its bytes (its last
			                  chunk's) */
		};
		struct dev_ino dir; /* a directory's, once walked (walked_before) */
	};
	uint32_t slot;
	uint32_t ident; /* file_ident of where it came from, for paths met twice */
};

/* A run of the entries' path and link strings, one after another, each with its NUL. */
struct strchunk {
	struct strchunk *next;
	size_t used, cap;
	char data[];
};

struct name_cache {
	uint32_t id_of_key[64];
	uint32_t key[64];
	int used[64];
};

struct inode_rec {
	dev_t dev;
	ino_t ino;
	uint64_t entry;
};

/* A small or empty file found by the walk, read later in a batch (see read_batch). */
struct pending {
	uint64_t entry;
	int dirfd;            /* its directory's: the batch's copy (pend_dir) */
	size_t name_off;      /* its name in pend_names */
	const char *name;     /* there, once the batch is read */
	uint8_t *room;        /* where its bytes go in the block being packed */
	uint64_t size;        /* as the walk saw it: the bytes to read */
	struct timespec mtim; /* as the walk saw it, to tell a change during the read */
};

struct zn_writer;

typedef void crew_fn(struct zn_writer *w, int k); /* a crew batch's work on its item k */

/* What reading a pending file found; the producer acts on it (account). */
struct read_res {
	int open_err; /* errno value of the open, else 0 */
	int err;      /* 0, an errno value of the read, or -1: it ended after `got` bytes */
	int stat_ok;  /* size and mtim are the file's after the read */
	uint64_t got;
	uint64_t size;
	struct timespec mtim;
};

#define BATCH 256

/* With one thread, nobody shares the reads and smaller batches are faster: 200,000 files of 40
 * bytes took 4% longer in batches of 256 than of 64 (io_uring, docs/BENCHMARKS.md). */
#define BATCH_ALONE 64

#define PEND_DIRS 64 /* directories a batch holds open at most (pend_dup) */

#define STAT_RUN 256 /* names a crew batch states ahead at most (stat_ahead) */

/* A compression context of the pool's jobs: taken by a compression job from pipe.free_ctx
 * for its run, so that there are never more than threads of them. */
struct wr_cctx {
	ZSTD_CCtx *cctx;
	struct pkg_work pkg; /* package detection in whole files */
	uint8_t *tmp;        /* the compressed samples */
	size_t tmp_cap;
};

/* The block pipeline (archive_pipeline.c). */
struct wr_pipe {
	/* Set at open, then read-only. */
	struct zn_pool *pool;
	struct slot *slots;
	unsigned nslots;
	struct wr_cctx *cctx; /* one per thread of the pool */
	unsigned ncctx;
	/* The producer's. */
	uint64_t fills;         /* slot fills so far (slot.gen) */
	struct slot *pack[2];   /* the open block of each packer (enum data_class) */
	ZSTD_CCtx *sample_cctx; /* the producer's samples of large files' chunks (defer_read) */
	uint8_t *sample_buf;    /* 3 samples, then the compressed sample */
	/* Guarded by mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;     /* a slot freed, a slot's digests final, or an error */
	uint64_t next_seq;     /* the next block's sequence number (the producer's) */
	int64_t next_span_seq; /* the next span number (the producer's) */
	uint64_t write_seq;    /* the block the output job writes next */
	int64_t span_turn;     /* the span number the span job hashes next */
	int writing, hashing;  /* an output job, a span job is queued or running */
	unsigned waiting;      /* compression jobs queued and not started (crew_wanted) */
	unsigned *free_ctx;    /* stack of the indexes of the cctx not in use */
	unsigned nfree_ctx;
	zn_result err;     /* the first error */
	atomic_int cancel; /* set with err; read anywhere */
	/* The output job's (one at a time: writing). */
	uint64_t file_off, written_content, stored_blocks;
	struct zn_blockinfo *blocks;
	size_t blocks_cap;
	int out_errno;   /* the first failed write of the archive */
	uint64_t eio_at; /* ZN_TEST_HOOKS: its reads of files fail from this offset on */
	/* A package file of several blocks, as the output job passes its pieces (archive_pkg.c). */
	struct pkg_work pkg_work;
	uint8_t *pkg_head, *pkg_tail; /* PKG_HEAD_MAX, PKG_TAIL_MAX bytes, made on first use */
	uint64_t pkg_pos;             /* bytes of the file passed so far */
	/* The span job's (one at a time: hashing). */
	SHA256_CTX span_ctx;
	/* CPU time per stage (zn_write_stats): jobs add theirs; the caller's own (read) is its
	 * time inside the writer's calls less the jobs it ran meanwhile (job_cpu, per thread). */
	atomic_uint_fast64_t cpu_read, cpu_compress, cpu_span, cpu_output, cpu_index;
	/* Content of files stored once for an earlier copy: counted as done by the progress hook,
	 * which would otherwise never reach the content's total. Added to by the producer. */
	atomic_uint_fast64_t shared_bytes;
};

/* The crew (archive_batch.c): jobs of the pool that share a batch of stats or reads with the
 * producer. The producer posts a batch (job, items up to `to`) and opens it; each crew job that
 * finds it open takes items through `next` until none is left; the producer takes items too,
 * then closes the batch and waits for the jobs inside it (`busy`) to leave. A job that starts
 * after the close finds the batch closed and returns at once. */
struct wr_crew {
	pthread_mutex_t mu;
	pthread_cond_t idle; /* to the producer: busy fell to 0 */
	crew_fn *job;        /* the batch: set by the producer while closed, read under mu */
	int to;
	int open;
	unsigned busy;   /* crew jobs inside the batch (guarded by mu) */
	unsigned queued; /* crew jobs added and not started (guarded by mu) */
	atomic_int next; /* the next item to take */
	/* A run of a directory's names stated ahead (stat_ahead): set by the producer before the
	 * batch, each item written by the one thread that took it. */
	char **run_names;
	struct stat run_st[STAT_RUN];
	int run_err[STAT_RUN];
	int run_dirfd;
};

/* The batches of small files (archive_batch.c), the producer's but for the crew's reads. */
struct wr_batch {
	int open;             /* wr_batch_open ran: wr_batch_close has something to undo */
	struct pending *pend; /* small files not read yet, in the order found: pend_store[0 or 1] */
	int npend;
	char *pend_names; /* the pending files' names, each with its NUL */
	size_t pend_names_len, pend_names_cap;
	int *pend_dirs;                /* the batch's own descriptors of its files' directories */
	int npend_dirs, pend_dirs_max; /* see fd_budget */
	int fd_short;  /* descriptors ran short: no batch flies (they would vary with timing) */
	int batch_max; /* files a batch holds: BATCH, or BATCH_ALONE for one thread */
	int flushing;  /* flush_pending is running */
	int pend_src, pend_fd; /* the walk's descriptor of the directory last given a pending file,
	                          and the one its files are read through; pend_src -1 once the walk
	                          may have closed it or moved on */
	int pend_borrowed; /* pend_fd is the walk's own: read the batch before the walk leaves */
	struct read_res *res;
	/* The batch the crew reads while the walk goes on (take_off): its files
	 * fly_pend[fly_from.. fly_to), none if fly_to is 0; the other half of each store. */
	struct pending *fly_pend;
	struct read_res *fly_res;
	int *fly_dirs, nfly_dirs, fly_from, fly_to;
	char *fly_names;
	size_t fly_names_cap;
	struct pending pend_store[2][BATCH];
	struct read_res res_store[2][BATCH];
	int dirs_store[2][PEND_DIRS];
#ifdef ZN_HAVE_URING
	struct io_uring ring;
	int ring_ok;
	int ring_files; /* registered file slots: a batch goes through the ring in parts this big */
#endif
};

/* Identical files (archive_dedup.c), the producer's. */
struct wr_dedup {
	uint64_t *contents; /* open-addressing set of small files stored, by ckey (set_slot) */
	size_t contents_cap, ncontents;
	uint64_t *larges; /* files of at least chunk_size bytes, one per (size, ends key) */
	size_t larges_cap, nlarges;
	uint64_t *lsums; /* large files stored whose digest was settled, by digest (set_slot) */
	size_t lsums_cap, nlsums;
	uint64_t *lwait; /* large files stored whose digest is not settled yet */
	size_t lwait_cap, nlwait;
	uint8_t *aside; /* chunk_size bytes read outside the slots: a small file before it has a
	                   room (place_aside), a large file hashed before it is stored */
};

/* The walk (archive_walk.c), the producer's. */
struct wr_walk {
	int busy;      /* zn_writer_add_path() is running: a hook may not call it again */
	char *pathbuf; /* stored path being built during a walk */
	size_t pathbuf_cap;
	int levels;            /* directory levels a walk keeps open (struct level) */
	struct dev_ino *roots; /* directories walked as PATHs with no name of their own (".";
	                          walked_before) */
	size_t nroots, roots_cap;
};

struct zn_writer {
	/* Set at open (skip_* by zn_writer_skip_inode before adding), then read-only. */
	struct zn_create_options opt;
	int fd;
	dev_t out_dev; /* the archive itself, when it is a file: never archived into itself */
	ino_t out_ino;
	dev_t skip_dev; /* zn_writer_skip_inode(): e.g. the file the archive will replace */
	ino_t skip_ino;
	struct zn_hooks hook; /* problem, filter, progress (by the output job) and meta */
	char *repo;           /* opt.repo's copy, which opt.repo then points at, or NULL */

	/* The entry table (archive_entries.c): the producer's. */
	struct went *ents;
	struct wpack *packs; /* packs[i] beside ents[i], packs_cap of them */
	size_t nents, ents_cap, packs_cap;
	struct strchunk *strs; /* the entries' path and link strings (keep_str) */
	char **names;          /* user and group names; id 0 is "" */
	uint32_t nnames, names_cap;
	struct name_cache ucache, gcache;
	struct inode_rec *inodes; /* open-addressing table of hardlinked inodes */
	size_t inodes_cap, ninodes;
	uint64_t *paths; /* open-addressing set of the stored paths (slots: set_slot), 0 empty */
	size_t paths_cap;
	zn_result input_err; /* an input left out: finish's result (the producer's) */
	int finished;

	struct wr_walk walk;
	struct wr_batch batch;
	struct wr_crew crew;
	struct wr_dedup dup;
	struct wr_pipe pipe;
	struct zn_write_stats stats; /* finish's */
};

/* ------------------------------------------------------------------------------------------------
 * Workers and the writer thread
 * ---------------------------------------------------------------------------------------------- */

/* A block not worth compressing (random data) should not crawl through the compressor: try three
 * 16 KiB samples at level 1 first and store the block if they do not shrink by 3%. Small blocks
 * are simply compressed. */
#define SAMPLE_PIECE ((uint64_t)16 << 10)

/* Where a file's bytes come from: a file, memory, or a caller's stream (read). */
struct source {
	int fd;               /* -1 for memory or a stream */
	struct timespec mtim; /* a file's, as the walk saw it */
	const uint8_t *mem;
	zn_read_fn read;
	void *rctx;
	uint64_t pos;
};

/* A file the walk found that is gone when looked at again: tar's warning and exit status 1 (the
 * tree changed under the walk), not an unreadable input. Such an entry is dropped as
 * DROPPED_REMOVED, so that a hardlink to it is named the same way. */
enum { DROPPED_REMOVED = 2 };

/* A slot of the writer's open-addressing sets (paths, contents, larges, lsums) holds an entry's
 * index + 1 in its low SET_IX_BITS bits and the top bits of the entry's key above them, so a
 * probe reads an entry only when those bits agree: in a set of a million entries, every occupied
 * slot passed was a cache miss or two (perf on a million files of 40 bytes: path_slot 1046
 * samples before, 635 after). */
#define SET_IX_BITS 40

#define SET_IX_MASK ((1ull << SET_IX_BITS) - 1)

/* A new entry for `path`, of type `type`, at *idx; or, when the path is already stored, no new
 * entry and *idx = NO_ENTRY: the first one added stays (its content is the only one read), and
 * a path given again is named unless both are directories, which merge. A first one already
 * left out (it could not be read) gives its place to the new one. */
#define NO_ENTRY UINT64_MAX

/* archive_pipeline.c */
int wr_sample_starts(uint64_t n, uint64_t starts[3]);
int wr_samples_say_store(ZSTD_CCtx *cctx, const uint8_t *const p[3], uint8_t *tmp, size_t tmp_cap);
void wr_set_error(struct zn_writer *w, zn_result r);
zn_result wr_first_error(struct zn_writer *w);
int wr_pread_upto(int fd, uint8_t *dst, uint64_t n, uint64_t off, uint64_t *got);
int wr_changed(const struct went *e, uint64_t size, const struct timespec *before, int64_t sec,
               int64_t nsec);
void wr_harvest(struct zn_writer *w, struct slot *s);

/* Package detection (archive_pkg.c). */
struct wr_pkg_fields {
	uint8_t type;      /* enum zn_pkg_type */
	uint8_t from_meta; /* 1: from the file's metadata, 0: from its path */
	const char *group, *name, *version;
};
void wr_pkg_unpack(const char *s, struct wr_pkg_fields *f);
void wr_pkg_whole(struct slot *s, struct pkg_work *pw);
void wr_pkg_pieces(struct zn_writer *w, struct slot *s);
void wr_pkg_finish(struct zn_writer *w);
void wr_wait_for(struct zn_writer *w, int (*done)(const struct wr_pipe *, const void *),
                 const void *ctx);
zn_result wr_acquire_slot(struct zn_writer *w, int klass, struct slot **out);
void wr_release_slot(struct zn_writer *w, struct slot *s);
void wr_queue_slot(struct zn_writer *w, struct slot *s);
int wr_jobs_waiting(struct zn_writer *w);
zn_result wr_add_seg(struct zn_writer *w, struct slot *s, uint64_t entry, uint64_t len, int first,
                     int last);
zn_result wr_pipe_open(struct zn_writer *w);
/* CPU time of a stage's work on this thread, less the work of other stages it ran inside
 * (a job the pool ran inline, or one the caller helped with): clock_start, then clock_stop
 * adds the difference to the stage. */
struct wr_clock {
	uint64_t start, nested;
};
struct wr_clock wr_clock_start(void);
void wr_clock_stop(struct wr_clock c, atomic_uint_fast64_t *stage);
void wr_pipe_drain(struct zn_writer *w);
void wr_pipe_drop_buffers(struct zn_writer *w);
void wr_pipe_close(struct zn_writer *w);

/* archive_pack.c */
int wr_source_read(struct source *src, uint8_t *dst, uint64_t n);
void wr_report_read_failure(struct zn_writer *w, struct went *e, int err, uint8_t *room);
void wr_store_shrunk(struct zn_writer *w, uint64_t idx, uint64_t got, uint8_t *room, int placed);
void wr_check_unchanged(struct zn_writer *w, const struct went *e, uint64_t size,
                        const struct timespec *before, int64_t sec, int64_t nsec);
void wr_report_removed(struct zn_writer *w, const char *path);
void wr_report_open_failure(struct zn_writer *w, struct went *e, int err, uint8_t *room);
zn_result wr_emit_content(struct zn_writer *w, uint64_t idx, struct source *src);
zn_result wr_place_small(struct zn_writer *w, uint64_t idx, struct slot **out, uint64_t *off,
                         int *queued_full);
void wr_judge(struct zn_writer *w, uint64_t idx, const uint8_t *p);
void wr_compact(struct zn_writer *w, struct slot *s);
zn_result wr_place_aside(struct zn_writer *w, uint64_t idx, const uint8_t *p);

/* archive_entries.c */
uint32_t wr_intern_name(struct zn_writer *w, const char *name);
uint64_t wr_set_slot(uint64_t key, uint64_t idx);
uint64_t wr_slot_entry(uint64_t v);
int wr_slot_may_be(uint64_t v, uint64_t key);
uint64_t *wr_path_slot(struct zn_writer *w, const char *path, size_t len, uint64_t *key);
int wr_left_out(const struct zn_writer *w, const struct went *e);
zn_result wr_new_entry(struct zn_writer *w, const char *path, size_t path_len, int type,
                       const struct stat *st, uint64_t *idx);
zn_result wr_set_link(struct zn_writer *w, struct went *e, const char *link, size_t len);
void wr_fill_stat(struct zn_writer *w, struct went *e, const struct stat *st);
int64_t wr_inode_lookup(struct zn_writer *w, const struct stat *st, uint64_t entry);

/* archive_dedup.c */
int wr_is_duplicate(struct zn_writer *w, uint64_t idx, const uint8_t *p);
uint8_t *wr_aside_buffer(struct zn_writer *w);
int wr_large_copy(struct zn_writer *w, uint64_t idx, const struct source *src);

/* archive_batch.c */
void wr_batch_open(struct zn_writer *w);
void wr_batch_close(struct zn_writer *w);
void wr_drop_pending(struct zn_writer *w);
zn_result wr_flush_pending(struct zn_writer *w);
int wr_give_back_fds(struct zn_writer *w, int err);
zn_result wr_pend_dir_moves(struct zn_writer *w);
zn_result wr_add_pending(struct zn_writer *w, uint64_t idx, int dirfd, const char *name,
                         const struct stat *st);
size_t wr_stat_ahead(struct zn_writer *w, int dirfd, char **names, size_t i, size_t n,
                     size_t *next);

/* archive_walk.c */
zn_result wr_add_path(struct zn_writer *w, const char *fs_path, const char *name);

/* archive_write.c */
int wr_grow(void **p, size_t *cap, size_t need, size_t elem);
void wr_report(struct zn_writer *w, const char *path, zn_result r, const char *what);
void wr_report_errno(struct zn_writer *w, const char *path, const char *action, int e);
int wr_class_of(const struct zn_writer *w, const struct went *e);

#endif
