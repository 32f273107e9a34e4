/* SPDX-License-Identifier: MIT */
/* archive_pipeline.c - the writer's blocks: compressed, hashed and written in order on the pool.
 *
 * The pipeline
 * ------------
 * A fixed set of slots carries the blocks. A slot is one block in the making: an input buffer of
 * chunk_size bytes, an output buffer big enough for zstd's worst case, and the list of file
 * pieces ("segments") that the block holds. Everything runs on the writer's job pool
 * (lib/common/pool.h): `threads` threads for the jobs, and the caller's (with one thread, the
 * caller's alone):
 *
 *   producer (the caller of zn_writer_add_*): walks the tree in byte order of names, decides
 *       where every file's bytes go and reads them straight into a slot's input buffer. Files
 *       smaller than chunk_size are packed together into "solid" blocks; larger files are cut
 *       into chunk_size blocks of their own. Two packers exist: one for data worth compressing
 *       and one for known-compressed types (jar, png, gz, ...), whose blocks are stored as they
 *       are. A full block gets the next sequence number and a compression job (wr_queue_slot).
 *       A large file's chunk that is to be stored as it is (a known-compressed type, or samples
 *       that do not shrink) is not read by the producer: the output job reads it (rfd).
 *   compression jobs (one per block): XXH3-64 of the block, SHA-256 of each file wholly inside
 *       it, and zstd (or, from a cheap sample, the decision to store it). Any number at once.
 *   the span job (at most one at a time, with digests): the SHA-256 of a file cut into several
 *       blocks is one chain through them, in order: each block holding such pieces carries a
 *       "span sequence" number, and the span job feeds its one SHA-256 context from the block
 *       with the next number, for as long as the next one is there, then ends. It runs beside
 *       the compression of the same blocks (both only read `in`).
 *   the output job (at most one at a time): writes finished blocks in sequence order, each at a
 *       multiple of 64, from the output buffer, or straight from the input buffer when the block
 *       is stored (no copy), records the block table and frees the slot, for as long as the next
 *       block is done, then ends. A chunk left to it (rfd) it reads from the file itself, 128 KiB
 *       at a time, each piece written while in the cache, as cp does; the slot then goes to the
 *       span job (WRITTEN) and is freed once hashed.
 *   the crew (archive_batch.c): jobs that share the producer's stats and reads of small files
 *       while no compression job waits.
 *
 * Nobody waits for a stage: whoever makes the next block ready for the output (the compression
 * job that finishes it, the span job that hashes its last piece) starts the output job if it is
 * not running (advance), and likewise for the span job; each runs while there is work in order
 * and then ends, under the pipeline's lock so that no block is left behind. Both are queued
 * ahead of the compression jobs (zn_pool_add_first): the blocks they wait for hold slots that
 * the producer needs. With one thread the pool runs every job at once on the caller's thread:
 * -T1 is one thread, the same stages in the same order. The producer waits only for a free
 * slot, or for a large file's digest (dedup), and sleeps meanwhile. It does not take
 * compression jobs: while it ran one it could not fill the next slot, and the job threads ran
 * out of work.
 *
 * Memory is bounded by the number of slots (about twice the threads, capped by memory_limit): the
 * producer waits when no slot is free, which is the backpressure. Block boundaries depend only on
 * the order and sizes of the inputs, never on timing, so the archive is byte-identical whatever
 * the thread count. The first error wins: it is recorded under the lock and the cancel flag makes
 * every job skip its work, while still passing its slot on, so that nothing leaks or waits.
 *
 * Deadlock freedom: no job ever waits, and the producer holds at most three slots while filling
 * (two packers and one chunk of a large file) of at least four, so a slot not FILLING is queued,
 * being worked on or waiting for the output. Every queued block has a sequence number below the
 * producer's next one, so the output's next block is always queued or done, and every job
 * needed to get it there has been added to the pool. Span numbers are given in sequence order,
 * so when the span job needs a chunk the output job reads, every block before it is written or
 * on its way, and the output job gets there.
 */
#include "archive_writer.h"

/* Where the three samples of a block of n bytes start; 0 if it is too small to be sampled. */
int wr_sample_starts(uint64_t n, uint64_t starts[3])
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
int wr_samples_say_store(ZSTD_CCtx *cctx, const uint8_t *const p[3], uint8_t *tmp, size_t tmp_cap)
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
	if (!wr_sample_starts(n, at))
		return 0;
	const uint8_t *const p[3] = {in + at[0], in + at[1], in + at[2]};
	return wr_samples_say_store(cctx, p, tmp, tmp_cap);
}

/* ------------------------------------------------------------------------------------------------
 * Errors, and the CPU time of each stage
 * ---------------------------------------------------------------------------------------------- */

/* The CPU time this thread spent in stage work it counted so far (all stages). Two clock reads
 * per job: CLOCK_THREAD_CPUTIME_ID is a system call (about 0.3 us here), against a job's
 * milliseconds. */
static _Thread_local uint64_t counted_ns;

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct wr_clock wr_clock_start(void)
{
	return (struct wr_clock){thread_cpu_ns(), counted_ns};
}

void wr_clock_stop(struct wr_clock c, atomic_uint_fast64_t *stage)
{
	uint64_t total = thread_cpu_ns() - c.start, inside = counted_ns - c.nested;
	atomic_fetch_add_explicit(stage, total > inside ? total - inside : 0, memory_order_relaxed);
	counted_ns = c.nested + total;
}

void wr_set_error(struct zn_writer *w, zn_result r)
{
	pthread_mutex_lock(&w->pipe.mu);
	if (w->pipe.err == ZN_OK)
		w->pipe.err = r;
	atomic_store(&w->pipe.cancel, 1);
	pthread_cond_broadcast(&w->pipe.cv);
	pthread_mutex_unlock(&w->pipe.mu);
	if (w->pipe.pool)
		zn_pool_fail(w->pipe.pool, r);
}

zn_result wr_first_error(struct zn_writer *w)
{
	pthread_mutex_lock(&w->pipe.mu);
	zn_result r = w->pipe.err;
	pthread_mutex_unlock(&w->pipe.mu);
	return r;
}

static int canceled(const struct zn_writer *w)
{
	return atomic_load(&w->pipe.cancel);
}

/* ------------------------------------------------------------------------------------------------
 * Starting the stages in order
 * ---------------------------------------------------------------------------------------------- */

static void output_job(void *arg);
static void span_job(void *arg);

/* The block the output job writes next, if it is done; mu held. */
static struct slot *next_to_write(struct wr_pipe *p)
{
	for (unsigned i = 0; i < p->nslots; i++)
		if (p->slots[i].state == SLOT_DONE && p->slots[i].seq == p->write_seq)
			return &p->slots[i];
	return NULL;
}

/* The block whose pieces the span job hashes next, if its bytes are there: a block the producer
 * filled, from when it is queued, or a chunk the output job read, once written; mu held. */
static struct slot *next_to_hash(struct wr_pipe *p)
{
	for (unsigned i = 0; i < p->nslots; i++) {
		struct slot *s = &p->slots[i];
		/* The state first: the producer writes the other fields while FILLING. */
		if (((s->state == SLOT_QUEUED && s->rfd < 0) || s->state == SLOT_WRITTEN) &&
		    s->span_seq == p->span_turn && !s->hashed)
			return s;
	}
	return NULL;
}

/* Starts the output job and the span job if they have work in order and are not running. Called
 * by whoever may have given them some (mu not held). */
static void advance(struct zn_writer *w)
{
	struct wr_pipe *p = &w->pipe;
	pthread_mutex_lock(&p->mu);
	int out = !p->writing && next_to_write(p);
	int span = !p->hashing && next_to_hash(p);
	p->writing |= out;
	p->hashing |= span;
	pthread_mutex_unlock(&p->mu);
	if (out)
		zn_pool_add_first(p->pool, output_job, w);
	if (span)
		zn_pool_add_first(p->pool, span_job, w);
}

/* One of a slot's two jobs is through (worked or hashed, mu held): DONE after both. */
static void slot_through(struct wr_pipe *p, struct slot *s)
{
	if (s->worked && s->hashed) {
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&p->cv); /* settle_digest may wait for it */
	}
}

/* ------------------------------------------------------------------------------------------------
 * Compression jobs
 * ---------------------------------------------------------------------------------------------- */

static void compress_slot(struct zn_writer *w, struct slot *s, struct wr_cctx *c)
{
	int digest = w->opt.digest == ZN_DIGEST_SHA256;
	s->xxh3 = zn_xxh3(s->in, s->usize);
	if (digest) /* pieces of longer files: the span job's */
		for (size_t i = 0; i < s->nsegs; i++) {
			struct seg *g = &s->segs[i];
			if (g->first && g->last)
				zn_sha256(s->in + g->off, g->len, g->sha);
		}
	wr_pkg_whole(s, &c->pkg);

	s->codec = ZN_BLOCK_STORED;
	s->csize = s->usize;
	s->cxxh3 = s->xxh3;
	if (s->klass == CLASS_STORE || s->usize == 0)
		return;
	if (!s->sampled && sample_says_store(c->cctx, s->in, s->usize, c->tmp, c->tmp_cap))
		return;
	size_t cap = ZSTD_compressBound(w->opt.chunk_size);
	size_t r = ZSTD_compress2(c->cctx, s->out, cap, s->in, s->usize);
	if (ZSTD_isError(r)) {
		wr_set_error(w, ZN_ERR_CODEC);
		return;
	}
	/* Keep the compressed form only if it saves at least 3%. */
	if ((uint64_t)r * 100 <= s->usize * 97) {
		s->codec = ZN_BLOCK_ZSTD;
		s->csize = r;
		s->cxxh3 = zn_xxh3(s->out, r);
	}
}

/* A compression context, made on first use: the level's search parameters, with a window as
 * large as the block. A block is decoded into one buffer anyway, so the window costs the decoder
 * nothing. On /usr/include, 4 MiB blocks with level 3's own 2 MiB window came to 1.075x the size
 * of one `zstd -3` stream of the whole tar; with a 4 MiB window, 1.042x (8 MiB blocks: 0.97x,
 * but random access then decodes twice as much). Storing identical files once gained most of
 * what larger blocks did. The default is 1 MiB blocks: 0.947x there (2 MiB: 0.928x), and `cat`
 * of the file that ends a block, which decodes all of it, takes 2.7-4.3 ms on a 2.45 GHz Zen 3
 * where 2 MiB blocks took 4.6-6.4 ms, for 1.2% more bytes there (docs/BENCHMARKS.md). */
static int cctx_ready(struct zn_writer *w, struct wr_cctx *c)
{
	if (c->cctx)
		return 1;
	c->cctx = ZSTD_createCCtx();
	c->tmp_cap = ZSTD_compressBound(SAMPLE_PIECE);
	c->tmp = malloc(c->tmp_cap);
	if (!c->cctx || !c->tmp)
		return 0;
	int wlog = 10;
	while (wlog < 28 && (1ull << wlog) < w->opt.chunk_size)
		wlog++;
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, w->opt.level);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog, wlog);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 0);
	return 1;
}

static void compress_job(void *arg)
{
	struct slot *s = arg;
	struct zn_writer *w = s->writer;
	struct wr_pipe *p = &w->pipe;
	struct wr_clock clock = wr_clock_start();
	pthread_mutex_lock(&p->mu);
	p->waiting--;
	/* At most as many jobs run at once as the pool has threads (the caller runs some once it
	 * waits for the pool at the end), and there is a context for each. */
	struct wr_cctx *c = &p->cctx[p->free_ctx[--p->nfree_ctx]];
	pthread_mutex_unlock(&p->mu);

	if (!canceled(w)) {
		if (cctx_ready(w, c))
			compress_slot(w, s, c);
		else
			wr_set_error(w, ZN_ERR_NOMEM);
	}

	pthread_mutex_lock(&p->mu);
	p->free_ctx[p->nfree_ctx++] = (unsigned)(c - p->cctx);
	s->worked = 1;
	slot_through(p, s);
	pthread_mutex_unlock(&p->mu);
	wr_clock_stop(clock, &p->cpu_compress);
	advance(w);
}

/* ------------------------------------------------------------------------------------------------
 * The span job
 * ---------------------------------------------------------------------------------------------- */

static void hash_span_pieces(struct zn_writer *w, struct slot *s)
{
	for (size_t i = 0; i < s->nsegs; i++) {
		struct seg *g = &s->segs[i];
		if (g->first && g->last && s->rfd < 0)
			continue; /* a whole file: its compression job's */
		if (g->first)
			SHA256_Init(&w->pipe.span_ctx);
		SHA256_Update(&w->pipe.span_ctx, s->in + g->off, g->len);
		if (g->last)
			SHA256_Final(g->sha, &w->pipe.span_ctx);
	}
}

/* Hashes the pieces of multi-block files, block after block in span order, while the next one
 * is there (with 2 threads on random data, taking turns on the chain between jobs left it idle
 * between pieces: 0.40 s for 477 MB, against 0.28 s of hashing; one job runs it through). */
static void span_job(void *arg)
{
	struct zn_writer *w = arg;
	struct wr_pipe *p = &w->pipe;
	struct wr_clock clock = wr_clock_start();
	pthread_mutex_lock(&p->mu);
	for (struct slot *s; (s = next_to_hash(p));) {
		pthread_mutex_unlock(&p->mu);
		if (!canceled(w))
			hash_span_pieces(w, s);
		pthread_mutex_lock(&p->mu);
		p->span_turn++;
		s->hashed = 1;
		if (s->state == SLOT_WRITTEN) {
			s->state = SLOT_FREE;
			pthread_cond_broadcast(&p->cv);
		} else {
			slot_through(p, s);
		}
		pthread_mutex_unlock(&p->mu);
		advance(w); /* the output job may have been waiting for this block */
		pthread_mutex_lock(&p->mu);
	}
	p->hashing = 0;
	pthread_mutex_unlock(&p->mu);
	wr_clock_stop(clock, &p->cpu_span);
}

/* ------------------------------------------------------------------------------------------------
 * The output job
 * ---------------------------------------------------------------------------------------------- */

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
	if (!w->pipe.out_errno)
		w->pipe.out_errno = errno;
	wr_set_error(w, ZN_ERR_IO);
}

/* Up to n bytes of the file at off, fewer only at its end. 0 or an errno value. */
int wr_pread_upto(int fd, uint8_t *dst, uint64_t n, uint64_t off, uint64_t *got)
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

/* A stored chunk the output job reads itself (slot.rfd): read, write, next piece. A read that
 * fails or ends early leaves zeros for the rest (the block's size is fixed), and harvest tells. */
static void copy_through(struct zn_writer *w, struct slot *s)
{
	for (uint64_t off = 0; off < s->usize;) {
		uint64_t n = ZN_MIN(ZN_WRITE_PIECE, s->usize - off), got = 0;
		if (!s->rerr && s->roff + off + n > w->pipe.eio_at)
			s->rerr = EIO; /* a test's (ZN_TEST_WRITER_EIO_AT) */
		if (!s->rerr) {
			s->rerr = wr_pread_upto(s->rfd, s->in + off, n, s->roff + off, &got);
			if (!s->rerr && got < n)
				s->rerr = -1;
		}
		if (got < n)
			memset(s->in + off + got, 0, n - got);
		if (canceled(w))
			return;
		if (zn_write_all(w->fd, s->in + off, n) != ZN_OK) {
			out_failed(w);
			return;
		}
		off += n;
	}
	s->xxh3 = s->cxxh3 = zn_xxh3(s->in, s->usize);
}

static void write_block(struct zn_writer *w, struct slot *s)
{
	struct wr_pipe *p = &w->pipe;
	/* Each block at a multiple of 64 in the archive. The kernel copies a write into the page
	 * cache with `rep movsb`, which on AMD Zen 3 took 1.6x as long for a destination 16 bytes
	 * past a multiple of 64 from a source at one (500 MB into tmpfs: 0.51 against 0.32 s): the
	 * 16-byte header put every stored block there. Extraction reads blocks at these offsets. */
	static const uint8_t zeros[ZN_BLOCK_ALIGN];
	const uint64_t pad = (ZN_BLOCK_ALIGN - p->file_off % ZN_BLOCK_ALIGN) % ZN_BLOCK_ALIGN;
	if (!canceled(w) && zn_write_all(w->fd, zeros, pad) != ZN_OK)
		out_failed(w);
	p->file_off += pad;
	const uint8_t *data = s->codec == ZN_BLOCK_STORED ? s->in : s->out; /* stored: no copy */
	if (s->rfd >= 0)
		copy_through(w, s);
	else if (!canceled(w) && zn_write_all(w->fd, data, s->csize) != ZN_OK)
		out_failed(w);
	if (wr_grow((void **)&p->blocks, &p->blocks_cap, p->write_seq + 1, sizeof(*p->blocks))) {
		wr_set_error(w, ZN_ERR_NOMEM);
		return;
	}
	struct zn_blockinfo *b = &p->blocks[p->write_seq];
	b->offset = p->file_off;
	b->csize = s->csize;
	b->usize = s->usize;
	b->codec = (uint8_t)s->codec;
	b->xxh3 = s->xxh3;
	b->cxxh3 = s->cxxh3;
	p->file_off += s->csize;
	p->stored_blocks += s->codec == ZN_BLOCK_STORED;
	p->written_content += s->usize;
}

/* Writes the done blocks in sequence order while the next one is done. */
static void output_job(void *arg)
{
	struct zn_writer *w = arg;
	struct wr_pipe *p = &w->pipe;
	struct wr_clock clock = wr_clock_start();
	pthread_mutex_lock(&p->mu);
	for (struct slot *s; (s = next_to_write(p));) {
		pthread_mutex_unlock(&p->mu);
		write_block(w, s);
		if (!canceled(w))
			wr_pkg_pieces(w, s);
		if (w->hook.progress && !canceled(w))
			w->hook.progress(w->hook.ctx,
			                 p->written_content + atomic_load(&p->shared_bytes), 0);
		pthread_mutex_lock(&p->mu);
		/* Segs' digests go to harvest(); a chunk read here goes on to the span job. */
		s->state = s->rfd < 0 || s->hashed ? SLOT_FREE : SLOT_WRITTEN;
		p->write_seq++;
		pthread_cond_broadcast(&p->cv);
		if (s->state == SLOT_WRITTEN) {
			pthread_mutex_unlock(&p->mu);
			advance(w); /* the span job may have been waiting for this chunk */
			pthread_mutex_lock(&p->mu);
		}
	}
	p->writing = 0;
	pthread_mutex_unlock(&p->mu);
	wr_clock_stop(clock, &p->cpu_output);
}

/* ------------------------------------------------------------------------------------------------
 * The producer's side: taking, filling and queueing slots
 * ---------------------------------------------------------------------------------------------- */

/* As tar: whether a file's size or modification time (size, sec.nsec after its read) differs
 * from what the walk saw (its entry's size, `before`). One that shrank was told already. */
int wr_changed(const struct went *e, uint64_t size, const struct timespec *before, int64_t sec,
               int64_t nsec)
{
	return !e->shrunk && (size != e->size || sec != before->tv_sec || nsec != before->tv_nsec);
}

/* What the output job's read of a chunk found (slot.rfd), told as the producer's own reads tell
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
	           wr_changed(e, (uint64_t)st.st_size, &s->rmtim, st.st_mtim.tv_sec,
	                      st.st_mtim.tv_nsec)) {
		what = "file changed as we read it; stored as read";
	}
	if (what && w->hook.problem)
		w->hook.problem(w->hook.ctx, e->path, s->rerr > 0 ? ZN_ERR_IO : ZN_ERR_CHANGED,
		                what);
	if (s->rerr)
		w->input_err = ZN_ERR_IO;
	close(s->rfd);
	s->rfd = -1;
}

/* The digests the jobs computed for a written slot go to its files' entries (the producer's),
 * before the slot is filled again or once every job has returned. */
void wr_harvest(struct zn_writer *w, struct slot *s)
{
	if (s->rfd >= 0 && s->nsegs)
		settle_read(w, s);
	for (size_t i = 0; i < s->nsegs; i++) {
		struct seg *g = &s->segs[i];
		struct went *e = &w->ents[g->entry];
		if (g->last && w->opt.digest == ZN_DIGEST_SHA256)
			memcpy(e->sha, g->sha, 32);
		if (g->pkg) {
			free(e->pkg);
			e->pkg = g->pkg;
			g->pkg = NULL;
		}
	}
	s->nsegs = 0;
}

/* Waits (mu held) until done(p, ctx) or an error. */
void wr_wait_for(struct zn_writer *w, int (*done)(const struct wr_pipe *, const void *),
                 const void *ctx)
{
	struct wr_pipe *p = &w->pipe;
	while (!done(p, ctx) && !canceled(w))
		pthread_cond_wait(&p->cv, &p->mu);
}

static struct slot *free_slot(const struct wr_pipe *p)
{
	for (unsigned i = 0; i < p->nslots; i++)
		if (p->slots[i].state == SLOT_FREE)
			return &p->slots[i];
	return NULL;
}

static int some_slot_free(const struct wr_pipe *p, const void *ctx)
{
	(void)ctx;
	return free_slot(p) != NULL;
}

zn_result wr_acquire_slot(struct zn_writer *w, int klass, struct slot **out)
{
	struct wr_pipe *p = &w->pipe;
	pthread_mutex_lock(&p->mu);
	wr_wait_for(w, some_slot_free, NULL);
	struct slot *s = canceled(w) ? NULL : free_slot(p);
	zn_result r = s ? ZN_OK : p->err;
	if (s)
		s->state = SLOT_FILLING;
	pthread_mutex_unlock(&p->mu);
	if (!s)
		return r;
	if (!s->in) {
		/* On huge pages: reading 500 MB of random data into 4 KiB pages took 9% longer
		 * (0.613 -> 0.559 s median of 9, -T2), src and small 6-7% (docs/BENCHMARKS.md). The
		 * output buffer on huge pages measured within the noise, so it stays on malloc. */
		s->in = zn_big_alloc(w->opt.chunk_size);
		s->out = malloc(ZSTD_compressBound(w->opt.chunk_size));
		if (!s->in || !s->out) {
			wr_set_error(w, ZN_ERR_NOMEM);
			return ZN_ERR_NOMEM;
		}
	}
	wr_harvest(w, s);
	s->klass = klass;
	s->sampled = 0;
	s->rerr = 0;
	s->usize = 0;
	s->nsegs_checked = 0;
	s->span_seq = -1;
	s->gen = ++p->fills;
	*out = s;
	return ZN_OK;
}

/* Give back a slot the producer took but will not queue (it holds no block). */
void wr_release_slot(struct zn_writer *w, struct slot *s)
{
	pthread_mutex_lock(&w->pipe.mu);
	s->state = SLOT_FREE;
	pthread_cond_broadcast(&w->pipe.cv);
	pthread_mutex_unlock(&w->pipe.mu);
}

/* Give a filled slot its sequence number and its jobs. */
void wr_queue_slot(struct zn_writer *w, struct slot *s)
{
	struct wr_pipe *p = &w->pipe;
	int spanning = s->rfd >= 0; /* the span job hashes what the output read, whole or not */
	for (size_t i = 0; i < s->nsegs; i++)
		spanning |= !(s->segs[i].first && s->segs[i].last);
	pthread_mutex_lock(&p->mu);
	s->seq = p->next_seq++;
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].first)
			w->ents[s->segs[i].entry].first_block = (uint32_t)s->seq;
	s->span_seq = spanning && w->opt.digest == ZN_DIGEST_SHA256 ? p->next_span_seq++ : -1;
	s->hashed = s->span_seq < 0;
	int compress = s->rfd < 0;
	if (compress) {
		s->state = SLOT_QUEUED;
		s->worked = 0;
		p->waiting++;
	} else { /* nothing to compress: straight to the output */
		s->state = SLOT_DONE;
		s->worked = 1;
		s->codec = ZN_BLOCK_STORED;
		s->csize = s->usize;
	}
	pthread_mutex_unlock(&p->mu);
	if (compress)
		zn_pool_add(p->pool, compress_job, s);
	advance(w);
}

/* Whether compression jobs wait for a thread (the crew then leaves the cores to them). */
int wr_jobs_waiting(struct zn_writer *w)
{
	pthread_mutex_lock(&w->pipe.mu);
	int behind = w->pipe.waiting > 0;
	pthread_mutex_unlock(&w->pipe.mu);
	return behind;
}

zn_result wr_add_seg(struct zn_writer *w, struct slot *s, uint64_t entry, uint64_t len, int first,
                     int last)
{
	if (wr_grow((void **)&s->segs, &s->segs_cap, s->nsegs + 1, sizeof(*s->segs)))
		return ZN_ERR_NOMEM;
	struct seg *g = &s->segs[s->nsegs++];
	g->entry = entry;
	g->off = s->usize;
	g->len = len;
	g->first = (uint8_t)first;
	g->last = (uint8_t)last;
	const struct went *e = &w->ents[entry];
	g->pkg_kind = e->pkg_kind;
	g->path = e->path;
	g->path_len = e->path_len;
	g->fsize = e->size;
	g->pkg = NULL;
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Making and ending the pipeline
 * ---------------------------------------------------------------------------------------------- */

zn_result wr_pipe_open(struct zn_writer *w)
{
	struct wr_pipe *p = &w->pipe;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->eio_at = UINT64_MAX;
#ifdef ZN_TEST_HOOKS
	if (getenv("ZN_TEST_WRITER_EIO_AT"))
		p->eio_at = strtoull(getenv("ZN_TEST_WRITER_EIO_AT"), NULL, 10);
#endif
	const struct zn_create_options *o = &w->opt;
	uint64_t per_slot = o->chunk_size + ZSTD_compressBound(o->chunk_size);
	uint64_t want = 2ull * o->threads + 2, fit = o->memory_limit / per_slot;
	p->nslots = (unsigned)ZN_MIN(want, fit);
	p->slots = calloc(p->nslots, sizeof(*p->slots));
	for (unsigned i = 0; p->slots && i < p->nslots; i++) {
		p->slots[i].rfd = -1;
		p->slots[i].writer = w;
	}
	/* The queue never fills: a compression job per slot, an output and a span job, and the
	 * crew's few per batch (wr_crew_post). */
	unsigned pool_threads = o->threads > 1 ? o->threads + 1 : 1; /* the caller's counted */
	RETURN_IF_ERROR(
	        zn_pool_new(&p->pool, pool_threads, p->nslots + 8 * (size_t)o->threads + 8));
	p->ncctx = zn_pool_threads(p->pool);
	p->cctx = calloc(p->ncctx, sizeof(*p->cctx));
	p->free_ctx = calloc(p->ncctx, sizeof(*p->free_ctx));
	if (!p->slots || !p->cctx || !p->free_ctx)
		return ZN_ERR_NOMEM;
	for (unsigned i = 0; i < p->ncctx; i++)
		p->free_ctx[p->nfree_ctx++] = i;
	p->file_off = ZN_HEADER_SIZE;
	return ZN_OK;
}

/* Every job has returned: each block queued is written, or the first error says why not. */
void wr_pipe_drain(struct zn_writer *w)
{
	if (w->pipe.pool)
		zn_pool_wait(w->pipe.pool);
}

/* Frees the slots' buffers (once drained), which finish does before the index is built. */
void wr_pipe_drop_buffers(struct zn_writer *w)
{
	struct wr_pipe *p = &w->pipe;
	for (unsigned i = 0; p->slots && i < p->nslots; i++) {
		struct slot *s = &p->slots[i];
		if (s->rfd >= 0)
			close(s->rfd); /* not harvested: the create failed */
		s->rfd = -1;
		zn_big_free(s->in, w->opt.chunk_size);
		free(s->out);
		for (size_t k = 0; k < s->nsegs; k++)
			free(s->segs[k].pkg); /* not harvested: the create failed */
		free(s->segs);
		s->in = s->out = NULL;
		s->segs = NULL;
		s->nsegs = s->segs_cap = 0;
	}
	for (unsigned i = 0; p->cctx && i < p->ncctx; i++) {
		ZSTD_freeCCtx(p->cctx[i].cctx);
		free(p->cctx[i].tmp);
		pkg_work_release(&p->cctx[i].pkg);
		p->cctx[i] = (struct wr_cctx){0};
	}
	pkg_work_release(&p->pkg_work);
	free(p->pkg_head);
	free(p->pkg_tail);
	p->pkg_head = p->pkg_tail = NULL;
	ZSTD_freeCCtx(p->sample_cctx);
	free(p->sample_buf);
	p->sample_cctx = NULL;
	p->sample_buf = NULL;
}

void wr_pipe_close(struct zn_writer *w)
{
	struct wr_pipe *p = &w->pipe;
	if (p->pool) {
		wr_set_error(w, ZN_ERR_CANCELED); /* jobs still queued pass their slots on */
		zn_pool_free(p->pool);
	}
	wr_pipe_drop_buffers(w);
	free(p->slots);
	free(p->cctx);
	free(p->free_ctx);
	free(p->blocks);
	p->slots = NULL;
	p->cctx = NULL;
	p->free_ctx = NULL;
	p->blocks = NULL;
	p->pool = NULL;
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}
