/* SPDX-License-Identifier: MIT */
/* archive_write.c - the archive writer: walk, pack, compress and hash in parallel, write in order.
 *
 * The pipeline
 * ------------
 * Five kinds of threads share a fixed set of slots. A slot is one block in the making: an input
 * buffer of chunk_size bytes, an output buffer big enough for zstd's worst case, and the list of
 * file pieces ("segments") that the block holds.
 *
 *   producer (the thread calling zn_writer_add_*): walks the tree in byte order of names, decides
 *       where every file's bytes go and reads them straight into a slot's input buffer. Files
 *       smaller than chunk_size are packed together into "solid" blocks; larger files are cut into
 *       chunk_size blocks of their own. Two packers exist: one for data worth compressing and one
 *       for known-compressed types (jar, png, gz, ...), whose blocks are stored as they are. When a
 *       block is full the producer gives it the next sequence number and queues the slot id. A
 *       large file's chunk that is to be stored as it is (a known-compressed type, or samples
 *       that do not shrink) is not read by the producer: it goes straight to the writer (rfd).
 *   workers (N): take slot ids from the queue in order; compute XXH3-64 of the block, SHA-256 of
 *       each file wholly inside it, and compress it (or decide, from a cheap sample, to store it).
 *   hasher (1, with digests): hashes the files that span several blocks, piece by piece in block
 *       order: each such block carries a "span sequence" number, and the hasher feeds its one
 *       SHA-256 context from the queued block with the next number. A slot is done (for the
 *       writer) once its worker and, if it holds such pieces, the hasher are through with it.
 *   crew (threads - 1, started on a tree's first batch of small files): shares the producer's
 *       stats and reads of small files while the workers have nothing queued (see "The crew").
 *   writer (1): writes finished blocks in sequence order, each at a multiple of 64, from the
 *       output buffer, or straight from the input buffer when the block is stored (no copy),
 *       records the block table, then frees the slot. A chunk the producer left to it (rfd) it
 *       reads from the file itself, 128 KiB at a time, each piece written while in the cache, as
 *       cp does; the slot then goes to the hasher (WRITTEN) and is freed once hashed.
 *
 * Memory is bounded by the number of slots (about twice the workers, capped by memory_limit); the
 * producer blocks when no slot is free, which is the backpressure. Block boundaries depend only on
 * the order and sizes of the inputs, never on timing, so the archive is byte-identical whatever
 * the thread count. The first error wins: it is recorded under the lock, the cancel flag stops
 * the others, and every thread still runs to its exit so that nothing leaks.
 *
 * Deadlock freedom: the producer holds at most three slots while filling (two packers and one
 * chunk of a large file) and there are at least four, so at least one slot is always queued,
 * being worked on or waiting for the writer; every queued block has a sequence number below the
 * producer's next one, so the writer's next block is always queued or done. The producer also
 * waits for workers to finish queued slots (settle_digest, to compare a large file with one
 * stored before it): queued slots need nothing from the producer, so that wait ends too. Span
 * numbers are given in sequence order, so when the hasher waits for a chunk the writer reads,
 * every block before it is written or on its way, and the writer gets there.
 *
 * Outside the slots the producer uses one buffer of chunk_size bytes (`aside`) and the entries'
 * table, which grows with the number of files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/xxh3.h"
#include <zstd.h>
#ifdef ZN_HAVE_URING
#include <liburing.h>
#endif

#include "archive_format.h"
#include "archive_internal.h"
#include "common/big_alloc.h"
#include "common/common.h"
#include "common/cpu_features.h"

/* FREE -> FILLING (the producer) -> QUEUED (workers, hasher) -> DONE (the writer) -> FREE. A
 * block the writer reads itself (struct slot, rfd) goes from FILLING to DONE at once, and from
 * the writer to the hasher: WRITTEN until it is hashed. */
enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_QUEUED, SLOT_DONE, SLOT_WRITTEN };
enum data_class { CLASS_COMPRESS = 0, CLASS_STORE = 1 };

struct seg {
	uint64_t entry; /* index into the producer's entry array */
	uint64_t off;   /* offset in the block */
	uint64_t len;
	uint8_t first;   /* first piece of the file */
	uint8_t last;    /* last piece: the digest is final after it */
	uint8_t sha[32]; /* set by the worker (whole files) or the span hasher (last piece) */
};

struct slot {
	/* Set by the producer while FILLING; read-only for workers and the writer once QUEUED. */
	uint8_t *in;
	uint64_t usize;
	int klass;
	uint64_t seq;
	int64_t span_seq; /* -1: holds no piece of a multi-block file */
	struct seg *segs;
	size_t nsegs, segs_cap;
	/* A chunk of a large file stored as it is: the writer reads it from rfd at roff into `in`
	 * a piece at a time and writes each piece while it is in the cache, as cp does, then the
	 * hasher hashes `in`. Read by the producer, the data crossed between cores three times
	 * (read, hashed, written) and made 500 MB of random data take 1.7x as long as cp; read
	 * by the writer, the only crossing is the hasher's. rfd is the producer's (a dup() of the
	 * file's descriptor, closed by harvest), -1 for a block filled by the producer. */
	int rfd;
	uint8_t sampled; /* the producer's samples said to compress it (defer_read) */
	uint8_t rlast; /* the file's last chunk the writer reads: harvest checks the file unchanged
	                  since rmtim (set by the producer once it knows) */
	struct timespec rmtim;
	uint64_t roff;
	int rerr; /* set by the writer: 0, an errno value of the read, or -1: the file ended */
	/* Set by the worker; read by the writer once DONE. */
	uint8_t *out;
	uint64_t csize;
	int codec;
	uint64_t xxh3, cxxh3;
	/* Guarded by writer->mu. */
	int state;
	uint8_t worked, hashed; /* DONE once both: its worker is through, its span pieces hashed */
	/* Producer only: counts fills, so that an entry placed here knows whether its bytes are
	 * still in `in` (see is_duplicate). */
	uint64_t gen;
	size_t nsegs_checked; /* segs before this one are final (duplicates taken out) */
};

/* An entry: what its row in the index will hold, and what finish needs to make the row (120
 * bytes; a million files take 120 MB of these). What only packing needs is in struct wpack. */
struct went {
	char *path;
	char *link;
	uint32_t path_len, link_len;
	uint8_t type;
	uint8_t dropped; /* left out: 1, or DROPPED_REMOVED */
	uint8_t has_digest;
	uint8_t shrunk; /* ended early while read: said so once (store_shrunk, emit_content) */
	uint8_t walked; /* a directory whose contents were walked (walked_before) */
	uint32_t mode, uid, gid;
	uint32_t uname, gname; /* ids in the name table */
	uint32_t first_block;  /* a u32 in the index too (finish refuses more blocks) */
	uint32_t block_offset; /* below the chunk size, 256 MiB at most */
	int64_t mtime_ns;
	uint64_t size;
	int64_t link_entry; /* hardlinks found on disk: the entry holding the content, else -1 */
	int64_t dup_of;     /* a file identical to this earlier one, stored once; else -1 */
	uint8_t sha[32];
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
#define PEND_DIRS   64  /* directories a batch holds open at most (pend_dup) */
#define STAT_RUN    256 /* names a crew batch states ahead at most (stat_ahead) */

struct zn_writer {
	struct zn_create_options opt;
	int fd;
	dev_t out_dev; /* the archive itself, when it is a file: never archived into itself */
	ino_t out_ino;
	dev_t skip_dev; /* zn_writer_skip_inode(): e.g. the file the archive will replace */
	ino_t skip_ino;
	int out_errno; /* the first failed write of the archive (writer thread, then finish) */
	zn_problem_fn problem;
	zn_filter_fn filter;
	zn_progress_fn progress;
	void *hook_ctx;
	zn_meta_fn meta;
	void *meta_ctx;

	/* ---- owned by the producer ---- */
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
	uint64_t *contents; /* open-addressing set of small files stored, by ckey (set_slot) */
	size_t contents_cap, ncontents;
	uint64_t *larges; /* files of at least chunk_size bytes, one per (size, ends key) */
	size_t larges_cap, nlarges;
	uint64_t *lsums; /* large files stored whose digest was settled, by digest (set_slot) */
	size_t lsums_cap, nlsums;
	uint64_t *lwait; /* large files stored whose digest is not settled yet */
	size_t lwait_cap, nlwait;
	uint64_t fills; /* slot fills so far (slot.gen) */
	struct slot *pack[2];
	int64_t next_span_seq;
	zn_result input_err;
	int finished;
	int in_add_path;       /* zn_writer_add_path() is running: a hook may not call it again */
	char *pathbuf;         /* stored path being built during a walk */
	int walk_levels;       /* directory levels a walk keeps open (struct level) */
	struct dev_ino *roots; /* directories walked as PATHs with no name of their own (".";
	                          walked_before) */
	size_t nroots, roots_cap;
	size_t pathbuf_cap;
	struct pending *pend; /* small files not read yet, in the order found: pend_store[0 or 1] */
	ZSTD_CCtx *sample_cctx; /* the producer's samples of large files' chunks (defer_read) */
	uint8_t *sample_buf;    /* 3 samples, then the compressed sample */
	uint8_t *aside; /* chunk_size bytes read outside the slots: a small file before it has a
	                   room (place_aside), a large file hashed before it is stored */
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
	/* The crew (crew_run): threads that share batches of stats and reads with the producer.
	 * crew_mu guards the fields below up to crew_next, which hands out the items; a batch's
	 * items and results (pend[], res[], run_*) pass between the threads through crew_run. */
	pthread_t *crew;
	unsigned ncrew;
	int crew_tried, crew_open, crew_quit, crew_to;
	unsigned crew_busy;
	crew_fn *crew_job;
	/* A run of a directory's names stated ahead (stat_ahead). */
	char **run_names;
	struct stat run_st[STAT_RUN];
	int run_err[STAT_RUN];
	int run_dirfd;
	uint64_t crew_gen;
	atomic_int crew_next;
	pthread_mutex_t crew_mu;
	pthread_cond_t crew_go, crew_idle;
#ifdef ZN_HAVE_URING
	struct io_uring ring;
	int ring_ok;
	int ring_files; /* registered file slots: a batch goes through the ring in parts this big */
#endif

	/* ---- shared, guarded by mu ---- */
	pthread_mutex_t mu;
	pthread_cond_t cv_free, cv_work, cv_done, cv_span;
	struct slot *slots;
	unsigned nslots;
	unsigned *queue;
	unsigned qhead, qcount;
	uint64_t next_seq; /* written by the producer under mu */
	int producer_done;
	int64_t span_turn; /* the span_seq the hasher takes next */
	zn_result err;     /* first error */
	atomic_int cancel;
	SHA256_CTX span_ctx; /* the hasher's own */

	/* ---- owned by the writer thread until it is joined ---- */
	uint64_t write_seq, file_off, written_content;
	/* Content of files stored once for an earlier copy: counted as done by the progress hook,
	 * which would otherwise never reach the content's total. Added to by the producer. */
	atomic_uint_fast64_t shared_bytes;
	uint64_t eio_at; /* ZN_TEST_HOOKS: the writer's reads of files fail from this offset on */
	struct zn_blockinfo *blocks;
	size_t blocks_cap;
	uint64_t stored_blocks;

	pthread_t *workers;
	unsigned nworkers, workers_started;
	pthread_t writer_thread, hasher_thread;
	int writer_started, hasher_started;
	struct zn_write_stats stats;
};

/* ------------------------------------------------------------------------------------------------
 * Small helpers
 * ---------------------------------------------------------------------------------------------- */

static void set_error(struct zn_writer *w, zn_result r)
{
	pthread_mutex_lock(&w->mu);
	if (w->err == ZN_OK)
		w->err = r;
	atomic_store(&w->cancel, 1);
	pthread_cond_broadcast(&w->cv_free);
	pthread_cond_broadcast(&w->cv_work);
	pthread_cond_broadcast(&w->cv_done);
	pthread_cond_broadcast(&w->cv_span);
	pthread_mutex_unlock(&w->mu);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*p, ncap * elem);
	if (!np)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

static zn_result first_error(struct zn_writer *w)
{
	pthread_mutex_lock(&w->mu);
	zn_result r = w->err;
	pthread_mutex_unlock(&w->mu);
	return r;
}

static zn_result flush_pending(struct zn_writer *w);

/* Names a problem with an input. Problems are named in the order of the walk: the small files
 * waiting to be read, all found before this one, are read first, and theirs named. */
static void report(struct zn_writer *w, const char *path, zn_result r, const char *what)
{
	if (w->problem && (w->npend || w->fly_to) && !w->flushing && !atomic_load(&w->cancel)) {
		zn_result fr = flush_pending(w);
		if (fr != ZN_OK)
			set_error(w, fr);
	}
	if (w->problem)
		w->problem(w->hook_ctx, path, r, what);
}

static void report_errno(struct zn_writer *w, const char *path, const char *action, int e)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s: %s", action, strerror(e));
	report(w, path, ZN_ERR_IO, msg);
	w->input_err = ZN_ERR_IO;
}

/* Known-compressed file types: their content is stored as is (unless no_skip). The names are
 * grouped by length, so that each test is a memcmp of a constant length, which compiles to one or
 * two integer compares: a walk of one list with strcmp took 19% of the instructions of archiving
 * 100,000 files of 40 bytes (callgrind). */
static int is_precompressed(const char *path, size_t len)
{
	static const char e2[][2] = {"gz", "xz", "lz", "7z", "br", "zn"};
	static const char e3[][3] = {"jar", "zip", "war", "ear", "apk", "aar", "whl", "egg",
	                             "tgz", "bz2", "tbz", "txz", "lz4", "zst", "rar", "png",
	                             "jpg", "gif", "jxl", "mp3", "mp4", "m4a", "m4v", "mkv",
	                             "ogg", "mov", "avi", "deb", "rpm", "cab", "pdf", "odt",
	                             "ods", "odp", "orc", "npz", "gem", "dmg"};
	static const char e4[][4] = {"tbz2", "lzma", "zstd", "tzst", "jpeg", "webp", "heic",
	                             "avif", "webm", "opus", "flac", "sqfs", "woff", "docx",
	                             "xlsx", "pptx", "epub", "avro", "jmod", "pack"};
	static const char e5[][5] = {"nupkg", "crate", "woff2"};
	static const char e7[][7] = {"parquet"};
	static const char e8[][8] = {"squashfs"};
	size_t dot = len;
	while (dot > 0 && path[dot - 1] != '.' && path[dot - 1] != '/')
		dot--;
	if (dot == 0 || path[dot - 1] != '.')
		return 0;
	size_t elen = len - dot;
	if (elen == 0 || elen > 8)
		return 0;
	char ext[8];
	for (size_t i = 0; i < elen; i++) {
		char c = path[dot + i];
		ext[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
	}
#define FIND(list, n)                                                                              \
	for (size_t i = 0; i < ZN_ARRAY_LEN(list); i++)                                            \
		if (!memcmp(ext, list[i], n))                                                      \
			return 1;                                                                  \
	return 0
	switch (elen) {
	case 2:
		FIND(e2, 2);
	case 3:
		FIND(e3, 3);
	case 4:
		FIND(e4, 4);
	case 5:
		FIND(e5, 5);
	case 7:
		FIND(e7, 7);
	case 8:
		FIND(e8, 8);
	default:
		return 0;
	}
#undef FIND
}

/* Which packer (and so which block codec) a file's content goes to. */
static int class_of(const struct zn_writer *w, const struct went *e)
{
	return (!w->opt.no_skip && is_precompressed(e->path, e->path_len)) ? CLASS_STORE
	                                                                   : CLASS_COMPRESS;
}

/* ------------------------------------------------------------------------------------------------
 * Workers and the writer thread
 * ---------------------------------------------------------------------------------------------- */

/* A block not worth compressing (random data) should not crawl through the compressor: try three
 * 16 KiB samples at level 1 first and store the block if they do not shrink by 3%. Small blocks
 * are simply compressed. */
#define SAMPLE_PIECE ((uint64_t)16 << 10)

/* Where the three samples of a block of n bytes start; 0 if it is too small to be sampled. */
static int sample_starts(uint64_t n, uint64_t starts[3])
{
	if (n < 8 * SAMPLE_PIECE)
		return 0;
	starts[0] = 0;
	starts[1] = n / 2 - SAMPLE_PIECE / 2;
	starts[2] = n - SAMPLE_PIECE;
	return 1;
}

/* Whether the samples (SAMPLE_PIECE bytes at each of p[0..3)) do not shrink by 3%. The answer is
 * no as soon as the samples so far shrink enough that the rest could not undo it, even at their
 * largest (ZSTD_compressBound): for text, the first sample already says so, which saves two
 * thirds of the sampling (5% of zstd's instructions on the small-files corpus) and gives the same
 * answer as all three. */
static int samples_say_store(ZSTD_CCtx *cctx, const uint8_t *const p[3], uint8_t *tmp,
                             size_t tmp_cap)
{
	const size_t piece = SAMPLE_PIECE, most = ZSTD_compressBound(SAMPLE_PIECE);
	size_t total_out = 0;
	for (int i = 0; i < 3; i++) {
		size_t r = ZSTD_compressCCtx(cctx, tmp, tmp_cap, p[i], piece, 1);
		if (ZSTD_isError(r))
			return 0;
		total_out += r;
		if ((total_out + (2 - i) * most) * 100 <= 3 * piece * 97)
			return 0;
	}
	return total_out * 100 > 3 * piece * 97;
}

static int sample_says_store(ZSTD_CCtx *cctx, const uint8_t *in, uint64_t n, uint8_t *tmp,
                             size_t tmp_cap)
{
	uint64_t at[3];
	if (!sample_starts(n, at))
		return 0;
	const uint8_t *const p[3] = {in + at[0], in + at[1], in + at[2]};
	return samples_say_store(cctx, p, tmp, tmp_cap);
}

/* Slot s is through with one of its two jobs (worked or hashed, under mu): DONE after both. */
static void slot_through(struct zn_writer *w, struct slot *s)
{
	if (s->worked && s->hashed) {
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&w->cv_done);
	}
}

/* The hasher: the SHA-256 of a file cut into several blocks is one sequential chain through
 * them, in order. One thread of its own runs it, so that no worker waits for its turn on it
 * (with 2 workers on random data, taking turns left the chain idle between pieces: 0.40 s
 * for 477 MB, against 0.28 s of hashing). The workers meanwhile hash whole files in their
 * slots, check and compress; a slot goes to the writer once both are through with it. */
static void *hasher_main(void *arg)
{
	struct zn_writer *w = arg;
	for (;;) {
		struct slot *s = NULL;
		pthread_mutex_lock(&w->mu);
		while (!s && !atomic_load(&w->cancel)) {
			for (unsigned i = 0; i < w->nslots && !s; i++) {
				struct slot *t = &w->slots[i]; /* WRITTEN: read by the writer */
				if ((t->state == SLOT_QUEUED || t->state == SLOT_WRITTEN) &&
				    t->span_seq == w->span_turn)
					s = t;
			}
			if (s || (w->producer_done && w->span_turn == w->next_span_seq))
				break; /* every slot is queued, and all hashed */
			pthread_cond_wait(&w->cv_span, &w->mu);
		}
		pthread_mutex_unlock(&w->mu);
		if (!s || atomic_load(&w->cancel))
			return NULL;
		for (size_t i = 0; i < s->nsegs; i++) {
			struct seg *g = &s->segs[i];
			if (g->first && g->last && s->rfd < 0)
				continue; /* a whole file: its worker's */
			if (g->first)
				SHA256_Init(&w->span_ctx);
			SHA256_Update(&w->span_ctx, s->in + g->off, g->len);
			if (g->last)
				SHA256_Final(g->sha, &w->span_ctx);
		}
		pthread_mutex_lock(&w->mu);
		w->span_turn++;
		s->hashed = 1;
		if (s->state == SLOT_WRITTEN) {
			s->state = SLOT_FREE;
			pthread_cond_broadcast(&w->cv_free);
			pthread_cond_broadcast(&w->cv_done); /* settle_digest may wait for it */
		} else {
			slot_through(w, s);
		}
		pthread_mutex_unlock(&w->mu);
	}
}

static void process_slot(struct zn_writer *w, struct slot *s, ZSTD_CCtx *cctx, uint8_t *tmp,
                         size_t tmp_cap)
{
	int digest = w->opt.digest == ZN_DIGEST_SHA256;
	s->xxh3 = zn_xxh3(s->in, s->usize);
	if (digest) /* pieces of longer files: the hasher's */
		for (size_t i = 0; i < s->nsegs; i++) {
			struct seg *g = &s->segs[i];
			if (g->first && g->last)
				zn_sha256(s->in + g->off, g->len, g->sha);
		}

	s->codec = ZN_BLOCK_STORED;
	s->csize = s->usize;
	s->cxxh3 = s->xxh3;
	if (s->klass == CLASS_STORE || s->usize == 0)
		return;
	if (!s->sampled && sample_says_store(cctx, s->in, s->usize, tmp, tmp_cap))
		return;
	size_t cap = ZSTD_compressBound(w->opt.chunk_size);
	size_t r = ZSTD_compress2(cctx, s->out, cap, s->in, s->usize);
	if (ZSTD_isError(r)) {
		set_error(w, ZN_ERR_CODEC);
		return;
	}
	/* Keep the compressed form only if it saves at least 3%. */
	if ((uint64_t)r * 100 <= s->usize * 97) {
		s->codec = ZN_BLOCK_ZSTD;
		s->csize = r;
		s->cxxh3 = zn_xxh3(s->out, r);
	}
}

static void *worker_main(void *arg)
{
	struct zn_writer *w = arg;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	/* The level's search parameters, with a window as large as the block: a block is decoded
	 * into one buffer anyway, so the window costs the decoder nothing. On /usr/include, 4 MiB
	 * blocks with level 3's own 2 MiB window came to 1.075x the size of one `zstd -3` stream of
	 * the whole tar; with a 4 MiB window, 1.042x (8 MiB blocks: 0.97x, but random access then
	 * decodes twice as much). Storing identical files once gained most of what larger blocks
	 * did. The default is 1 MiB blocks: 0.947x there (2 MiB: 0.928x), and `cat` of the file
	 * that ends a block, which decodes all of it, takes 2.7-4.3 ms on a 2.45 GHz Zen 3 where
	 * 2 MiB blocks took 4.6-6.4 ms (libzstd decodes the small-files corpus at 0.6-1 GB/s),
	 * for 1.2% more bytes there (docs/BENCHMARKS.md). */
	if (cctx) {
		int wlog = 10;
		while (wlog < 28 && (1ull << wlog) < w->opt.chunk_size)
			wlog++;
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, w->opt.level);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, wlog);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
	}
	size_t tmp_cap = ZSTD_compressBound(16 << 10);
	uint8_t *tmp = malloc(tmp_cap);
	if (!cctx || !tmp)
		set_error(w, ZN_ERR_NOMEM);
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (w->qcount == 0 && !w->producer_done)
			pthread_cond_wait(&w->cv_work, &w->mu);
		if (w->qcount == 0) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		struct slot *s = &w->slots[w->queue[w->qhead]];
		w->qhead = (w->qhead + 1) % w->nslots;
		w->qcount--;
		pthread_mutex_unlock(&w->mu);

		if (!atomic_load(&w->cancel) && cctx && tmp)
			process_slot(w, s, cctx, tmp, tmp_cap);

		pthread_mutex_lock(&w->mu);
		s->worked = 1;
		slot_through(w, s);
		pthread_mutex_unlock(&w->mu);
	}
	ZSTD_freeCCtx(cctx);
	free(tmp);
	return NULL;
}

zn_result zn_write_all(int fd, const void *buf, uint64_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = write(fd, p, ZN_MIN(n, ZN_WRITE_PIECE));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = ENOSPC;
			return ZN_ERR_IO;
		}
		p += k;
		n -= (uint64_t)k;
	}
	return ZN_OK;
}

static void out_failed(struct zn_writer *w)
{
	if (!w->out_errno)
		w->out_errno = errno;
	set_error(w, ZN_ERR_IO);
}

/* Up to n bytes of the file at off, fewer only at its end. 0 or an errno value. */
static int pread_upto(int fd, uint8_t *dst, uint64_t n, uint64_t off, uint64_t *got)
{
	for (*got = 0; *got < n;) {
		ssize_t k = pread(fd, dst + *got, n - *got, (off_t)(off + *got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno;
		if (k == 0)
			break;
		*got += (uint64_t)k;
	}
	return 0;
}

/* A stored chunk the writer reads itself (slot.rfd): read, write, next piece. A read that fails
 * or ends early leaves zeros for the rest (the block's size is fixed), and harvest tells. */
static void copy_through(struct zn_writer *w, struct slot *s)
{
	for (uint64_t off = 0; off < s->usize;) {
		uint64_t n = ZN_MIN(ZN_WRITE_PIECE, s->usize - off), got = 0;
		if (!s->rerr && s->roff + off + n > w->eio_at)
			s->rerr = EIO; /* a test's (ZN_TEST_WRITER_EIO_AT) */
		if (!s->rerr) {
			s->rerr = pread_upto(s->rfd, s->in + off, n, s->roff + off, &got);
			if (!s->rerr && got < n)
				s->rerr = -1;
		}
		if (got < n)
			memset(s->in + off + got, 0, n - got);
		if (atomic_load(&w->cancel))
			return;
		if (zn_write_all(w->fd, s->in + off, n) != ZN_OK) {
			out_failed(w);
			return;
		}
		off += n;
	}
	s->xxh3 = s->cxxh3 = zn_xxh3(s->in, s->usize);
}

static void writer_emit(struct zn_writer *w, struct slot *s)
{
	/* Each block at a multiple of 64 in the archive. The kernel copies a write into the page
	 * cache with `rep movsb`, which on AMD Zen 3 took 1.6x as long for a destination 16 bytes
	 * past a multiple of 64 from a source at one (500 MB into tmpfs: 0.51 against 0.32 s): the
	 * 16-byte header put every stored block there. Extraction reads blocks at these offsets. */
	static const uint8_t zeros[ZN_BLOCK_ALIGN];
	const uint64_t pad = (ZN_BLOCK_ALIGN - w->file_off % ZN_BLOCK_ALIGN) % ZN_BLOCK_ALIGN;
	if (!atomic_load(&w->cancel) && zn_write_all(w->fd, zeros, pad) != ZN_OK)
		out_failed(w);
	w->file_off += pad;
	const uint8_t *data = s->codec == ZN_BLOCK_STORED ? s->in : s->out; /* stored: no copy */
	if (s->rfd >= 0)
		copy_through(w, s);
	else if (!atomic_load(&w->cancel) && zn_write_all(w->fd, data, s->csize) != ZN_OK)
		out_failed(w);
	if (grow((void **)&w->blocks, &w->blocks_cap, w->write_seq + 1, sizeof(*w->blocks))) {
		set_error(w, ZN_ERR_NOMEM);
		return;
	}
	struct zn_blockinfo *b = &w->blocks[w->write_seq];
	b->offset = w->file_off;
	b->csize = s->csize;
	b->usize = s->usize;
	b->codec = (uint8_t)s->codec;
	b->xxh3 = s->xxh3;
	b->cxxh3 = s->cxxh3;
	w->file_off += s->csize;
	w->stored_blocks += s->codec == ZN_BLOCK_STORED;
	w->written_content += s->usize;
}

static void *writer_main(void *arg)
{
	struct zn_writer *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		struct slot *s = NULL;
		for (;;) {
			for (unsigned i = 0; i < w->nslots; i++)
				if (w->slots[i].state == SLOT_DONE &&
				    w->slots[i].seq == w->write_seq)
					s = &w->slots[i];
			if (s || (w->producer_done && w->write_seq == w->next_seq))
				break;
			pthread_cond_wait(&w->cv_done, &w->mu);
		}
		pthread_mutex_unlock(&w->mu);
		if (s)
			writer_emit(w, s);
		/* After each block, and once more at the end for the copies found last. */
		if (w->progress && !atomic_load(&w->cancel))
			w->progress(w->hook_ctx, w->written_content + atomic_load(&w->shared_bytes),
			            0);
		if (!s)
			break;
		pthread_mutex_lock(&w->mu);
		/* Segs' digests go to harvest(); a chunk the writer read goes on to the hasher. */
		s->state = s->rfd < 0 || s->hashed ? SLOT_FREE : SLOT_WRITTEN;
		if (s->state == SLOT_WRITTEN)
			pthread_cond_signal(&w->cv_span);
		w->write_seq++;
		pthread_cond_broadcast(&w->cv_free);
		pthread_mutex_unlock(&w->mu);
	}
	return NULL;
}

/* ------------------------------------------------------------------------------------------------
 * The producer: slots, packers, reading
 * ---------------------------------------------------------------------------------------------- */

/* As tar: whether a file's size or modification time (size, sec.nsec after its read) differs
 * from what the walk saw (its entry's size, `before`). One that shrank was told already. */
static int changed(const struct went *e, uint64_t size, const struct timespec *before, int64_t sec,
                   int64_t nsec)
{
	return !e->shrunk && (size != e->size || sec != before->tv_sec || nsec != before->tv_nsec);
}

/* What the writer's read of a chunk found (slot.rfd), told as the producer's own reads tell
 * theirs; after the file's last chunk, whether it changed meanwhile (as tar). Told at once, not
 * after the small files waiting to be read (as report() does): this may run while they are
 * being placed. */
static void settle_read(struct zn_writer *w, struct slot *s)
{
	struct went *e = &w->ents[s->segs[0].entry];
	const char *what = NULL;
	char msg[256];
	struct stat st;
	if (s->rerr > 0 && !e->dropped) {
		snprintf(msg, sizeof(msg), "read failed; not stored: %s", strerror(s->rerr));
		what = msg; /* its chunks stay as unreferenced bytes */
		e->dropped = 1;
	} else if (s->rerr < 0 && !e->shrunk && !e->dropped) {
		what = "file shrank while being read; padded with zeros (as tar)";
		e->shrunk = 1;
	} else if (s->rlast && !e->dropped && !fstat(s->rfd, &st) &&
	           changed(e, (uint64_t)st.st_size, &s->rmtim, st.st_mtim.tv_sec,
	                   st.st_mtim.tv_nsec)) {
		what = "file changed as we read it; stored as read";
	}
	if (what && w->problem)
		w->problem(w->hook_ctx, e->path, s->rerr > 0 ? ZN_ERR_IO : ZN_ERR_CHANGED, what);
	if (s->rerr)
		w->input_err = ZN_ERR_IO;
	close(s->rfd);
	s->rfd = -1;
}

/* The digests the workers computed for a written slot go to its files' entries (owned by the
 * producer), before the slot is filled again or once every thread is joined. */
static void harvest(struct zn_writer *w, struct slot *s)
{
	if (s->rfd >= 0 && s->nsegs)
		settle_read(w, s);
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].last && w->opt.digest == ZN_DIGEST_SHA256)
			memcpy(w->ents[s->segs[i].entry].sha, s->segs[i].sha, 32);
	s->nsegs = 0;
}

static zn_result acquire_slot(struct zn_writer *w, int klass, struct slot **out)
{
	pthread_mutex_lock(&w->mu);
	struct slot *s = NULL;
	while (!atomic_load(&w->cancel)) {
		for (unsigned i = 0; i < w->nslots && !s; i++)
			if (w->slots[i].state == SLOT_FREE)
				s = &w->slots[i];
		if (s)
			break;
		pthread_cond_wait(&w->cv_free, &w->mu);
	}
	zn_result r = s ? ZN_OK : w->err;
	if (s)
		s->state = SLOT_FILLING;
	pthread_mutex_unlock(&w->mu);
	if (!s)
		return r;
	if (!s->in) {
		/* On huge pages: reading 500 MB of random data into 4 KiB pages took 9% longer
		 * (0.613 -> 0.559 s median of 9, -T2), src and small 6-7% (docs/BENCHMARKS.md). The
		 * output buffer on huge pages measured within the noise, so it stays on malloc. */
		s->in = zn_big_alloc(w->opt.chunk_size);
		s->out = malloc(ZSTD_compressBound(w->opt.chunk_size));
		if (!s->in || !s->out) {
			set_error(w, ZN_ERR_NOMEM);
			return ZN_ERR_NOMEM;
		}
	}
	harvest(w, s);
	s->klass = klass;
	s->sampled = 0;
	s->rerr = 0;
	s->usize = 0;
	s->nsegs_checked = 0;
	s->span_seq = -1;
	s->gen = ++w->fills;
	*out = s;
	return ZN_OK;
}

/* Give back a slot the producer took but will not queue (it holds no block). */
static void release_slot(struct zn_writer *w, struct slot *s)
{
	pthread_mutex_lock(&w->mu);
	s->state = SLOT_FREE;
	pthread_cond_broadcast(&w->cv_free);
	pthread_mutex_unlock(&w->mu);
}

/* Give a filled slot its sequence number and queue it for the workers. */
static void queue_slot(struct zn_writer *w, struct slot *s)
{
	int spanning = s->rfd >= 0; /* the hasher hashes what the writer read, whole or not */
	for (size_t i = 0; i < s->nsegs; i++)
		spanning |= !(s->segs[i].first && s->segs[i].last);
	pthread_mutex_lock(&w->mu);
	s->seq = w->next_seq++;
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].first)
			w->ents[s->segs[i].entry].first_block = (uint32_t)s->seq;
	s->span_seq = spanning && w->opt.digest == ZN_DIGEST_SHA256 ? w->next_span_seq++ : -1;
	s->hashed = s->span_seq < 0;
	if (s->rfd >= 0) { /* nothing for the workers: straight to the writer */
		s->state = SLOT_DONE;
		s->worked = 1;
		s->codec = ZN_BLOCK_STORED;
		s->csize = s->usize;
		pthread_cond_broadcast(&w->cv_done);
	} else {
		s->state = SLOT_QUEUED;
		s->worked = 0;
		w->queue[(w->qhead + w->qcount) % w->nslots] = (unsigned)(s - w->slots);
		w->qcount++;
		pthread_cond_signal(&w->cv_work);
	}
	if (s->span_seq >= 0)
		pthread_cond_signal(&w->cv_span);
	pthread_mutex_unlock(&w->mu);
}

static zn_result add_seg(struct zn_writer *w, struct slot *s, uint64_t entry, uint64_t len,
                         int first, int last)
{
	if (grow((void **)&s->segs, &s->segs_cap, s->nsegs + 1, sizeof(*s->segs)))
		return ZN_ERR_NOMEM;
	struct seg *g = &s->segs[s->nsegs++];
	g->entry = entry;
	g->off = s->usize;
	g->len = len;
	g->first = (uint8_t)first;
	g->last = (uint8_t)last;
	return ZN_OK;
}

/* Where a file's bytes come from: a file, memory, or a caller's stream (read). */
struct source {
	int fd;               /* -1 for memory or a stream */
	struct timespec mtim; /* a file's, as the walk saw it */
	const uint8_t *mem;
	zn_read_fn read;
	void *rctx;
	uint64_t pos;
};

/* Up to `max` bytes from a caller's stream: fewer only at its end. 0 or an errno value. */
static int read_upto(struct source *src, uint8_t *dst, uint64_t max, uint64_t *got)
{
	for (*got = 0; *got < max;) {
		size_t want = (size_t)ZN_MIN(max - *got, (uint64_t)1 << 30);
		errno = 0;
		int64_t k = src->read(src->rctx, dst + *got, want);
		if (k == 0)
			break;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno ? errno : EIO;
		if (k > (int64_t)want)
			return EINVAL;
		*got += (uint64_t)k;
	}
	src->pos += *got;
	return 0;
}

/* Read exactly n bytes. Returns 0, or an errno value (EIO-like), or -1 if the file ended early. */
static int source_read(struct source *src, uint8_t *dst, uint64_t n)
{
	if (src->read) {
		uint64_t got;
		int err = read_upto(src, dst, n, &got);
		return err ? err : got < n ? -1 : 0;
	}
	if (src->fd < 0) {
		memcpy(dst, src->mem + src->pos, n);
		src->pos += n;
		return 0;
	}
	uint64_t got; /* at pos: the writer reads some chunks itself (defer_read) */
	int err = pread_upto(src->fd, dst, n, src->pos, &got);
	src->pos += got;
	return err ? err : got < n ? -1 : 0;
}

/* An entry from a caller's stream that failed (err: an errno value) or ended early (-1) is
 * left out and named; the caller gets the result. Its room in a block, if any, is zeroed. */
static zn_result stream_failed(struct zn_writer *w, uint64_t idx, int err, uint8_t *room)
{
	struct went *e = &w->ents[idx];
	if (room)
		memset(room, 0, e->size);
	e->dropped = 1;
	if (err == -1) {
		report(w, e->path, ZN_ERR_TRUNCATED,
		       "stream ended before the entry's size; not stored");
		return ZN_ERR_TRUNCATED;
	}
	char msg[256];
	snprintf(msg, sizeof(msg), "stream read failed: %s; not stored", strerror(err));
	report(w, e->path, ZN_ERR_IO, msg);
	return ZN_ERR_IO;
}

/* A file that could not be read is left out. A small one keeps its room in the block being
 * packed (the block's layout is already fixed): `room` is zeroed, so the archive holds neither
 * stale bytes of an earlier block nor a part of the file, and stays the same whatever the
 * timing. */
static void report_read_failure(struct zn_writer *w, struct went *e, int err, uint8_t *room)
{
	if (room)
		memset(room, 0, e->size);
	report_errno(w, e->path, "read failed; not stored", err);
	e->dropped = 1;
}

/* A small file that ended after `got` of the bytes the walk saw (it shrank meanwhile, or it is
 * one of the kernel's files whose size is a guess) is stored as read, with a warning. When it
 * is placed in a block (placed; its room at `room`), the rest of its room is zeroed and given
 * back when the block is compacted. Large files are padded with zeros instead (emit_content). */
static void store_shrunk(struct zn_writer *w, uint64_t idx, uint64_t got, uint8_t *room, int placed)
{
	struct went *e = &w->ents[idx];
	report(w, e->path, ZN_ERR_CHANGED, "file shrank while being read; stored as read");
	e->shrunk = 1;
	if (placed) {
		struct slot *s = &w->slots[w->packs[idx].slot];
		for (size_t i = s->nsegs; i-- > 0;)
			if (s->segs[i].entry == idx) {
				s->segs[i].len = got;
				break;
			}
		memset(room + got, 0, e->size - got);
	}
	e->size = got;
}

/* A file that changed while read (changed()) is stored as read, with a warning. */
static void check_unchanged(struct zn_writer *w, const struct went *e, uint64_t size,
                            const struct timespec *before, int64_t sec, int64_t nsec)
{
	if (changed(e, size, before, sec, nsec))
		report(w, e->path, ZN_ERR_CHANGED, "file changed as we read it; stored as read");
}

/* The same for a large file the producer has read to its end (src, an open file). */
static void check_file_unchanged(struct zn_writer *w, uint64_t idx, const struct source *src)
{
	struct stat st;
	if (src->fd >= 0 && !w->ents[idx].dropped && !fstat(src->fd, &st))
		check_unchanged(w, &w->ents[idx], (uint64_t)st.st_size, &src->mtim,
		                st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* A file the walk found that is gone when looked at again: tar's warning and exit status 1 (the
 * tree changed under the walk), not an unreadable input. Such an entry is dropped as
 * DROPPED_REMOVED, so that a hardlink to it is named the same way. */
enum { DROPPED_REMOVED = 2 };
static void report_removed(struct zn_writer *w, const char *path)
{
	report(w, path, ZN_ERR_CHANGED, "file removed before we read it; not stored");
}

static void report_open_failure(struct zn_writer *w, struct went *e, int err, uint8_t *room)
{
	if (room)
		memset(room, 0, e->size);
	if (err == ENOENT)
		report_removed(w, e->path);
	else
		report_errno(w, e->path, "cannot open; not stored", err);
	e->dropped = err == ENOENT ? DROPPED_REMOVED : 1;
}

static zn_result place_small(struct zn_writer *w, uint64_t idx, struct slot **out, uint64_t *off,
                             int *queued_full);
static zn_result place_aside(struct zn_writer *w, uint64_t idx, const uint8_t *p);
static void judge(struct zn_writer *w, uint64_t idx, const uint8_t *p);
static void compact(struct zn_writer *w, struct slot *s);
static int large_copy(struct zn_writer *w, uint64_t idx, const struct source *src);
static uint8_t *aside_buffer(struct zn_writer *w);

static zn_result emit_content(struct zn_writer *w, uint64_t idx, struct source *src);

/* Whether the writer should read chunk [off, off + n) of a large file itself and store it as it
 * is (slot.rfd): a known-compressed type, or samples that do not shrink, the same samples of the
 * same bytes by which a worker would have stored it (so the archive is the same). 1: it should;
 * 2: the samples shrink (compress it, no need to sample again); 0: not sampled. */
static int defer_read(struct zn_writer *w, int klass, const struct source *src, uint64_t off,
                      uint64_t n)
{
	if (klass == CLASS_STORE)
		return 1;
	uint64_t at[3];
	if (!sample_starts(n, at))
		return 0;
	const size_t tmp_cap = ZSTD_compressBound(SAMPLE_PIECE);
	if (!w->sample_cctx && !(w->sample_cctx = ZSTD_createCCtx()))
		return 0;
	if (!w->sample_buf && !(w->sample_buf = malloc(3 * SAMPLE_PIECE + tmp_cap)))
		return 0;
	const uint8_t *p[3];
	for (int i = 0; i < 3; i++) {
		uint8_t *d = w->sample_buf + i * SAMPLE_PIECE;
		uint64_t got;
		if (pread_upto(src->fd, d, SAMPLE_PIECE, off + at[i], &got) || got < SAMPLE_PIECE)
			return 0; /* read as usual, which tells what is wrong */
		p[i] = d;
	}
	uint8_t *tmp = w->sample_buf + 3 * SAMPLE_PIECE;
	return samples_say_store(w->sample_cctx, p, tmp, tmp_cap) ? 1 : 2;
}

/* A stream of unknown length (ZN_SIZE_UNKNOWN). The first chunk is read into the aside buffer:
 * less than a chunk in all is a small file, placed from there. A longer one goes into slots a
 * chunk behind the reading, copied from the aside buffer, so that whether a chunk is the file's
 * last is known when it is queued. */
static zn_result emit_unsized(struct zn_writer *w, uint64_t idx, struct source *src)
{
	const uint64_t chunk = w->opt.chunk_size;
	uint8_t *buf = aside_buffer(w);
	if (!buf)
		return ZN_ERR_NOMEM;
	uint64_t n;
	int err = read_upto(src, buf, chunk, &n);
	if (err)
		return stream_failed(w, idx, err, NULL);
	if (n < chunk) {
		w->ents[idx].size = n;
		struct source mem = {.fd = -1, .mem = buf};
		return emit_content(w, idx, &mem);
	}
	int klass = class_of(w, &w->ents[idx]);
	w->ents[idx].block_offset = 0;
	uint64_t done = 0;
	for (int first = 1;; first = 0) {
		struct slot *s;
		RETURN_IF_ERROR(acquire_slot(w, klass, &s));
		memcpy(s->in, buf, n);
		uint64_t next = 0;
		if (n == chunk && (err = read_upto(src, buf, chunk, &next)) != 0) {
			release_slot(w, s); /* earlier chunks stay as unreferenced bytes */
			return stream_failed(w, idx, err, NULL);
		}
		RETURN_IF_ERROR(add_seg(w, s, idx, n, first, next == 0));
		s->usize = n;
		queue_slot(w, s);
		done += n;
		w->packs[idx].slot = (uint32_t)(s - w->slots);
		w->packs[idx].gen = s->gen;
		if (!next)
			break;
		n = next;
	}
	w->ents[idx].size = done;
	return ZN_OK;
}

/* Place the content of entry `idx` (e->size bytes from src) into blocks. */
static zn_result emit_content(struct zn_writer *w, uint64_t idx, struct source *src)
{
	struct went *e = &w->ents[idx];
	uint64_t size = e->size, chunk = w->opt.chunk_size;
	if (size == ZN_SIZE_UNKNOWN && src->read)
		return emit_unsized(w, idx, src);
	int klass = class_of(w, e);
	if (size == 0) {
		if (e->has_digest)
			zn_sha256("", 0, e->sha);
		return ZN_OK;
	}
	if (size < chunk && src->fd < 0) { /* small files on disk are read in batches */
		struct slot *s;
		uint64_t off;
		int full;
		RETURN_IF_ERROR(place_small(w, idx, &s, &off, &full));
		if (full && !src->read)
			return place_aside(w, idx, src->mem + src->pos);
		uint8_t *dst = full ? aside_buffer(w) : s->in + off;
		if (!dst)
			return ZN_ERR_NOMEM;
		int err = source_read(src, dst, size); /* from memory: always 0 */
		if (err) {
			zn_result r = stream_failed(w, idx, err, full ? NULL : dst);
			compact(w, full ? NULL : s);
			return r;
		}
		if (full)
			return place_aside(w, idx, dst);
		judge(w, idx, s->in + off);
		compact(w, s);
		return ZN_OK;
	}
	/* A large file: whole chunks of its own, in order, unless it is a copy of one stored (a
	 * stream cannot be read twice: it is always stored). */
	e->block_offset = 0;
	if (!src->read && large_copy(w, idx, src)) {
		check_file_unchanged(w, idx, src);
		return ZN_OK;
	}
	int ended = 0;
	struct slot *last_read = NULL; /* the last chunk the writer reads, while not harvested */
	uint64_t last_gen = 0;
	for (uint64_t done = 0; done < size;) {
		uint64_t n = ZN_MIN(chunk, size - done);
		struct slot *s;
		RETURN_IF_ERROR(acquire_slot(w, klass, &s));
		int d = src->fd >= 0 && !ended ? defer_read(w, klass, src, done, n) : 0;
		s->sampled = d == 2;
		if (d == 1)
			s->rfd = fcntl(src->fd, F_DUPFD_CLOEXEC, 0); /* else read here after all */
		if (s->rfd >= 0) {
			s->roff = done;
			s->rlast = 0;
			s->rmtim = src->mtim;
			src->pos += n;
			last_read = s;
			last_gen = s->gen;
		}
		int err = s->rfd >= 0 ? 0 : ended ? -1 : source_read(src, s->in, n);
		if (err && src->read) { /* earlier chunks stay as unreferenced bytes */
			release_slot(w, s);
			return stream_failed(w, idx, err, NULL);
		}
		if (err == -1) {
			/* The file shrank since the walk: its earlier chunks are queued, so, as tar
			 * does, it is kept at the size it had, padded with zeros. */
			uint64_t got = ended ? 0 : src->pos - done;
			memset(s->in + got, 0, n - got);
			/* Zeros stand for its data: the exit status says so, once. */
			if (!ended && !w->ents[idx].shrunk) {
				report(w, w->ents[idx].path, ZN_ERR_CHANGED,
				       "file shrank while being read; padded with zeros (as tar)");
				w->input_err = ZN_ERR_IO;
			}
			ended = w->ents[idx].shrunk = 1;
		} else if (err) {
			/* Earlier chunks are already queued; they stay as unreferenced bytes. */
			report_read_failure(w, &w->ents[idx], err, NULL);
			release_slot(w, s);
			return ZN_OK;
		}
		RETURN_IF_ERROR(add_seg(w, s, idx, n, done == 0, done + n == size));
		s->usize = n;
		queue_slot(w, s);
		done += n;
		/* The last chunk's slot, where settle_digest() finds the file's digest. */
		w->packs[idx].slot = (uint32_t)(s - w->slots);
		w->packs[idx].gen = s->gen;
	}
	/* Whether the file changed while read is known once the writer has read the last chunk
	 * it reads: harvest looks then (settle_read), else now. */
	if (last_read && last_read->gen == last_gen)
		last_read->rlast = 1;
	else
		check_file_unchanged(w, idx, src);
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Entries and metadata
 * ---------------------------------------------------------------------------------------------- */

static uint32_t intern_name(struct zn_writer *w, const char *name)
{
	for (uint32_t i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i], name))
			return i;
	size_t cap = w->names_cap;
	if (grow((void **)&w->names, &cap, w->nnames + 1, sizeof(char *)))
		return 0;
	w->names_cap = (uint32_t)cap;
	w->names[w->nnames] = strdup(name);
	if (!w->names[w->nnames])
		return 0;
	return w->nnames++;
}

static uint32_t lookup_name(struct zn_writer *w, struct name_cache *c, uint32_t id, int group)
{
	unsigned h = id % 64;
	if (c->used[h] && c->key[h] == id)
		return c->id_of_key[h];
	char buf[4096];
	const char *name = "";
	if (group) {
		struct group gr, *res = NULL;
		if (!getgrgid_r(id, &gr, buf, sizeof(buf), &res) && res)
			name = res->gr_name;
	} else {
		struct passwd pw, *res = NULL;
		if (!getpwuid_r(id, &pw, buf, sizeof(buf), &res) && res)
			name = res->pw_name;
	}
	uint32_t nid = intern_name(w, name);
	c->used[h] = 1;
	c->key[h] = id;
	c->id_of_key[h] = nid;
	return nid;
}

/* A slot of the writer's open-addressing sets (paths, contents, larges, lsums) holds an entry's
 * index + 1 in its low SET_IX_BITS bits and the top bits of the entry's key above them, so a
 * probe reads an entry only when those bits agree: in a set of a million entries, every occupied
 * slot passed was a cache miss or two (perf on a million files of 40 bytes: path_slot 1046
 * samples before, 635 after). */
#define SET_IX_BITS 40
#define SET_IX_MASK ((1ull << SET_IX_BITS) - 1)

static uint64_t set_slot(uint64_t key, uint64_t idx)
{
	return (key & ~SET_IX_MASK) | (idx + 1);
}

static uint64_t slot_entry(uint64_t v)
{
	return (v & SET_IX_MASK) - 1;
}

static int slot_may_be(uint64_t v, uint64_t key)
{
	return (v & ~SET_IX_MASK) == (key & ~SET_IX_MASK);
}

/* The slot of `path` in the path set: the entry holding it, or the empty slot where it goes;
 * *key gets the path's key (its hash). */
static uint64_t *path_slot(struct zn_writer *w, const char *path, size_t len, uint64_t *key)
{
	*key = zn_xxh3(path, len);
	for (size_t h = (size_t)*key & (w->paths_cap - 1);; h = (h + 1) & (w->paths_cap - 1)) {
		uint64_t v = w->paths[h];
		if (!v)
			return &w->paths[h];
		const struct went *e = &w->ents[slot_entry(v)];
		if (slot_may_be(v, *key) && e->path_len == len && !memcmp(e->path, path, len))
			return &w->paths[h];
	}
}

/* Whether entry e is left out: itself, or as a hardlink found on disk whose file could not be
 * read (finish drops such a hardlink; reads are done before add_path returns). */
static int left_out(const struct zn_writer *w, const struct went *e)
{
	return e->dropped || (e->link_entry >= 0 && w->ents[e->link_entry].dropped);
}

/* A copy of s[0, n) and a NUL that lives as long as the writer. Strings are packed in chunks
 * that never move: a million paths of 20-odd bytes took 16 MB more as one malloc each (its
 * header and rounding), and a malloc's time each. */
static char *keep_str(struct zn_writer *w, const char *s, size_t n)
{
	enum { CHUNK = 256 << 10 };
	struct strchunk *c = w->strs;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = ZN_MAX((size_t)CHUNK, n + 1);
		if (!(c = malloc(sizeof(*c) + cap)))
			return NULL;
		c->next = w->strs;
		c->used = 0;
		c->cap = cap;
		w->strs = c;
	}
	char *p = c->data + c->used;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	c->used += n + 1;
	return p;
}

/* A new entry for `path`, of type `type`, at *idx; or, when the path is already stored, no new
 * entry and *idx = NO_ENTRY: the first one added stays (its content is the only one read), and
 * a path given again is named unless both are directories, which merge. A first one already
 * left out (it could not be read) gives its place to the new one. */
#define NO_ENTRY UINT64_MAX
/* Nanoseconds in 64 bits reach from 1677 to 2262; times outside are clamped (the
 * multiplication would overflow). */
static int64_t mtime_ns_of(const struct stat *st)
{
	const int64_t lim = INT64_MAX / 1000000000 - 1;
	int64_t sec = st->st_mtim.tv_sec;
	return sec > lim    ? INT64_MAX
	       : sec < -lim ? INT64_MIN
	                    : sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* 32 bits of which file stat names (its device and inode), to tell a file met again from a
 * different one stored under the same path (0 for an entry added from memory). */
static uint32_t file_ident(const struct stat *st)
{
	const uint64_t id[2] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
	return (uint32_t)zn_xxh3(id, sizeof(id)) | 1;
}

/* A new entry for path (*idx), or NO_ENTRY where the path is stored already: the same file
 * met again (overlapping PATHs) is named as a warning, a different one (st, from another -C
 * or PATH) as an input left out; two directories are merged, as their contents would be. */
static zn_result new_entry(struct zn_writer *w, const char *path, size_t path_len, int type,
                           const struct stat *st, uint64_t *idx)
{
	if (w->nents * 2 >= w->paths_cap) {
		size_t ncap = w->paths_cap ? w->paths_cap * 2 : 1024;
		uint64_t *old = w->paths;
		size_t ocap = w->paths_cap;
		if (!(w->paths = calloc(ncap, sizeof(*w->paths)))) {
			w->paths = old;
			return ZN_ERR_NOMEM;
		}
		w->paths_cap = ncap;
		for (size_t i = 0; i < ocap; i++) {
			if (!old[i])
				continue;
			const struct went *e = &w->ents[slot_entry(old[i])];
			uint64_t key;
			*path_slot(w, e->path, e->path_len, &key) = old[i];
		}
		free(old);
	}
	uint64_t key, *slot = path_slot(w, path, path_len, &key);
	const struct went *first = *slot ? &w->ents[slot_entry(*slot)] : NULL;
	if (first && !left_out(w, first)) {
		if (st && (type != ZN_TYPE_DIR || first->type != ZN_TYPE_DIR) &&
		    w->packs[slot_entry(*slot)].ident != file_ident(st)) {
			report(w, path, ZN_ERR_EXISTS,
			       "a different file was stored under this path first; not stored");
			w->input_err = ZN_ERR_IO;
		} else if (type != ZN_TYPE_DIR || first->type != ZN_TYPE_DIR) {
			report(w, path, ZN_OK, "given more than once; stored once (the first)");
		}
		*idx = NO_ENTRY;
		return ZN_OK;
	}
	if (grow((void **)&w->ents, &w->ents_cap, w->nents + 1, sizeof(*w->ents)) ||
	    grow((void **)&w->packs, &w->packs_cap, w->nents + 1, sizeof(*w->packs)))
		return ZN_ERR_NOMEM;
	struct went *e = &w->ents[w->nents];
	memset(e, 0, sizeof(*e));
	memset(&w->packs[w->nents], 0, sizeof(*w->packs)); /* slot 0, fill 0 until placed */
	w->packs[w->nents].ident = st ? file_ident(st) : 0;
	if (!(e->path = keep_str(w, path, path_len)))
		return ZN_ERR_NOMEM;
	e->path_len = (uint32_t)path_len;
	e->type = (uint8_t)type;
	e->link_entry = -1;
	e->dup_of = -1;
	*idx = w->nents++;
	*slot = set_slot(key, *idx);
	return ZN_OK;
}

static zn_result set_link(struct zn_writer *w, struct went *e, const char *link, size_t len)
{
	if (!(e->link = keep_str(w, link, len)))
		return ZN_ERR_NOMEM;
	e->link_len = (uint32_t)len;
	return ZN_OK;
}

static void fill_stat(struct zn_writer *w, struct went *e, const struct stat *st)
{
	e->mode = st->st_mode & 07777;
	e->uid = st->st_uid;
	e->gid = st->st_gid;
	e->uname = lookup_name(w, &w->ucache, st->st_uid, 0);
	e->gname = lookup_name(w, &w->gcache, st->st_gid, 1);
	e->mtime_ns = mtime_ns_of(st);
	if (e->mtime_ns == INT64_MAX || e->mtime_ns == INT64_MIN)
		report(w, e->path, ZN_OK,
		       "modification time outside 1677-2262; stored as the nearest");
}

/* Hardlinked inodes seen so far: returns the entry that first stored this inode, or -1. */
static int64_t inode_lookup(struct zn_writer *w, const struct stat *st, uint64_t entry)
{
	if (w->ninodes * 2 >= w->inodes_cap) {
		size_t ncap = w->inodes_cap ? w->inodes_cap * 2 : 256;
		struct inode_rec *t = calloc(ncap, sizeof(*t));
		if (!t)
			return -1;
		for (size_t i = 0; i < w->inodes_cap; i++) {
			if (!w->inodes[i].ino && !w->inodes[i].dev)
				continue;
			size_t h = (w->inodes[i].ino * 0x9e3779b97f4a7c15ULL) & (ncap - 1);
			while (t[h].ino || t[h].dev)
				h = (h + 1) & (ncap - 1);
			t[h] = w->inodes[i];
		}
		free(w->inodes);
		w->inodes = t;
		w->inodes_cap = ncap;
	}
	size_t h = (st->st_ino * 0x9e3779b97f4a7c15ULL) & (w->inodes_cap - 1);
	while (w->inodes[h].ino || w->inodes[h].dev) {
		if (w->inodes[h].ino == st->st_ino && w->inodes[h].dev == st->st_dev)
			return (int64_t)w->inodes[h].entry;
		h = (h + 1) & (w->inodes_cap - 1);
	}
	w->inodes[h].dev = st->st_dev;
	w->inodes[h].ino = st->st_ino;
	w->inodes[h].entry = entry;
	w->ninodes++;
	return -1;
}

/* ------------------------------------------------------------------------------------------------
 * Walking the filesystem
 * ---------------------------------------------------------------------------------------------- */

/* ------------------------------------------------------------------------------------------------
 * Reading small files in batches
 *
 * The walk collects up to BATCH small files, from as many directories as hold them (pend_dir), up
 * to the next file that is not small, then places them, in the order they were found, into the
 * packers (so block boundaries are the same whichever way they are read), and reads each straight
 * into its place in the slot. When the workers have nothing queued (a tree of small files gives
 * them little to compress) and there is more than one thread, a crew shares the reads (crew_run).
 * Otherwise the producer reads alone: with io_uring, each file is one linked chain OPENAT (into a
 * registered file slot) -> READ -> CLOSE, and a batch is one submission instead of three system
 * calls per file, followed by an fstatat per file for the change check; without it (old kernel,
 * seccomp, ZN_DISABLE_URING in test builds) with openat/read/fstat/close. On this machine's kernel
 * (6.18) both ways take the same time.
 * ---------------------------------------------------------------------------------------------- */

/* Reserve room for entry idx in its packer. If the packer's block is too full, *queued_full is
 * set and nothing is reserved: the caller completes every read into that block, queues it with
 * close_full_packer() and calls again. */
static zn_result place_small(struct zn_writer *w, uint64_t idx, struct slot **out, uint64_t *off,
                             int *queued_full)
{
	struct went *e = &w->ents[idx];
	int klass = class_of(w, e);
	struct slot *s = w->pack[klass];
	*queued_full = s && s->usize + e->size > w->opt.chunk_size;
	if (*queued_full)
		return ZN_OK; /* caller finishes its reads, then calls again */
	if (!s) {
		RETURN_IF_ERROR(acquire_slot(w, klass, &s));
		w->pack[klass] = s;
	}
	*off = s->usize;
	RETURN_IF_ERROR(add_seg(w, s, idx, e->size, 1, 1));
	s->usize += e->size;
	w->ents[idx].block_offset = (uint32_t)*off;
	w->packs[idx].slot = (uint32_t)(s - w->slots);
	w->packs[idx].gen = s->gen;
	*out = s;
	return ZN_OK;
}

/* Identical small files are stored once
 * ------------------------------------
 * Once a small file's bytes are in its room, the producer looks for an earlier small file with
 * the same content (by XXH3-64, then by the bytes themselves) and, if there is one, takes the
 * room back: the file becomes a row pointing at the first copy's bytes. The comparison is exact:
 * while the first copy's slot has not been filled again its bytes are compared directly, and
 * after that its SHA-256 (harvested when the slot was taken back) is compared with the new
 * file's. Both give the same answer, so the archive does not depend on timing. Without digests
 * the second way is missing, and nothing is deduplicated. Files are judged in the order they
 * were met, and a block is found full only after every file in it is judged (read_batch
 * waits for its reads first; a file that does not fit is read aside and judged before the
 * block is closed: place_aside), so blocks fill exactly as if the copies had never been met,
 * with or without io_uring, and a block that would hold only copies is never written. */

static uint64_t set_key(const struct zn_writer *w, uint64_t idx, int by_sha)
{
	return by_sha ? zn_get_le64(w->ents[idx].sha) : w->packs[idx].ckey;
}

/* Room in an open-addressing set of entries (slots as set_slot makes them, keyed by their ckey,
 * or by their digest) for n of them; -1 if memory is short (the file is then stored again: only
 * space is lost). */
static int grow_set(struct zn_writer *w, uint64_t **set, size_t *cap, size_t n, int by_sha)
{
	if (n * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 4096, ocap = *cap;
	uint64_t *old = *set, *neu = calloc(ncap, sizeof(*neu));
	if (!neu)
		return -1;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i])
			continue;
		size_t h = (size_t)set_key(w, slot_entry(old[i]), by_sha) & (ncap - 1);
		while (neu[h])
			h = (h + 1) & (ncap - 1);
		neu[h] = old[i];
	}
	free(old);
	*set = neu;
	*cap = ncap;
	return 0;
}

/* Whether the content of entry idx (its bytes at `p`) is that of a small file stored earlier;
 * if so, records which, else remembers this one. */
static int is_duplicate(struct zn_writer *w, uint64_t idx, const uint8_t *p)
{
	if (w->opt.no_dedup || grow_set(w, &w->contents, &w->contents_cap, w->ncontents + 1, 0))
		return 0;
	struct went *e = &w->ents[idx];
	const uint64_t ckey = w->packs[idx].ckey = zn_xxh3(p, e->size);
	const size_t mask = w->contents_cap - 1;
	size_t h = (size_t)ckey & mask;
	uint8_t sha[32];
	int hashed = 0;
	for (; w->contents[h]; h = (h + 1) & mask) {
		if (!slot_may_be(w->contents[h], ckey))
			continue;
		const uint64_t oi = slot_entry(w->contents[h]);
		const struct went *o = &w->ents[oi];
		const struct wpack *op = &w->packs[oi];
		if (op->ckey != ckey || o->size != e->size)
			continue;
		const struct slot *os = &w->slots[op->slot];
		int same;
		if (os->gen == op->gen) {
			same = !memcmp(os->in + o->block_offset, p, e->size);
		} else {
			if (!hashed)
				zn_sha256(p, e->size, sha);
			hashed = 1;
			same = !memcmp(sha, o->sha, 32);
		}
		if (same) {
			e->dup_of = (int64_t)slot_entry(w->contents[h]);
			atomic_fetch_add(&w->shared_bytes, e->size);
			return 1;
		}
	}
	w->contents[h] = set_slot(ckey, idx);
	w->ncontents++;
	return 0;
}

/* Identical large files are stored once too. A large file's bytes are never all in memory, so
 * the candidates are found before it is read: an earlier large file of the same size whose
 * first and last 4 KiB hash the same (two small reads per large file). Only for such a file is
 * the whole file read and hashed here first, and its digest looked up among those of the large
 * files stored before it, waiting for the workers that hash them if need be (each is waited
 * for once). The answer depends on the contents alone, so the archive does not depend on
 * timing. A file that differs after all is read again to be stored. */
#define SCAN_PIECE (256u << 10) /* hashed in pieces that stay in the cache */

static uint8_t *aside_buffer(struct zn_writer *w)
{
	if (!w->aside)
		w->aside = malloc(w->opt.chunk_size);
	return w->aside;
}

static int pread_full(int fd, uint8_t *dst, uint64_t n, uint64_t off)
{
	uint64_t got;
	return pread_upto(fd, dst, n, off, &got) || got < n ? -1 : 0;
}

/* XXH3-64 of a large file's size, first and last 4 KiB (size >= ZN_CHUNK_SIZE_MIN > 8 KiB). */
static int ends_key(const struct source *src, uint64_t size, uint64_t *key)
{
	const uint64_t n = 4096;
	uint8_t buf[8 + 2 * 4096];
	zn_put_le64(buf, size);
	if (src->fd < 0) {
		memcpy(buf + 8, src->mem, n);
		memcpy(buf + 8 + n, src->mem + size - n, n);
	} else if (pread_full(src->fd, buf + 8, n, 0) ||
	           pread_full(src->fd, buf + 8 + n, n, size - n)) {
		return -1;
	}
	*key = zn_xxh3(buf, sizeof(buf));
	return 0;
}

static int whole_sha(struct zn_writer *w, const struct source *src, uint64_t size, uint8_t sha[32])
{
	if (src->fd < 0) {
		zn_sha256(src->mem, size, sha);
		return 0;
	}
	uint8_t *buf = aside_buffer(w);
	if (!buf)
		return -1;
	SHA256_CTX c;
	SHA256_Init(&c);
	const uint64_t piece = ZN_MIN(SCAN_PIECE, w->opt.chunk_size); /* the buffer's size */
	for (uint64_t off = 0; off < size;) {
		uint64_t n = ZN_MIN(piece, size - off);
		if (pread_full(src->fd, buf, n, off))
			return -1;
		SHA256_Update(&c, buf, n);
		off += n;
	}
	SHA256_Final(sha, &c);
	return 0;
}

/* The SHA-256 of large file o, waiting for the worker that hashes its last chunk. */
static int settle_digest(struct zn_writer *w, uint64_t o)
{
	struct went *e = &w->ents[o];
	struct slot *s = &w->slots[w->packs[o].slot];
	if (s->gen != w->packs[o].gen)
		return 0; /* the slot was taken back since: harvest() gave e its digest */
	pthread_mutex_lock(&w->mu);
	while (!(s->worked && s->hashed) && !atomic_load(&w->cancel))
		pthread_cond_wait(&w->cv_done, &w->mu);
	pthread_mutex_unlock(&w->mu);
	if (atomic_load(&w->cancel))
		return -1;
	if (s->rerr)
		return 1; /* its last chunk was not read as it was: no original for others */
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].entry == o && s->segs[i].last)
			memcpy(e->sha, s->segs[i].sha, 32);
	return 0;
}

/* Large file idx is stored: it may be the original of a later one. */
static void remember_large(struct zn_writer *w, uint64_t idx)
{
	if (!grow((void **)&w->lwait, &w->lwait_cap, w->nlwait + 1, sizeof(*w->lwait)))
		w->lwait[w->nlwait++] = idx;
}

/* The digests of the large files stored so far, in the set by digest. */
static int settle_larges(struct zn_writer *w)
{
	for (size_t k = 0; k < w->nlwait; k++) {
		uint64_t o = w->lwait[k];
		if (w->ents[o].dropped)
			continue;
		int r = settle_digest(w, o);
		if (r < 0)
			return -1;
		if (r)
			continue;
		if (grow_set(w, &w->lsums, &w->lsums_cap, w->nlsums + 1, 1))
			continue;
		size_t h = (size_t)zn_get_le64(w->ents[o].sha) & (w->lsums_cap - 1);
		while (w->lsums[h])
			h = (h + 1) & (w->lsums_cap - 1);
		w->lsums[h] = set_slot(zn_get_le64(w->ents[o].sha), o);
		w->nlsums++;
	}
	w->nlwait = 0;
	return 0;
}

/* Whether large file idx (its bytes from src, not read yet) has the content of a large file
 * stored earlier; if so, records which, else remembers this one. */
static int large_copy(struct zn_writer *w, uint64_t idx, const struct source *src)
{
	struct went *e = &w->ents[idx];
	uint64_t *ckey = &w->packs[idx].ckey;
	if (w->opt.no_dedup || e->size < w->opt.chunk_size || ends_key(src, e->size, ckey) ||
	    grow_set(w, &w->larges, &w->larges_cap, w->nlarges + 1, 0))
		return 0;
	const size_t mask = w->larges_cap - 1;
	size_t h = (size_t)*ckey & mask;
	for (; w->larges[h]; h = (h + 1) & mask) {
		const uint64_t oi = slot_entry(w->larges[h]);
		if (w->packs[oi].ckey == *ckey && w->ents[oi].size == e->size)
			break;
	}
	if (!w->larges[h]) { /* the first of its size and ends: nothing to compare */
		w->larges[h] = set_slot(*ckey, idx);
		w->nlarges++;
		remember_large(w, idx);
		return 0;
	}
	uint8_t sha[32];
	if (whole_sha(w, src, e->size, sha))
		return 0; /* read again to be stored, and any failure reported then */
	if (settle_larges(w))
		return 0;
	const size_t smask = w->lsums_cap - 1;
	for (h = (size_t)zn_get_le64(sha) & smask; w->nlsums && w->lsums[h]; h = (h + 1) & smask) {
		uint64_t o = slot_entry(w->lsums[h]);
		if (w->ents[o].size == e->size && !memcmp(w->ents[o].sha, sha, 32)) {
			e->dup_of = (int64_t)o;
			atomic_fetch_add(&w->shared_bytes, e->size);
			return 1;
		}
	}
	remember_large(w, idx);
	return 0;
}

/* Judges a small file whose bytes (at p) were just read, unless it could not be read. */
static void judge(struct zn_writer *w, uint64_t idx, const uint8_t *p)
{
	if (!w->ents[idx].dropped)
		is_duplicate(w, idx, p);
}

/* Takes back the rooms of the copies among the files placed in s since the last call, moving
 * the files after them down (all of them judged by now). */
static void compact(struct zn_writer *w, struct slot *s)
{
	if (!s)
		return;
	size_t i = s->nsegs_checked, k = i;
	uint64_t to = i < s->nsegs ? s->segs[i].off : s->usize;
	for (; i < s->nsegs; i++) {
		struct seg g = s->segs[i]; /* a whole small file */
		struct went *e = &w->ents[g.entry];
		if (e->dup_of >= 0)
			continue;
		if (to != g.off) {
			memmove(s->in + to, s->in + g.off, g.len);
			g.off = to;
			e->block_offset = to;
		}
		s->segs[k++] = g;
		to += g.len;
	}
	s->nsegs = s->nsegs_checked = k;
	s->usize = to;
}

static void close_full_packer(struct zn_writer *w, uint64_t idx)
{
	struct went *e = &w->ents[idx];
	int klass = class_of(w, e);
	queue_slot(w, w->pack[klass]);
	w->pack[klass] = NULL;
}

/* Entry idx, whose bytes were read aside (at p), does not fit in its packer's block. Judged
 * before that block is closed, a copy takes no room and leaves the block open for the next file,
 * as if the copy had never been met; any other file closes the block and starts the next. */
static zn_result place_aside(struct zn_writer *w, uint64_t idx, const uint8_t *p)
{
	if (is_duplicate(w, idx, p))
		return ZN_OK;
	close_full_packer(w, idx);
	struct slot *s;
	uint64_t off;
	int full;
	RETURN_IF_ERROR(place_small(w, idx, &s, &off, &full)); /* fits: the block is new */
	memcpy(s->in + off, p, w->ents[idx].size);
	s->nsegs_checked = s->nsegs;
	return ZN_OK;
}

/* Reads pending file p with plain system calls into dst (its room in a block, or the aside
 * buffer) and says in *r what it found. Touches nothing but dst and *r: crew threads run it. */
static void read_one(const struct pending *p, uint8_t *dst, struct read_res *r)
{
	memset(r, 0, sizeof(*r));
	int fd = openat(p->dirfd, p->name,
	                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r->open_err = errno;
		return;
	}
	struct source src = {.fd = fd};
	r->err = source_read(&src, dst, p->size);
	r->got = src.pos;
	struct stat st;
	if (!r->err && !fstat(fd, &st)) {
		r->stat_ok = 1;
		r->size = (uint64_t)st.st_size;
		r->mtim = st.st_mtim;
	}
	close(fd);
}

/* Acts on what reading pending file k into dst found (r): 0 if its bytes are there (all of them,
 * or those it had when it shrank: stored as read, with a warning; it may also have changed:
 * stored as read), else it is reported and left out. */
static int account(struct zn_writer *w, const struct pending *p, const struct read_res *r,
                   uint8_t *dst, int placed)
{
	struct went *e = &w->ents[p->entry];
	if (r->open_err) {
		report_open_failure(w, e, r->open_err, dst);
		return -1;
	}
	if (r->err == -1) {
		store_shrunk(w, p->entry, r->got, dst, placed);
	} else if (r->err) {
		report_read_failure(w, e, r->err, placed ? dst : NULL);
		return -1;
	} else if (r->stat_ok) {
		check_unchanged(w, e, r->size, &p->mtim, r->mtim.tv_sec, r->mtim.tv_nsec);
	}
	return 0;
}

/* Pending file k does not fit in its packer's block: read it aside and place it from there. A
 * file that cannot be read takes no room then, and leaves the block open. */
static zn_result read_aside(struct zn_writer *w, int k)
{
	if (!aside_buffer(w))
		return ZN_ERR_NOMEM;
	struct read_res r;
	read_one(&w->pend[k], w->aside, &r);
	if (account(w, &w->pend[k], &r, w->aside, 0))
		return ZN_OK;
	return place_aside(w, w->pend[k].entry, w->aside);
}

/* The crew
 * --------
 * On a tree of many small files the producer's system calls are the limit: per file a stat in
 * the walk, then the open, read, fstat and close of the read. With more than one thread they
 * are shared with threads - 1 crew threads, a batch at a time: the stats of a run of a
 * directory's names (stat_ahead), or the reads of a batch of small files (read_batch). Each
 * thread takes the next item nobody took (crew_next) until none is left, the producer too,
 * which then waits for the crew to leave the batch. Every result has its own place (a file's
 * room is fixed before the reads start), and the producer acts on them in order afterwards, so
 * the archive is the same however the work was shared out.
 *
 * A full batch of small files "flies" (take_off): the crew reads it while the producer walks
 * on and fills the other half of the batch stores, stating names itself meanwhile. The flying
 * batch is acted on (settle_fly) before anything else is placed in a block: before the next
 * batch is placed, before a large file or an entry from memory, and before a problem is named,
 * so that the order is the walk's. */
#define CREW_MIN 16 /* a batch of fewer items is done by the producer alone */

static void crew_take(struct zn_writer *w, crew_fn *fn, int to)
{
	for (int k; (k = atomic_fetch_add(&w->crew_next, 1)) < to;)
		fn(w, k);
}

static void *crew_main(void *arg)
{
	struct zn_writer *w = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&w->crew_mu);
	for (;;) {
		while (!w->crew_quit && !(w->crew_open && w->crew_gen != seen))
			pthread_cond_wait(&w->crew_go, &w->crew_mu);
		if (w->crew_quit)
			break;
		seen = w->crew_gen;
		int to = w->crew_to;
		crew_fn *fn = w->crew_job;
		w->crew_busy++;
		pthread_mutex_unlock(&w->crew_mu);
		crew_take(w, fn, to);
		pthread_mutex_lock(&w->crew_mu);
		if (!--w->crew_busy)
			pthread_cond_signal(&w->crew_idle);
	}
	pthread_mutex_unlock(&w->crew_mu);
	return NULL;
}

/* The crew's size, started at the first batch that wants it (none for one thread; fewer if
 * threads cannot be made: the producer reads alone then). */
static unsigned crew_ready(struct zn_writer *w)
{
	if (w->crew_tried)
		return w->ncrew;
	w->crew_tried = 1;
	unsigned want = w->opt.threads - 1;
	if (want && (w->crew = calloc(want, sizeof(*w->crew))))
		while (w->ncrew < want && !pthread_create(&w->crew[w->ncrew], NULL, crew_main, w))
			w->ncrew++;
	return w->ncrew;
}

static void crew_stop(struct zn_writer *w)
{
	pthread_mutex_lock(&w->crew_mu);
	w->crew_quit = 1;
	pthread_cond_broadcast(&w->crew_go);
	pthread_mutex_unlock(&w->crew_mu);
	for (unsigned i = 0; i < w->ncrew; i++)
		pthread_join(w->crew[i], NULL);
	w->ncrew = 0;
	free(w->crew);
	w->crew = NULL;
}

/* Whether a batch of n items is worth sharing with a crew. Not while blocks wait in the queue
 * for the workers: the cores have compressing to do then, and the producer does its batches
 * alone rather than take a core from them (the results are the same either way). */
static int crew_wanted(struct zn_writer *w, int n)
{
	if (n < CREW_MIN || (w->crew_tried && !w->ncrew) || w->fly_to)
		return 0; /* few, no crew, or the crew has a batch (take_off) */
	pthread_mutex_lock(&w->mu);
	int behind = w->qcount > 0;
	pthread_mutex_unlock(&w->mu);
	return !behind && crew_ready(w);
}

/* Hands items from..to-1 to the crew (waking `wake` of its threads at most); crew_wait ends
 * the batch. One batch at a time. */
static void crew_post(struct zn_writer *w, crew_fn *fn, int from, int to, int wake)
{
	atomic_store(&w->crew_next, from); /* no crew thread is in a batch now */
	pthread_mutex_lock(&w->crew_mu);
	w->crew_job = fn;
	w->crew_to = to;
	w->crew_open = 1;
	w->crew_gen++;
	for (int i = 0; i < wake && i < (int)w->ncrew; i++)
		pthread_cond_signal(&w->crew_go);
	pthread_mutex_unlock(&w->crew_mu);
}

/* Does what is left of the batch posted, then waits for the crew to leave it. */
static void crew_wait(struct zn_writer *w)
{
	crew_take(w, w->crew_job, w->crew_to);
	pthread_mutex_lock(&w->crew_mu);
	w->crew_open = 0;
	while (w->crew_busy)
		pthread_cond_wait(&w->crew_idle, &w->crew_mu);
	pthread_mutex_unlock(&w->crew_mu);
}

/* Runs fn on items from..to-1, shared with the crew. */
static void crew_run(struct zn_writer *w, crew_fn *fn, int from, int to)
{
	crew_post(w, fn, from, to, to - from - 1); /* the producer takes items too */
	crew_wait(w);
}

static void read_pending(struct zn_writer *w, int k)
{
	read_one(&w->pend[k], w->pend[k].room, &w->res[k]);
}

#ifdef ZN_HAVE_URING
/* Pending file k, of which the ring read `have` bytes, fewer than the walk saw: the rest with
 * plain reads, as read_one would go on (a short read is the end of a local file, but not
 * always of a FUSE one). Returns how many bytes are in its room now. */
static uint64_t read_rest(struct zn_writer *w, int k, uint64_t have)
{
	const struct pending *p = &w->pend[k];
	int fd = openat(p->dirfd, p->name,
	                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	while (fd >= 0 && have < p->size) {
		ssize_t n = pread(fd, p->room + have, p->size - have, (off_t)have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (uint64_t)n;
	}
	if (fd >= 0)
		close(fd);
	return have;
}

/* Reads pend[from..to), at most ring_files of them, through the ring, results in res[]: each
 * file is a chain OPENAT (into registered file slot k - from) -> READ -> CLOSE, and all of them
 * one submission.
 *
 * One submit-and-wait normally does it all. A signal can interrupt the submission or a wait
 * (-EINTR, then retried: a program's interval timer must not cost it files). The reads write
 * into the block being packed, so every chain submitted is reaped before returning; an error
 * the ring cannot get past stops the whole archive rather than leaving reads in flight. */
static zn_result uring_part(struct zn_writer *w, int from, int to)
{
	for (int k = from; k < to; k++) {
		/* Reads are capped below 2 GiB by the chunk size, so one READ moves the whole file
		 * unless it shrank (then the short count is caught below). */
		memset(&w->res[k], 0, sizeof(w->res[k]));
		struct io_uring_sqe *q = io_uring_get_sqe(&w->ring);
		io_uring_prep_openat_direct(q, w->pend[k].dirfd, w->pend[k].name,
		                            O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0,
		                            (unsigned)(k - from));
		q->flags |= IOSQE_IO_HARDLINK;
		q->user_data = (uint64_t)k << 2;
		q = io_uring_get_sqe(&w->ring);
		io_uring_prep_read(q, k - from, w->pend[k].room, (unsigned)w->pend[k].size, 0);
		q->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
		q->user_data = ((uint64_t)k << 2) | 1;
		q = io_uring_get_sqe(&w->ring);
		io_uring_prep_close_direct(q, (unsigned)(k - from));
		q->user_data = ((uint64_t)k << 2) | 2;
	}
	int want = (to - from) * 3;
	if (!want)
		return ZN_OK;
	int ret = io_uring_submit_and_wait(&w->ring, (unsigned)want);
	while (io_uring_sq_ready(&w->ring) && (ret > 0 || ret == -EINTR))
		ret = io_uring_submit(&w->ring);
	int fatal = ret < 0 && ret != -EINTR ? -ret : 0;
	if (!fatal && io_uring_sq_ready(&w->ring))
		fatal = EIO; /* the kernel took no more of them */
	int inflight = want - (int)io_uring_sq_ready(&w->ring);
	for (int got = 0; got < inflight; got++) {
		struct io_uring_cqe *cqe;
		int e;
		while ((e = io_uring_wait_cqe(&w->ring, &cqe)) == -EINTR)
			;
		if (e) {
			fatal = -e;
			break;
		}
		uint64_t ud = cqe->user_data;
		struct read_res *r = &w->res[ud >> 2];
		if ((ud & 3) == 0)
			r->open_err = cqe->res < 0 ? -cqe->res : 0;
		else if ((ud & 3) == 1 && cqe->res < 0)
			r->err = -cqe->res;
		else if ((ud & 3) == 1)
			r->got = (uint64_t)cqe->res;
		io_uring_cqe_seen(&w->ring, cqe);
	}
	if (fatal) {
		report_errno(w, w->ents[w->pend[from].entry].path,
		             "reading files with io_uring failed", fatal);
		return ZN_ERR_IO;
	}
	/* After the reads, the size and time again, for the same check as large files get: by
	 * name, as a direct descriptor has no fstat (a rename over the name since the open reports
	 * a change the file read did not have; an unlink skips the check). A plain fstatat, not a
	 * STATX in the chain: the kernel hands that to a worker thread, which made reading
	 * 100,000 small files take twice as long. */
	for (int k = from; k < to; k++) {
		struct read_res *r = &w->res[k];
		struct stat st;
		if (r->open_err || r->err)
			continue;
		if (r->got < w->pend[k].size)
			r->got = read_rest(w, k, r->got); /* a short read is not always the end */
		if (r->got < w->pend[k].size) {
			r->err = -1;
		} else if (!fstatat(w->pend[k].dirfd, w->pend[k].name, &st, AT_SYMLINK_NOFOLLOW)) {
			r->stat_ok = 1;
			r->size = (uint64_t)st.st_size;
			r->mtim = st.st_mtim;
		}
	}
	return ZN_OK;
}

static zn_result uring_run(struct zn_writer *w, int from, int to)
{
	for (int k = from; k < to; k += w->ring_files)
		RETURN_IF_ERROR(uring_part(w, k, ZN_MIN(to, k + w->ring_files)));
	return ZN_OK;
}
#endif

/* Acts on what reading files pend[from..to) into their rooms found (res[]), in order, then
 * judges them and takes the copies' rooms back. With `again` (the crew read them: several
 * threads held a file open at once), a file that found no descriptor left is read again, alone,
 * first. */
static void act_on_reads(struct zn_writer *w, const struct pending *pend, struct read_res *res,
                         int from, int to, crew_fn *again)
{
	for (int k = from; k < to; k++) {
		if (again && (res[k].open_err == EMFILE || res[k].open_err == ENFILE)) {
			w->fd_short = 1;
			again(w, k);
		}
		if (!account(w, &pend[k], &res[k], pend[k].room, 1) && pend[k].size)
			judge(w, pend[k].entry, pend[k].room);
	}
	compact(w, w->pack[0]);
	compact(w, w->pack[1]);
}

/* Reads pend[from..to) into their rooms (through the ring when no crew shares the reads), and
 * acts on what was found. */
static zn_result finish_batch(struct zn_writer *w, int from, int to)
{
	int shared = crew_wanted(w, to - from);
	if (shared) {
		crew_run(w, read_pending, from, to);
	} else {
#ifdef ZN_HAVE_URING
		if (w->ring_ok)
			RETURN_IF_ERROR(uring_run(w, from, to));
		else
#endif
			for (int k = from; k < to; k++)
				read_pending(w, k);
	}
	act_on_reads(w, w->pend, w->res, from, to, shared ? read_pending : NULL);
	return ZN_OK;
}

static void read_fly(struct zn_writer *w, int k)
{
	read_one(&w->fly_pend[k], w->fly_pend[k].room, &w->fly_res[k]);
}

static void close_dirs(const int *fds, int *n)
{
	for (int i = 0; i < *n; i++)
		close(fds[i]);
	*n = 0;
}

/* Gives back the flying batch's directory descriptors. */
static void land_fly(struct zn_writer *w)
{
	close_dirs(w->fly_dirs, &w->nfly_dirs);
	w->fly_to = 0;
}

/* Waits for the crew to read the flying batch (helping), then acts on what it found, in order,
 * as finish_batch does. */
static void settle_fly(struct zn_writer *w)
{
	if (!w->fly_to)
		return;
	crew_wait(w);
	int from = w->fly_from, to = w->fly_to, was = w->flushing;
	w->fly_to = 0; /* landed: nothing settles it again */
	w->flushing = 1;
	act_on_reads(w, w->fly_pend, w->fly_res, from, to, read_fly);
	w->flushing = was;
	land_fly(w);
}

/* Fatal: the flying batch is not acted on, once the crew has left it. */
static void drop_fly(struct zn_writer *w)
{
	if (w->fly_to) {
		atomic_store(&w->crew_next, w->crew_to); /* nobody starts another read */
		crew_wait(w);
	}
	land_fly(w);
}

/* The pending files from..npend, placed, become the flying batch: the crew reads them while
 * the walk goes on, into a new batch. */
#define SWAP(T, a, b)                                                                              \
	do {                                                                                       \
		T t_ = (a);                                                                        \
		(a) = (b);                                                                         \
		(b) = t_;                                                                          \
	} while (0)

static void take_off(struct zn_writer *w, int from)
{
	SWAP(struct pending *, w->pend, w->fly_pend);
	SWAP(struct read_res *, w->res, w->fly_res);
	SWAP(int *, w->pend_dirs, w->fly_dirs);
	SWAP(char *, w->pend_names, w->fly_names);
	SWAP(size_t, w->pend_names_cap, w->fly_names_cap);
	w->nfly_dirs = w->npend_dirs;
	w->npend_dirs = 0;
	w->fly_from = from;
	w->fly_to = w->npend;
	w->npend = 0;
	w->pend_names_len = 0;
	w->pend_src = -1;
	crew_post(w, read_fly, from, w->fly_to, w->fly_to - from);
}

/* Places the pending files in their packers, in the order they were found, and reads them. A
 * file that does not fit is placed after the files before it are read and judged: the copies
 * among them take no room, and it may fit then. With `fly`, the last part is read by the crew
 * while the walk goes on (take_off) where it may be. */
static zn_result read_batch(struct zn_writer *w, int fly)
{
	for (int k = 0; k < w->npend; k++)
		w->pend[k].name = w->pend_names + w->pend[k].name_off;
	int from = 0;
	for (int k = 0; k < w->npend; k++) {
		if (!w->pend[k].size) {
			w->pend[k].room = NULL; /* empty: takes no room, is only opened */
			continue;
		}
		uint64_t idx = w->pend[k].entry, off;
		struct slot *s;
		int full;
		RETURN_IF_ERROR(place_small(w, idx, &s, &off, &full));
		if (full) {
			RETURN_IF_ERROR(finish_batch(w, from, k));
			from = k;
			RETURN_IF_ERROR(place_small(w, idx, &s, &off, &full));
		}
		if (full) {
			RETURN_IF_ERROR(read_aside(w, k));
			from = k + 1;
			continue;
		}
		w->pend[k].room = s->in + off;
	}
	if (fly && !w->pend_borrowed && !w->fd_short && !atomic_load(&w->cancel) &&
	    crew_wanted(w, w->npend - from)) {
		take_off(w, from);
		return ZN_OK;
	}
	return finish_batch(w, from, w->npend);
}

/* Gives back the batch's directory descriptors and names. */
static void clear_pending(struct zn_writer *w)
{
	close_dirs(w->pend_dirs, &w->npend_dirs);
	w->npend = 0;
	w->pend_names_len = 0;
	w->pend_src = -1;
	w->pend_borrowed = 0;
}

/* Fatal: nothing pending is read or acted on. */
static void drop_pending(struct zn_writer *w)
{
	drop_fly(w);
	clear_pending(w);
}

/* The flying batch is acted on, and the pending one placed and read; with `fly` (the batch is
 * full), by the crew while the walk goes on where it may be. */
static zn_result flush_batch(struct zn_writer *w, int fly)
{
	settle_fly(w);
	w->flushing = 1;
	zn_result r = w->npend ? read_batch(w, fly) : ZN_OK;
	w->flushing = 0;
	clear_pending(w); /* what take_off left, or the batch read here */
	return r;
}

/* Every small file found so far is read and acted on. */
static zn_result flush_pending(struct zn_writer *w)
{
	return flush_batch(w, 0);
}

/* A copy of directory descriptor dirfd for the batch, or -1 (none, or the batch holds as many
 * as it may: pend_dirs_max). */
static int pend_dup(struct zn_writer *w, int dirfd)
{
	if (dirfd == AT_FDCWD || w->npend_dirs >= w->pend_dirs_max)
		return -1;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE))
		w->fd_short = 1;
	return fd;
}

/* A batch gathers the small files of many directories (a Maven repository has a few in each),
 * and outlives the walk of each: it reads them through descriptors of its own, one per
 * directory (pend_dirs), and keeps their names. Where no descriptor can be had (too many open,
 * or the working directory itself, AT_FDCWD), it borrows the walk's, and is read before the
 * walk leaves that directory or goes into another (pend_borrowed). Sets *fd to the descriptor
 * to read a file of directory dirfd (the walk's) through. */
static zn_result pend_dir(struct zn_writer *w, int dirfd, int *fd)
{
	if (w->npend && w->pend_src == dirfd) {
		*fd = w->pend_fd;
		return ZN_OK;
	}
	if (w->pend_borrowed)
		RETURN_IF_ERROR(flush_pending(w));
	int own = pend_dup(w, dirfd);
	if (own < 0 && dirfd != AT_FDCWD && w->npend) {
		RETURN_IF_ERROR(flush_pending(w)); /* its descriptors go back */
		own = pend_dup(w, dirfd);
	}
	if (own >= 0) {
		w->pend_dirs[w->npend_dirs++] = own;
	} else {
		RETURN_IF_ERROR(flush_pending(w));
		own = dirfd;
		w->pend_borrowed = 1;
	}
	w->pend_src = dirfd;
	w->pend_fd = *fd = own;
	return ZN_OK;
}

/* A descriptor the walk needs could not be had (err): if for want of descriptors, the batch is
 * read, which gives back those it holds. Whether to try again. */
static int give_back_fds(struct zn_writer *w, int err)
{
	if (err != EMFILE && err != ENFILE)
		return 0;
	w->fd_short = 1;
	if (!w->npend_dirs && !w->nfly_dirs)
		return 0;
	zn_result r = flush_pending(w);
	if (r != ZN_OK)
		set_error(w, r);
	return r == ZN_OK;
}

/* The walk is about to close or replace a directory descriptor, or to open one, whose number
 * may then be one a pending file's directory had. */
static zn_result pend_dir_moves(struct zn_writer *w)
{
	w->pend_src = -1;
	return w->pend_borrowed ? flush_pending(w) : ZN_OK;
}

/* Adds small file idx (its name in its directory, dirfd the walk's) to the batch. */
static zn_result add_pending(struct zn_writer *w, uint64_t idx, int dirfd, const char *name,
                             const struct stat *st)
{
	int fd;
	RETURN_IF_ERROR(pend_dir(w, dirfd, &fd));
	size_t len = strlen(name) + 1;
	if (grow((void **)&w->pend_names, &w->pend_names_cap, w->pend_names_len + len, 1))
		return ZN_ERR_NOMEM;
	struct pending *p = &w->pend[w->npend++];
	p->entry = idx;
	p->dirfd = fd;
	p->name_off = w->pend_names_len;
	memcpy(w->pend_names + w->pend_names_len, name, len);
	w->pend_names_len += len;
	p->size = w->ents[idx].size;
	p->mtim = st->st_mtim;
	return w->npend == w->batch_max ? flush_batch(w, 1) : ZN_OK;
}

/* Stating ahead
 * -------------
 * A directory's names are read and sorted before any is looked at. With a crew, a run of up to
 * STAT_RUN of them that readdir says are not directories is stated in one crew batch, just
 * before the run's turn comes; a directory, or a name of unknown type, is stated when its own
 * turn comes, just before it is walked, as are all names without a crew. */
/* Each name the walk keeps is followed, after its NUL, by its d_type from readdir. */
static int is_leaf(const char *name)
{
	unsigned char t = (unsigned char)name[strlen(name) + 1];
	return t != DT_DIR && t != DT_UNKNOWN;
}

static void stat_one(struct zn_writer *w, int k)
{
	w->run_err[k] = fstatat(w->run_dirfd, w->run_names[k], &w->run_st[k], AT_SYMLINK_NOFOLLOW)
	                        ? errno
	                        : 0;
}

/* States names[i..) ahead if they start a long enough run; returns where the run ends (i if none
 * was stated), and in *next where the next run may start. */
static size_t stat_ahead(struct zn_writer *w, int dirfd, char **names, size_t i, size_t n,
                         size_t *next)
{
	size_t j = i;
	while (j < n && j - i < STAT_RUN && is_leaf(names[j]))
		j++;
	*next = ZN_MAX(j, i + 1);
	if (!crew_wanted(w, (int)(j - i)))
		return i;
	w->run_names = names + i;
	w->run_dirfd = dirfd;
	crew_run(w, stat_one, 0, (int)(j - i));
	/* Storing a large file takes a while: the names after it are stated when it is done. */
	for (size_t k = i; k < j; k++)
		if (!w->run_err[k - i] && S_ISREG(w->run_st[k - i].st_mode) &&
		    (uint64_t)w->run_st[k - i].st_size >= w->opt.chunk_size) {
			*next = j = k + 1;
			break;
		}
	return j;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b); /* byte order */
}

/* A directory being walked. Down to w->walk_levels levels each keeps its descriptor open; below,
 * a directory's descriptor is closed while one of its subdirectories is walked, and opened
 * again afterwards (open_level), so that a tree of any depth needs few (tar archives trees
 * 2,000 deep under a limit of 1,024 open files). */
struct level {
	struct level *up; /* NULL: where a PATH starts, never closed */
	const char *name; /* its name in up (up's list of names stays while it is walked) */
	int fd;           /* -1 while closed */
	dev_t dev;
	ino_t ino;
	size_t rel_len; /* its stored path is pathbuf[0..rel_len) */
};

static zn_result walk(struct zn_writer *w, struct level *parent, const char *name, size_t rel_len,
                      int depth, uint64_t self);

/* Whether st is the directory d names. */
static int same_dir(const struct dev_ino *d, const struct stat *st)
{
	return d->dev == (uint64_t)st->st_dev && d->ino == (uint64_t)st->st_ino;
}

/* Whether directory rel is stored already, as this same directory (its device and inode, not
 * file_ident's hash: a different one is walked, and each file in it named), with its contents
 * walked (create d d, or d d/e): walking it again would only name each of them as given twice. */
static int walked_before(struct zn_writer *w, const char *rel, size_t len, const struct stat *st)
{
	if (!w->paths_cap)
		return 0;
	uint64_t key, *slot = path_slot(w, rel, len, &key);
	if (!*slot)
		return 0;
	uint64_t i = slot_entry(*slot);
	return w->ents[i].type == ZN_TYPE_DIR && w->ents[i].walked && !w->ents[i].dropped &&
	       same_dir(&w->packs[i].dir, st);
}

/* walked_before for a directory with no name of its own (a PATH ".", or "d/..", under -C). */
static int root_walked(const struct zn_writer *w, const struct stat *st)
{
	for (size_t k = 0; k < w->nroots; k++)
		if (same_dir(&w->roots[k], st))
			return 1;
	return 0;
}

/* Adds what `name` in directory `dir` is. Walking a subdirectory below w->walk_levels may
 * replace dir->fd (the same directory, opened again), or leave it -1 if that failed
 * (reported). */
static zn_result add_one(struct zn_writer *w, struct level *dir, const char *name, size_t rel_len,
                         const struct stat *st, int depth)
{
	int dirfd = dir->fd;
	const char *rel = w->pathbuf;
	uint64_t idx;
	if (S_ISDIR(st->st_mode)) {
		if (rel_len ? walked_before(w, rel, rel_len, st) : root_walked(w, st)) {
			report(w, rel_len ? rel : ".", ZN_OK,
			       "given more than once; stored once (the first)");
			return ZN_OK;
		}
		if (rel_len) {
			RETURN_IF_ERROR(new_entry(w, rel, rel_len, ZN_TYPE_DIR, st, &idx));
			if (idx != NO_ENTRY)
				fill_stat(w, &w->ents[idx], st);
		}
		if (w->opt.no_recursion && depth == 0)
			return ZN_OK; /* the PATH itself, not what is in it */
		zn_result r = walk(w, dir, name, rel_len, depth + 1, rel_len ? idx : NO_ENTRY);
		const struct dev_ino here = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
		if (!rel_len &&
		    !grow((void **)&w->roots, &w->roots_cap, w->nroots + 1, sizeof(*w->roots)))
			w->roots[w->nroots++] = here;
		if (rel_len && idx != NO_ENTRY) {
			w->ents[idx].walked = 1;
			w->packs[idx].dir = here;
		}
		return r;
	}
	if (!rel_len)
		return ZN_OK;
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target));
		if (n < 0 || n == sizeof(target)) {
			report_errno(w, rel, "cannot read symlink", n < 0 ? errno : ENAMETOOLONG);
			return ZN_OK;
		}
		RETURN_IF_ERROR(new_entry(w, rel, rel_len, ZN_TYPE_SYMLINK, st, &idx));
		if (idx == NO_ENTRY)
			return ZN_OK;
		fill_stat(w, &w->ents[idx], st);
		return set_link(w, &w->ents[idx], target, (size_t)n);
	}
	if (!S_ISREG(st->st_mode)) {
		char msg[64];
		snprintf(msg, sizeof(msg), "not a regular file, directory or symlink; skipped");
		report(w, rel, ZN_ERR_UNSUPPORTED, msg);
		w->input_err = ZN_ERR_IO; /* an input left out, like one that cannot be read */
		return ZN_OK;
	}
	if ((w->out_ino && st->st_ino == w->out_ino && st->st_dev == w->out_dev) ||
	    (w->skip_ino && st->st_ino == w->skip_ino && st->st_dev == w->skip_dev)) {
		report(w, rel, ZN_OK, "is the archive being written; skipped");
		return ZN_OK;
	}
	RETURN_IF_ERROR(new_entry(w, rel, rel_len, ZN_TYPE_FILE, st, &idx));
	if (idx == NO_ENTRY)
		return ZN_OK; /* given before: its content is not read again */
	struct went *e = &w->ents[idx];
	fill_stat(w, e, st);
	if (st->st_nlink > 1) {
		int64_t first = inode_lookup(w, st, idx);
		if (first >= 0) {
			e->type = ZN_TYPE_HARDLINK;
			e->link_entry = first;
			e->link = w->ents[first].path; /* the same string, which never moves */
			e->link_len = w->ents[first].path_len;
			return ZN_OK;
		}
	}
	e->type = ZN_TYPE_FILE;
	e->size = (uint64_t)st->st_size;
	e->has_digest = w->opt.digest == ZN_DIGEST_SHA256;
	/* Small files are read in batches, in the order found; an empty one is opened there all
	 * the same, to know that it can be (before, the batch was read before each empty file: a
	 * tree with 4% of its files empty took 1.37x as long, docs/BENCHMARKS.md). */
	if (e->size < w->opt.chunk_size) {
		if (!e->size && e->has_digest)
			zn_sha256("", 0, e->sha);
		return add_pending(w, idx, dirfd, name, st);
	}
	RETURN_IF_ERROR(flush_pending(w));
	/* O_NONBLOCK: if a FIFO replaced the file since the scan, reading it fails at once
	 * instead of waiting for a writer (no effect on regular files). */
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		report_open_failure(w, &w->ents[idx], errno, NULL);
		return ZN_OK;
	}
	struct stat fst;
	if (fstat(fd, &fst) || !S_ISREG(fst.st_mode) || fst.st_ino != st->st_ino ||
	    fst.st_dev != st->st_dev) {
		/* Replaced since the directory was read (by a FIFO, another file, ...). */
		report(w, rel, ZN_ERR_CHANGED, "replaced while being archived; not stored");
		w->input_err = ZN_ERR_IO;
		w->ents[idx].dropped = 1;
		close(fd);
		return ZN_OK;
	}
	struct source src = {.fd = fd, .mtim = st->st_mtim};
	if (e->size >= w->opt.chunk_size)
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	zn_result r = emit_content(w, idx, &src); /* and checks it unchanged after */
	close(fd);
	return r;
}

/* Whether fd is the directory that level l was when the walk went through it. */
static int is_level(int fd, const struct level *l)
{
	struct stat now;
	return !fstat(fd, &now) && now.st_dev == l->dev && now.st_ino == l->ino;
}

/* Level l (closed) opened again by its name from the nearest level above that is open, each
 * step checked to be the directory the walk went through; -1 with *err set (0: one of them was
 * moved or replaced meanwhile). */
static int open_level(const struct level *l, int *err)
{
	if (!l->up) { /* not reached: a PATH's start is never closed */
		*err = EBADF;
		return -1;
	}
	int pfd = l->up->fd;
	if (pfd < 0 && (pfd = open_level(l->up, err)) < 0)
		return -1;
	int fd = openat(pfd, l->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	*err = errno;
	if (pfd != l->up->fd)
		close(pfd);
	if (fd >= 0 && !is_level(fd, l)) {
		close(fd);
		*err = 0;
		return -1;
	}
	return fd;
}

/* Gives level l (closed while its subdirectory `child` was walked) its descriptor again: through
 * the child's "..", or else down from the levels above. If neither reaches the same directory,
 * the rest of l is not stored, and the error says so. */
static void reopen_level(struct zn_writer *w, const struct level *child, struct level *l)
{
	int fd = child->fd < 0 ? -1 : openat(child->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && is_level(fd, l)) {
		l->fd = fd;
		return;
	}
	if (fd >= 0)
		close(fd);
	int err;
	if ((l->fd = open_level(l, &err)) >= 0)
		return;
	char msg[256];
	snprintf(msg, sizeof(msg), "%s%s; the rest of it is not stored",
	         err ? "cannot open it again after a subdirectory: " : "moved while being archived",
	         err ? strerror(err) : "");
	char keep = w->pathbuf[l->rel_len];
	w->pathbuf[l->rel_len] = 0;
	report(w, l->rel_len ? w->pathbuf : ".", ZN_ERR_IO, msg);
	w->pathbuf[l->rel_len] = keep;
	w->input_err = ZN_ERR_IO;
}

/* Walks directory `name` in parent, whose entry is `self` (NO_ENTRY: it has none). */
static zn_result walk(struct zn_writer *w, struct level *parent, const char *name, size_t rel_len,
                      int depth, uint64_t self)
{
	RETURN_IF_ERROR(pend_dir_moves(w));
	struct level me = {.up = parent, .name = name, .rel_len = rel_len};
	const int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	me.fd = openat(parent->fd, name, dflags);
	int err = me.fd < 0 ? errno : 0;
	if (me.fd < 0 && give_back_fds(w, err)) {
		me.fd = openat(parent->fd, name, dflags);
		err = me.fd < 0 ? errno : 0;
	}
	if (me.fd < 0) {
		report_errno(w, rel_len ? w->pathbuf : name, "cannot open directory; not stored",
		             err);
		/* Left out, as tar leaves it out, not stored as an empty directory: its contents
		 * are not in the archive. */
		if (self != NO_ENTRY)
			w->ents[self].dropped = 1;
		return ZN_OK;
	}
	struct stat here;
	if (fstat(me.fd, &here))
		memset(&here, 0, sizeof(here));
	me.dev = here.st_dev;
	me.ino = here.st_ino;
	/* Deep down, the parent's descriptor is given back while this directory is walked. */
	int parent_closed = depth > w->walk_levels && parent->up && parent->fd >= 0;
	if (parent_closed) {
		close(parent->fd);
		parent->fd = -1;
	}
	DIR *d = fdopendir(me.fd);
	if (!d) {
		report_errno(w, w->pathbuf, "cannot read directory", errno);
		if (parent_closed)
			reopen_level(w, &me, parent);
		close(me.fd);
		return ZN_OK;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	zn_result r = ZN_OK;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		size_t len = strlen(de->d_name);
		if (grow((void **)&names, &cap, n + 1, sizeof(char *)) ||
		    !(names[n] = malloc(len + 2))) {
			r = ZN_ERR_NOMEM;
			goto out;
		}
		memcpy(names[n], de->d_name, len + 1);
		names[n][len + 1] = (char)de->d_type; /* see is_leaf */
		n++;
	}
	if (n)
		qsort(names, n, sizeof(char *), cmp_names);
	/* The names are read: the directory is used through a descriptor of its own, which the
	 * walks of subdirectories may replace. */
	me.fd = fcntl(dirfd(d), F_DUPFD_CLOEXEC, 0);
	err = me.fd < 0 ? errno : 0;
	if (me.fd < 0 && give_back_fds(w, err)) {
		me.fd = fcntl(dirfd(d), F_DUPFD_CLOEXEC, 0);
		err = me.fd < 0 ? errno : 0;
	}
	if (me.fd < 0) {
		report_errno(w, w->pathbuf, "cannot read directory", err);
		goto out;
	}
	closedir(d);
	d = NULL;
	size_t run_from = 0, run_to = 0, next_run = 0; /* names[run_from..run_to) stated ahead */
	for (size_t i = 0; i < n && r == ZN_OK && me.fd >= 0; i++) {
		size_t nlen = strlen(names[i]);
		size_t child_len = rel_len + (rel_len ? 1 : 0) + nlen;
		if (grow((void **)&w->pathbuf, &w->pathbuf_cap, child_len + 1, 1)) {
			r = ZN_ERR_NOMEM;
			break;
		}
		if (rel_len)
			w->pathbuf[rel_len] = '/';
		memcpy(w->pathbuf + rel_len + (rel_len ? 1 : 0), names[i], nlen + 1);
		if (i >= run_to && i >= next_run) {
			run_from = i;
			run_to = stat_ahead(w, me.fd, names, i, n, &next_run);
		}
		struct stat st;
		err = 0;
		if (i < run_to) {
			st = w->run_st[i - run_from];
			err = w->run_err[i - run_from];
		} else if (fstatat(me.fd, names[i], &st, AT_SYMLINK_NOFOLLOW)) {
			err = errno;
		}
		if (!err && S_ISDIR(st.st_mode) && i < run_to) {
			/* Not a directory when read: its walk may state runs of its own, so the
			 * rest of this run is stated again. */
			run_to = i + 1;
			next_run = i + 1;
		}
		if (err == ENOENT) {
			report_removed(w, w->pathbuf);
		} else if (err) {
			report_errno(w, w->pathbuf, "cannot stat", err);
		} else if (w->opt.one_file_system && S_ISDIR(st.st_mode) &&
		           st.st_dev != here.st_dev) {
			/* A mount point: the directory alone. Only directories are tested, as tar
			 * does: a file bind-mounted in place (a container's /etc/hosts), or one of
			 * an overlay's lower layer, is an ordinary member of its directory. */
			uint64_t idx;
			if ((!w->filter || w->filter(w->hook_ctx, w->pathbuf, 1)) &&
			    (r = new_entry(w, w->pathbuf, child_len, ZN_TYPE_DIR, &st, &idx)) ==
			            ZN_OK &&
			    idx != NO_ENTRY)
				fill_stat(w, &w->ents[idx], &st);
		} else if (!w->filter || w->filter(w->hook_ctx, w->pathbuf, S_ISDIR(st.st_mode))) {
			r = add_one(w, &me, names[i], child_len, &st, depth);
		}
		w->pathbuf[rel_len] = 0;
		if (atomic_load(&w->cancel) && r == ZN_OK)
			r = first_error(w);
	}
	if (r == ZN_OK)
		r = pend_dir_moves(w); /* the directory is about to go */
	else
		drop_pending(w); /* fatal: nothing more is read */
	if (parent_closed)
		reopen_level(w, &me, parent);
	if (me.fd >= 0)
		close(me.fd);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (d) { /* the names could not be read or kept: nothing of them is stored */
		if (parent_closed) {
			me.fd = dirfd(d);
			reopen_level(w, &me, parent);
		}
		closedir(d);
	}
	return r;
}

/* The stored name of a filesystem path: without a leading '/' or "." parts, and without
 * everything up to a last ".." (as tar). */
static size_t normalize_name(const char *in, char *out)
{
	size_t o = 0;
	const char *p = in;
	while (*p) {
		while (*p == '/')
			p++;
		const char *q = p;
		while (*q && *q != '/')
			q++;
		size_t len = (size_t)(q - p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			o = 0; /* as tar: everything up to the last ".." goes */
		else if (len && !(len == 1 && p[0] == '.')) {
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = q;
	}
	out[o] = 0;
	return o;
}

/* ------------------------------------------------------------------------------------------------
 * Public API
 * ---------------------------------------------------------------------------------------------- */

void zn_create_options_init(struct zn_create_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->level = ZN_LEVEL_DEFAULT;
	opt->threads = 0;
	opt->chunk_size = ZN_CHUNK_SIZE_DEFAULT;
	opt->memory_limit = 256u << 20;
	opt->digest = ZN_DIGEST_SHA256;
}

/* The pipeline needs this many buffers of a chunk and its compressed bound to overlap reading,
 * compressing and writing. */
#define ZN_MIN_SLOTS 4

/* How many directories a batch of small files may hold open (pend_dup): half of what the limit
 * on descriptors leaves after those open now, twice the walk's levels (each may hold two for a
 * moment), one for each thread's read, and 32 for the caller (half: the batch filling and the one
 * the crew reads hold theirs at once); none if that cannot be told. Should the caller open more
 * meanwhile, the walk has the batches give back their own when it finds none left
 * (give_back_fds), and no batch flies after that (fd_short). */
static int fd_budget(const struct zn_writer *w, const struct rlimit *nofile)
{
	if (nofile->rlim_cur == RLIM_INFINITY)
		return PEND_DIRS;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	uint64_t open_now = 0;
	while (readdir(d))
		open_now++;
	closedir(d); /* it counted ".", ".." and its own */
	uint64_t used = open_now + 2ull * (uint64_t)w->walk_levels + w->opt.threads + 32;
	return used >= nofile->rlim_cur ? 0 : (int)ZN_MIN(PEND_DIRS, (nofile->rlim_cur - used) / 2);
}

uint64_t zn_create_memory_min(uint64_t chunk_size)
{
	return ZN_MIN_SLOTS * (chunk_size + ZSTD_compressBound(chunk_size));
}

zn_result zn_writer_open(struct zn_writer **out, int fd, const struct zn_create_options *opt_in)
{
	if (!out)
		return ZN_ERR_INVALID_ARG;
	*out = NULL;
	if (fd < 0)
		return ZN_ERR_INVALID_ARG;
	struct zn_create_options opt;
	if (opt_in)
		opt = *opt_in;
	else
		zn_create_options_init(&opt);
	if (opt.level < ZN_LEVEL_MIN || opt.level > ZN_LEVEL_MAX || opt.chunk_size < ZN_CHUNK_SIZE_MIN ||
	    opt.chunk_size > ZN_CHUNK_SIZE_MAX ||
	    (opt.digest != ZN_DIGEST_NONE && opt.digest != ZN_DIGEST_SHA256))
		return ZN_ERR_INVALID_ARG;
	if (!opt.memory_limit)
		opt.memory_limit = 256u << 20;
	if (!opt.threads)
		opt.threads = zn_cpu_count();
	if (opt.threads > ZN_THREADS_MAX)
		opt.threads = ZN_THREADS_MAX;
	if (opt.digest != ZN_DIGEST_SHA256)
		opt.no_dedup = 1; /* copies are confirmed by their digests */
	if (opt.memory_limit < zn_create_memory_min(opt.chunk_size))
		return ZN_ERR_INVALID_ARG; /* a smaller bound could not be kept */

	struct stat ost;
	int regular = !fstat(fd, &ost) && S_ISREG(ost.st_mode);
	/* Offsets count from the archive's start: that of the file. */
	if (regular &&
	    (lseek(fd, 0, SEEK_CUR) > 0 || ((fcntl(fd, F_GETFL) & O_APPEND) && ost.st_size)))
		return ZN_ERR_INVALID_ARG;
	/* A file that holds an archive already (opened without O_TRUNC) is emptied now: written
	 * over from its start, it would keep the old index and footer until the new ones land, and
	 * read as the old archive after a write that failed or was given up. */
	if (regular && ost.st_size && ftruncate(fd, 0))
		return ZN_ERR_IO;
	struct zn_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return ZN_ERR_NOMEM;
	w->opt = opt;
	w->fd = fd;
	w->pend_src = -1;
	w->pend = w->pend_store[0];
	w->fly_pend = w->pend_store[1];
	w->res = w->res_store[0];
	w->fly_res = w->res_store[1];
	w->pend_dirs = w->dirs_store[0];
	w->fly_dirs = w->dirs_store[1];
	/* A quarter of the open-file limit for the directories a walk keeps open, at most 64: deep
	 * trees under `ulimit -n 1024` as tar, and under much lower limits too. */
	struct rlimit nofile;
	w->walk_levels = 64;
	if (getrlimit(RLIMIT_NOFILE, &nofile))
		nofile.rlim_cur = 0; /* unknown: no batch holds descriptors (fd_budget) */
	else if (nofile.rlim_cur != RLIM_INFINITY)
		w->walk_levels = (int)ZN_MAX(4, ZN_MIN(64, nofile.rlim_cur / 4));
	if (regular) {
		w->out_dev = ost.st_dev;
		w->out_ino = ost.st_ino;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv_free, NULL);
	pthread_cond_init(&w->cv_work, NULL);
	pthread_cond_init(&w->cv_done, NULL);
	pthread_cond_init(&w->cv_span, NULL);
	pthread_mutex_init(&w->crew_mu, NULL);
	pthread_cond_init(&w->crew_go, NULL);
	pthread_cond_init(&w->crew_idle, NULL);

	uint64_t per_slot = opt.chunk_size + ZSTD_compressBound(opt.chunk_size);
	uint64_t want = 2ull * opt.threads + 2, fit = opt.memory_limit / per_slot;
	w->nslots = (unsigned)ZN_MIN(want, fit);
	w->slots = calloc(w->nslots, sizeof(*w->slots));
	for (unsigned i = 0; w->slots && i < w->nslots; i++)
		w->slots[i].rfd = -1;
	w->queue = calloc(w->nslots, sizeof(*w->queue));
	w->workers = calloc(opt.threads, sizeof(pthread_t));
	w->names = NULL;
	if (!w->slots || !w->queue || !w->workers || intern_name(w, "") != 0 || !w->names) {
		zn_writer_free(w);
		return ZN_ERR_NOMEM;
	}
	w->eio_at = UINT64_MAX;
#ifdef ZN_TEST_HOOKS
	if (getenv("ZN_TEST_WRITER_EIO_AT"))
		w->eio_at = strtoull(getenv("ZN_TEST_WRITER_EIO_AT"), NULL, 10);
#endif
#ifdef ZN_HAVE_URING
	int want_uring = !opt.no_uring;
#ifdef ZN_TEST_HOOKS
	if (getenv("ZN_DISABLE_URING") && *getenv("ZN_DISABLE_URING") == '1')
		want_uring = 0;
#endif
	if (want_uring && !io_uring_queue_init(BATCH * 4, &w->ring, 0)) {
		/* as many slots as a batch has files; fewer under a low ulimit -n */
		for (int n = BATCH; n >= 16 && !w->ring_ok; n /= 4)
			if (!io_uring_register_files_sparse(&w->ring, (unsigned)n)) {
				w->ring_ok = 1;
				w->ring_files = n;
			}
		if (!w->ring_ok)
			io_uring_queue_exit(&w->ring);
	}
#endif
	w->pend_dirs_max = fd_budget(w, &nofile);
	w->batch_max = opt.threads > 1 ? BATCH : BATCH_ALONE;
	/* The file header. */
	uint8_t hdr[ZN_HEADER_SIZE] = {0};
	memcpy(hdr, ZN_MAGIC, ZN_MAGIC_LEN);
	zn_put_le32(hdr + 8, ZN_FORMAT_VERSION);
	if (zn_write_all(fd, hdr, sizeof(hdr)) != ZN_OK) {
		int err = errno; /* why, for the caller (the header says so) */
		zn_writer_free(w);
		errno = err;
		return ZN_ERR_IO;
	}
	w->file_off = ZN_HEADER_SIZE;
	for (unsigned i = 0; i < opt.threads; i++) {
		if (pthread_create(&w->workers[i], NULL, worker_main, w))
			break;
		w->workers_started++;
	}
	if (w->workers_started == 0 || pthread_create(&w->writer_thread, NULL, writer_main, w)) {
		zn_writer_free(w);
		return ZN_ERR_NOMEM;
	}
	w->writer_started = 1;
	if (opt.digest == ZN_DIGEST_SHA256) {
		if (pthread_create(&w->hasher_thread, NULL, hasher_main, w)) {
			zn_writer_free(w);
			return ZN_ERR_NOMEM;
		}
		w->hasher_started = 1;
	}
	*out = w;
	return ZN_OK;
}

void zn_writer_set_hooks(struct zn_writer *w, zn_problem_fn problem, zn_filter_fn filter,
                         zn_progress_fn progress, void *ctx)
{
	if (!w)
		return;
	w->problem = problem;
	w->filter = filter;
	w->progress = progress;
	w->hook_ctx = ctx;
}

void zn_writer_set_meta_hook(struct zn_writer *w, zn_meta_fn meta, void *ctx)
{
	if (!w)
		return;
	w->meta = meta;
	w->meta_ctx = ctx;
}

/* Whether the filter keeps a PATH stored as w->pathbuf: it and each directory above it in
 * the stored path, as a walk would have asked on its way down (an excluded directory takes
 * everything below it along, even when given by a PATH of its own). */
static int filter_path(struct zn_writer *w, size_t rel_len, int is_dir)
{
	char *p = w->pathbuf;
	for (size_t i = 0; i < rel_len; i++) {
		if (p[i] != '/')
			continue;
		p[i] = 0;
		int keep = w->filter(w->hook_ctx, p, 1);
		p[i] = '/';
		if (!keep)
			return 0;
	}
	return w->filter(w->hook_ctx, p, is_dir);
}

static zn_result add_path(struct zn_writer *w, const char *fs_path, const char *name);

zn_result zn_writer_add_path(struct zn_writer *w, const char *fs_path, const char *name)
{
	/* From a hook during a walk: the walk's own path buffer and batch are in use. */
	if (!w || !fs_path || w->finished || w->in_add_path)
		return ZN_ERR_INVALID_ARG;
	if (atomic_load(&w->cancel))
		return first_error(w);
	w->in_add_path = 1;
	zn_result r = add_path(w, fs_path, name);
	w->in_add_path = 0;
	return r;
}

static zn_result add_path(struct zn_writer *w, const char *fs_path, const char *name)
{
	const char *src = name ? name : fs_path;
	if (grow((void **)&w->pathbuf, &w->pathbuf_cap, strlen(src) + 2, 1))
		return ZN_ERR_NOMEM;
	size_t rel_len = normalize_name(src, w->pathbuf);
	for (const char *p = src; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == src || p[-1] == '/') && (!p[2] || p[2] == '/')) {
			report(w, src, ZN_OK, "stored without the part up to its last '..'");
			break;
		}
	/* Trailing slashes go before the lstat, so that "link/" is the symlink, as it is for
	 * the later open (which never follows one). */
	char *copy = strdup(fs_path);
	if (!copy)
		return ZN_ERR_NOMEM;
	size_t len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = 0;
	struct stat st;
	if (lstat(copy, &st)) {
		report_errno(w, fs_path, "cannot stat", errno);
		free(copy);
		return ZN_OK;
	}
	if (!rel_len && !S_ISDIR(st.st_mode)) {
		/* Only a directory may have no name of its own (its entries go to the top). */
		free(copy);
		return ZN_ERR_INVALID_ARG;
	}
	if (rel_len && w->filter && !filter_path(w, rel_len, S_ISDIR(st.st_mode))) {
		free(copy);
		return ZN_OK;
	}
	/* Open the parent directory so every later lookup is relative to a descriptor. O_PATH:
	 * it is only passed through, so it needs no read permission (as tar archives a PATH below
	 * a 0711 home directory). */
	char *slash = strrchr(copy, '/');
	const char *base = copy;
	int dirfd = AT_FDCWD;
	if (slash) {
		*slash = 0;
		base = slash + 1;
		dirfd = open(slash == copy ? "/" : copy, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0) {
			report_errno(w, fs_path, "cannot open parent directory", errno);
			free(copy);
			return ZN_OK;
		}
	}
	if (!*base) /* fs_path is "/" */
		base = ".";
	zn_result r;
	if (S_ISDIR(st.st_mode) && slash && !*(slash + 1)) {
		struct level top = {.fd = AT_FDCWD};
		r = walk(w, &top, "/", 0, 0, NO_ENTRY);
	} else {
		struct level top = {.fd = dirfd};
		r = add_one(w, &top, base, rel_len, &st, 0);
	}
	if (r == ZN_OK)
		r = flush_pending(w); /* before the parent directory's descriptor goes */
	else
		drop_pending(w); /* fatal: nothing more is read */
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	if (r != ZN_OK)
		set_error(w, r); /* inputs that cannot be read are reported, not returned: this is
		                    fatal, and zn_writer_finish() must not complete the archive */
	else if (atomic_load(&w->cancel))
		r = first_error(w);
	return r;
}

/* Adds entry e, whose content (a file's) comes from src. */
static zn_result add_entry(struct zn_writer *w, const struct zn_entry *e, struct source *src)
{
	if (!w || !e || !e->path || w->finished || e->type > ZN_TYPE_HARDLINK)
		return ZN_ERR_INVALID_ARG;
	if (atomic_load(&w->cancel))
		return first_error(w);
	if (!zn_path_is_safe(e->path, e->path_len))
		return ZN_ERR_UNSAFE_PATH;
	/* From a filter hook during a walk: placed after every file found before it (whatever the
	 * batches), and never while a batch's rooms are being read into. Not from a problem hook
	 * while a batch is acted on. */
	if (w->flushing)
		return ZN_ERR_INVALID_ARG;
	zn_result r = flush_pending(w);
	if (r != ZN_OK) {
		set_error(w, r); /* fatal, as in zn_writer_add_path */
		return r;
	}
	if (e->path_len > UINT32_MAX || e->link_len > UINT32_MAX ||
	    (e->type == ZN_TYPE_FILE && e->size > (uint64_t)PTRDIFF_MAX &&
	     !(e->size == ZN_SIZE_UNKNOWN && src->read)))
		return ZN_ERR_LIMIT;
	if ((e->type == ZN_TYPE_SYMLINK || e->type == ZN_TYPE_HARDLINK) &&
	    (!e->link || !e->link_len || memchr(e->link, 0, e->link_len)))
		return ZN_ERR_INVALID_ARG;
	/* A hardlink names an entry of the archive: a stored path. */
	if (e->type == ZN_TYPE_HARDLINK && !zn_path_is_safe(e->link, e->link_len))
		return ZN_ERR_UNSAFE_PATH;
	if (e->type == ZN_TYPE_FILE && e->size && !src->mem && !src->read)
		return ZN_ERR_INVALID_ARG;
	/* Owner names: at most 255 bytes and no NUL (the name table holds C strings); refused
	 * rather than cut short. */
	if ((e->uname && (e->uname_len > 255 || memchr(e->uname, 0, e->uname_len))) ||
	    (e->gname && (e->gname_len > 255 || memchr(e->gname, 0, e->gname_len))))
		return ZN_ERR_INVALID_ARG;
	uint64_t idx;
	RETURN_IF_ERROR(new_entry(w, e->path, e->path_len, (int)e->type, NULL, &idx));
	if (idx == NO_ENTRY)
		return ZN_OK; /* given before: named through the problem hook, data not taken */
	struct went *d = &w->ents[idx];
	d->mode = e->mode & 07777;
	d->uid = e->uid;
	d->gid = e->gid;
	char tmp[256];
	size_t ul = ZN_MIN(e->uname_len, sizeof(tmp) - 1);
	memcpy(tmp, e->uname ? e->uname : "", e->uname ? ul : 0);
	tmp[e->uname ? ul : 0] = 0;
	d->uname = intern_name(w, tmp);
	size_t gl = ZN_MIN(e->gname_len, sizeof(tmp) - 1);
	memcpy(tmp, e->gname ? e->gname : "", e->gname ? gl : 0);
	tmp[e->gname ? gl : 0] = 0;
	w->ents[idx].gname = intern_name(w, tmp);
	d = &w->ents[idx];
	d->mtime_ns = e->mtime_ns;
	if (e->type == ZN_TYPE_SYMLINK || e->type == ZN_TYPE_HARDLINK) {
		r = set_link(w, d, e->link, e->link_len);
	} else if (e->type == ZN_TYPE_FILE) {
		d->size = e->size;
		d->has_digest = w->opt.digest == ZN_DIGEST_SHA256;
		r = emit_content(w, idx, src);
	}
	/* A stream that failed leaves its entry out and the writer sound (the header says so); any
	 * other failure from here on (memory) leaves a half-made entry: fatal, the first error
	 * wins, as in zn_writer_add_path. */
	if (r != ZN_OK && !w->ents[idx].dropped)
		set_error(w, r);
	return r;
}

zn_result zn_writer_add_memory(struct zn_writer *w, const struct zn_entry *e, const void *data)
{
	struct source src = {.fd = -1, .mem = data};
	return add_entry(w, e, &src);
}

static int64_t read_nothing(void *ctx, void *buf, size_t n)
{
	(void)ctx, (void)buf, (void)n;
	return 0;
}

zn_result zn_writer_add_stream(struct zn_writer *w, const struct zn_entry *e, zn_read_fn read,
                               void *ctx)
{
	/* An entry with no content to read (not a file, or an empty one) needs no `read`. */
	if (!read && e && e->type == ZN_TYPE_FILE && e->size)
		return ZN_ERR_INVALID_ARG;
	struct source src = {.fd = -1, .read = read ? read : read_nothing, .rctx = ctx};
	return add_entry(w, e, &src);
}

/* ------------------------------------------------------------------------------------------------
 * Finishing: the index and the footer
 * ---------------------------------------------------------------------------------------------- */

static int cmp_entries(const void *a, const void *b, void *ctx)
{
	const struct went *ents = ctx;
	const struct went *x = &ents[*(const uint64_t *)a];
	const struct went *y = &ents[*(const uint64_t *)b];
	size_t n = ZN_MIN(x->path_len, y->path_len);
	int c = memcmp(x->path, y->path, n);
	if (c)
		return c;
	if (x->path_len != y->path_len)
		return x->path_len < y->path_len ? -1 : 1;
	return 0; /* not reached: paths are unique */
}

static void stop_threads(struct zn_writer *w)
{
	crew_stop(w);
	pthread_mutex_lock(&w->mu);
	w->producer_done = 1;
	pthread_cond_broadcast(&w->cv_work);
	pthread_cond_broadcast(&w->cv_done);
	pthread_cond_broadcast(&w->cv_span);
	pthread_mutex_unlock(&w->mu);
	if (w->writer_started) {
		pthread_join(w->writer_thread, NULL);
		w->writer_started = 0;
	}
	if (w->hasher_started) {
		pthread_join(w->hasher_thread, NULL);
		w->hasher_started = 0;
	}
	for (unsigned i = 0; i < w->workers_started; i++)
		pthread_join(w->workers[i], NULL);
	w->workers_started = 0;
}

/* The row whose path is p in rows order[0..m), sorted by path; NULL if none. */
static const struct went *find_row(const struct zn_writer *w, const uint64_t *order, size_t m,
                                   const char *p, size_t len)
{
	size_t lo = 0, hi = m;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct went *t = &w->ents[order[mid]];
		int c = memcmp(t->path, p, ZN_MIN(t->path_len, len));
		if (!c)
			c = t->path_len < len ? -1 : t->path_len > len;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct went *t = lo < m ? &w->ents[order[lo]] : NULL;
	return t && t->path_len == len && !memcmp(t->path, p, len) ? t : NULL;
}

/* The index on its way to the archive: written as it comes, hashed page by page. */
struct index_out {
	int fd;
	uint64_t len;
	uint8_t page[ZN_IX_PAGE];
	size_t fill; /* bytes of the current page so far */
	uint8_t *sums;
	size_t npages;
};

static int index_begin(void *ctx, size_t total)
{
	struct index_out *io = ctx;
	io->sums = malloc((total + ZN_IX_PAGE - 1) / ZN_IX_PAGE * 8 + 8);
	return !io->sums;
}

static int index_put(void *ctx, const void *p, size_t n)
{
	struct index_out *io = ctx;
	if (zn_write_all(io->fd, p, n) != ZN_OK)
		return -1;
	io->len += n;
	for (const uint8_t *q = p; n;) {
		size_t k = ZN_MIN(n, sizeof(io->page) - io->fill);
		memcpy(io->page + io->fill, q, k);
		io->fill += k;
		q += k;
		n -= k;
		if (io->fill == sizeof(io->page)) {
			zn_put_le64(io->sums + io->npages++ * 8, zn_xxh3(io->page, io->fill));
			io->fill = 0;
		}
	}
	return 0;
}

/* Row i of the index: entry order[i] (rows are made one at a time, not held in an array). */
struct row_source {
	const struct zn_writer *w;
	const uint64_t *order;
};

static void index_row_of(const void *ctx, uint64_t i, struct zn_index_row *r)
{
	const struct row_source *rs = ctx;
	const struct went *e = &rs->w->ents[rs->order[i]];
	*r = (struct zn_index_row){
	        .path = e->path,
	        .path_len = e->path_len,
	        .type = e->type,
	        .mode = e->mode,
	        .uid = e->uid,
	        .gid = e->gid,
	        .uname = rs->w->names[e->uname],
	        .gname = rs->w->names[e->gname],
	        .mtime_ns = e->mtime_ns,
	        .size = e->size,
	        .link = e->link,
	        .link_len = e->link_len,
	        .sha = e->sha,
	        .first_block = e->size ? e->first_block : 0,
	        .block_offset = e->size ? e->block_offset : 0,
	};
}

/* A name the meta hook gave, as an id in the name table. */
static zn_result meta_name(struct zn_writer *w, const char *name, size_t len, uint32_t *id)
{
	char tmp[256];
	if (!name || !len) {
		*id = 0;
		return ZN_OK;
	}
	if (len >= sizeof(tmp) || memchr(name, 0, len))
		return ZN_ERR_INVALID_ARG;
	memcpy(tmp, name, len);
	tmp[len] = 0;
	*id = intern_name(w, tmp);
	return *id ? ZN_OK : ZN_ERR_NOMEM; /* id 0 is "" */
}

/* The meta hook (zn_writer_set_meta_hook) over the rows, in path order. */
static zn_result apply_meta_hook(struct zn_writer *w, const uint64_t *order, size_t m)
{
	for (size_t i = 0; i < m && w->meta; i++) {
		struct went *d = &w->ents[order[i]];
		const char *un = w->names[d->uname], *gn = w->names[d->gname];
		struct zn_entry e = {
		        .path = d->path,
		        .path_len = d->path_len,
		        .type = d->type,
		        .mode = d->mode,
		        .uid = d->uid,
		        .gid = d->gid,
		        .uname = un,
		        .uname_len = strlen(un),
		        .gname = gn,
		        .gname_len = strlen(gn),
		        .mtime_ns = d->mtime_ns,
		        .size = d->size,
		        .link = d->link,
		        .link_len = d->link_len,
		        .has_digest = d->has_digest,
		};
		memcpy(e.sha256, d->sha, 32);
		w->meta(w->meta_ctx, &e);
		d->mode = e.mode & 07777;
		d->uid = e.uid;
		d->gid = e.gid;
		d->mtime_ns = e.mtime_ns;
		zn_result r = meta_name(w, e.uname, e.uname_len, &d->uname);
		if (r == ZN_OK)
			r = meta_name(w, e.gname, e.gname_len, &d->gname);
		if (r == ZN_ERR_INVALID_ARG) /* the hook's mistake: say which entry it was */
			report(w, d->path, r,
			       "the meta hook gave an owner name over 255 bytes or holding a NUL; "
			       "no archive is written");
		if (r != ZN_OK)
			return r;
	}
	return ZN_OK;
}

/* Once the threads are joined and the digests harvested, the pipeline's buffers and the sets
 * that found copies and hardlinks are done with: freed before the index is built, the peak of
 * a create of many files (and by zn_writer_free, whatever the writer got to). */
static void drop_work_memory(struct zn_writer *w)
{
	for (unsigned i = 0; w->slots && i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		if (s->rfd >= 0)
			close(s->rfd); /* not harvested: the create failed */
		s->rfd = -1;
		zn_big_free(s->in, w->opt.chunk_size);
		free(s->out);
		free(s->segs);
		s->in = s->out = NULL;
		s->segs = NULL;
		s->nsegs = s->segs_cap = 0;
	}
	free(w->contents);
	free(w->larges);
	free(w->lsums);
	free(w->lwait);
	free(w->aside);
	ZSTD_freeCCtx(w->sample_cctx);
	free(w->sample_buf);
	w->sample_cctx = NULL;
	w->sample_buf = NULL;
	free(w->inodes);
	free(w->paths);
	free(w->packs);
	w->packs = NULL;
	w->packs_cap = 0;
	w->contents = w->larges = w->lsums = w->lwait = w->paths = NULL;
	w->aside = NULL;
	w->inodes = NULL;
	w->contents_cap = w->larges_cap = w->lsums_cap = w->lwait_cap = w->paths_cap = 0;
	w->ncontents = w->nlarges = w->nlsums = w->nlwait = w->inodes_cap = w->ninodes = 0;
}

zn_result zn_writer_finish(struct zn_writer *w)
{
	if (!w || w->finished)
		return ZN_ERR_INVALID_ARG;
	w->finished = 1;
	zn_result pr = atomic_load(&w->cancel) ? ZN_OK : flush_pending(w);
	drop_pending(w);
	if (pr != ZN_OK)
		set_error(w, pr);
	for (int k = 0; k < 2; k++) {
		struct slot *s = w->pack[k];
		if (s && s->usize && !atomic_load(&w->cancel))
			queue_slot(w, s);
		else if (s)
			release_slot(w, s); /* only copies went into it, or cancelled: no block */
		w->pack[k] = NULL;
	}
	stop_threads(w);
	if (w->err != ZN_OK)
		return w->err;
	if (w->write_seq > UINT32_MAX)
		return ZN_ERR_LIMIT; /* first_block is a u32 (256 TiB in the smallest blocks) */

	/* Digests computed by the workers land in the entries now that every thread is joined (and
	 * what the writer's own reads found: before the hardlinks to a file it could not read), */
	for (unsigned i = 0; i < w->nslots; i++)
		harvest(w, &w->slots[i]);
	/* a hardlink to a file that could not be read goes with it, */
	for (size_t i = 0; i < w->nents; i++) {
		struct went *e = &w->ents[i];
		if (!e->dropped && left_out(w, e)) {
			e->dropped = 1;
			if (w->ents[e->link_entry].dropped == DROPPED_REMOVED)
				report(w, e->path, ZN_ERR_CHANGED,
				       "hardlink to a file removed before we read it; not stored");
			else
				report(w, e->path, ZN_ERR_IO,
				       "hardlink to a file that could not be read; not stored");
		}
	}
	/* and a file stored once for several takes the place and digest of its first copy. */
	for (size_t i = 0; i < w->nents; i++) {
		struct went *e = &w->ents[i];
		if (e->dup_of >= 0) {
			const struct went *o = &w->ents[e->dup_of];
			e->first_block = o->first_block;
			e->block_offset = o->block_offset;
			memcpy(e->sha, o->sha, 32);
		}
	}

	drop_work_memory(w);

	/* Rows: entries sorted by path, dropped ones left out (paths are unique: new_entry). */
	uint64_t *order = malloc((w->nents ? w->nents : 1) * sizeof(uint64_t));
	if (!order)
		return ZN_ERR_NOMEM;
	size_t m = 0;
	for (size_t i = 0; i < w->nents; i++)
		if (!w->ents[i].dropped)
			order[m++] = i;
	qsort_r(order, m, sizeof(uint64_t), cmp_entries, w->ents);
	/* An entry below one that is not a directory ("a" a file or symlink, and "a/b") could
	 * never be extracted: it is left out and named. In path order a nearest existing
	 * ancestor comes first, so it is settled (kept, or left out for the same reason). */
	const struct went *prev = NULL; /* the last entry checked, and what its ancestors gave */
	size_t prev_parent = 0;
	const char *below_why = NULL;
	for (size_t i = 0; i < m; i++) {
		struct went *e = &w->ents[order[i]];
		size_t parent = e->path_len;
		while (parent && e->path[parent - 1] != '/')
			parent--;
		/* Siblings (adjacent in path order) share the verdict: no search at all. */
		if (!prev || parent != prev_parent || memcmp(e->path, prev->path, parent)) {
			below_why = NULL;
			for (size_t len = parent; len;) {
				const struct went *a = find_row(w, order, m, e->path, --len);
				if (a && a->dropped)
					below_why = "below a path that was left out; not stored";
				else if (a && a->type != ZN_TYPE_DIR)
					below_why = "below a path of the archive that is not a "
					            "directory; not stored";
				if (a)
					break; /* the nearest existing ancestor settles it */
				while (len && e->path[len - 1] != '/')
					len--; /* no entry of its own: look further up */
			}
			prev = e;
			prev_parent = parent;
		}
		if (below_why) {
			e->dropped = 1;
			report(w, e->path, ZN_ERR_EXISTS, below_why);
			w->input_err = ZN_ERR_IO;
		}
	}
	/* Hardlinks that readers could not resolve are left out, and named: one found on disk
	 * whose target the pass above left out, and one added from memory whose target path is
	 * not a regular file of the archive. The same pass drops the rows the pass above left
	 * out. */
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		const struct went *e = &w->ents[order[i]];
		if (e->dropped)
			continue;
		const char *why = NULL;
		zn_result code = ZN_ERR_NOT_FOUND;
		if (e->type == ZN_TYPE_HARDLINK && e->link_entry >= 0 &&
		    w->ents[e->link_entry].dropped) {
			why = "hardlink to a file that was left out (below a non-directory); not "
			      "stored";
			code = ZN_ERR_EXISTS;
		} else if (e->type == ZN_TYPE_HARDLINK && e->link_entry < 0) {
			const struct went *t = find_row(w, order, m, e->link, e->link_len);
			if (!t || t->dropped || t->type != ZN_TYPE_FILE)
				why = "hardlink target is not a file in the archive; not stored";
		}
		if (why) {
			report(w, e->path, code, why);
			w->input_err = ZN_ERR_IO;
			continue;
		}
		order[k++] = order[i];
	}
	m = k;
	zn_result mr = apply_meta_hook(w, order, m);
	if (mr != ZN_OK) {
		free(order);
		return mr;
	}

	struct zn_index_input in = {
	        .nrows = m,
	        .nblocks = w->write_seq,
	        .blocks = w->blocks,
	        .chunk_size = w->opt.chunk_size,
	        .level = w->opt.level,
	        .digest = w->opt.digest,
	};
	memset(&w->stats, 0, sizeof(w->stats));
	for (size_t i = 0; i < m; i++) {
		const struct went *e = &w->ents[order[i]];
		in.content_bytes += e->size;
		w->stats.files += e->type == ZN_TYPE_FILE;
		w->stats.dirs += e->type == ZN_TYPE_DIR;
		w->stats.symlinks += e->type == ZN_TYPE_SYMLINK;
		w->stats.hardlinks += e->type == ZN_TYPE_HARDLINK;
		w->stats.duplicates += e->dup_of >= 0;
	}
	struct row_source rs = {w, order};
	in.get_row = index_row_of;
	in.row_ctx = &rs;
	/* Zero bytes up to a multiple of 64, so that the index's columns, 8-aligned within it,
	 * are aligned in the file too (Arrow asks for 8 bytes, 64 recommended). */
	static const uint8_t zeros[ZN_INDEX_ALIGN];
	const uint64_t pad = (ZN_INDEX_ALIGN - w->file_off % ZN_INDEX_ALIGN) % ZN_INDEX_ALIGN;
	const uint64_t index_off = w->file_off + pad;
	zn_result r = zn_write_all(w->fd, zeros, pad);
	/* The index goes out column by column, its page checksums (docs/FORMAT.md: a reader checks
	 * only the pages it touches) taken on the way. */
	struct index_out io = {.fd = w->fd};
	const struct zn_index_sink sink = {index_begin, index_put, &io};
	if (r == ZN_OK)
		r = zn_index_emit(&in, &sink);
	free(order);
	if (r == ZN_OK && io.fill) /* the last, partial page */
		zn_put_le64(io.sums + io.npages++ * 8, zn_xxh3(io.page, io.fill));
	const uint64_t index_len = io.len;
	uint8_t foot[ZN_FOOTER_SIZE] = {0};
	zn_put_le64(foot + 0, index_off);
	zn_put_le64(foot + 8, index_len);
	zn_put_le64(foot + 16, zn_xxh3(io.sums ? io.sums : zeros, io.npages * 8));
	zn_put_le64(foot + 24, m);
	zn_put_le64(foot + 32, w->write_seq);
	zn_put_le32(foot + 40, ZN_FORMAT_VERSION);
	zn_put_le64(foot + 48, zn_xxh3(foot, 48));
	memcpy(foot + 56, ZN_FOOTER_MAGIC, 8);
	if (r == ZN_OK)
		r = zn_write_all(w->fd, io.sums, io.npages * 8);
	if (r == ZN_OK)
		r = zn_write_all(w->fd, foot, sizeof(foot));
	/* The archive's size, and the file's: zn_writer_open emptied a file that held more. */
	const uint64_t end = index_off + index_len + io.npages * 8 + ZN_FOOTER_SIZE;
	if (r == ZN_ERR_IO && !w->out_errno)
		w->out_errno = errno;
	free(io.sums);
	w->stats.entries = m;
	w->stats.content_bytes = in.content_bytes;
	w->stats.archive_bytes = end;
	w->stats.blocks = w->write_seq;
	w->stats.stored_blocks = w->stored_blocks;
	w->stats.index_bytes = index_len;
	if (r != ZN_OK)
		return r;
	w->stats.complete = 1;
	return w->input_err;
}

void zn_writer_stats(const struct zn_writer *w, struct zn_write_stats *st)
{
	if (!w || !st)
		return;
	*st = w->stats;
	st->write_errno = w->out_errno;
}

void zn_writer_skip_inode(struct zn_writer *w, uint64_t dev, uint64_t ino)
{
	if (!w)
		return;
	w->skip_dev = (dev_t)dev;
	w->skip_ino = (ino_t)ino;
}

void zn_writer_free(struct zn_writer *w)
{
	if (!w)
		return;
	drop_pending(w); /* first: the crew may be reading into a slot */
	if (w->writer_started || w->workers_started || w->hasher_started) {
		set_error(w, ZN_ERR_CANCELED);
		stop_threads(w);
	}
#ifdef ZN_HAVE_URING
	if (w->ring_ok)
		io_uring_queue_exit(&w->ring);
#endif
	drop_work_memory(w);
	for (struct strchunk *c = w->strs, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	for (uint32_t i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	free(w->ents);
	free(w->slots);
	free(w->queue);
	free(w->workers);
	free(w->blocks);
	free(w->pathbuf);
	free(w->roots);
	free(w->pend_names);
	free(w->fly_names);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv_free);
	pthread_cond_destroy(&w->cv_work);
	pthread_cond_destroy(&w->cv_done);
	pthread_cond_destroy(&w->cv_span);
	pthread_mutex_destroy(&w->crew_mu);
	pthread_cond_destroy(&w->crew_go);
	pthread_cond_destroy(&w->crew_idle);
	free(w);
}
