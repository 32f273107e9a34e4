/* SPDX-License-Identifier: MIT */
/* archive_pipeline.c - the writer's slots and threads: compress, hash and write blocks in order. */
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
void *wr_hasher_main(void *arg)
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

void *wr_worker_main(void *arg)
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
		wr_set_error(w, ZN_ERR_NOMEM);
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

/* A stored chunk the writer reads itself (slot.rfd): read, write, next piece. A read that fails
 * or ends early leaves zeros for the rest (the block's size is fixed), and harvest tells. */
static void copy_through(struct zn_writer *w, struct slot *s)
{
	for (uint64_t off = 0; off < s->usize;) {
		uint64_t n = ZN_MIN(ZN_WRITE_PIECE, s->usize - off), got = 0;
		if (!s->rerr && s->roff + off + n > w->eio_at)
			s->rerr = EIO; /* a test's (ZN_TEST_WRITER_EIO_AT) */
		if (!s->rerr) {
			s->rerr = wr_pread_upto(s->rfd, s->in + off, n, s->roff + off, &got);
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
	if (wr_grow((void **)&w->blocks, &w->blocks_cap, w->write_seq + 1, sizeof(*w->blocks))) {
		wr_set_error(w, ZN_ERR_NOMEM);
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

void *wr_writer_main(void *arg)
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
		/* Segs' digests go to wr_harvest(); a chunk the writer read goes on to the hasher.
		 */
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
int wr_changed(const struct went *e, uint64_t size, const struct timespec *before, int64_t sec,
               int64_t nsec)
{
	return !e->shrunk && (size != e->size || sec != before->tv_sec || nsec != before->tv_nsec);
}

/* What the writer's read of a chunk found (slot.rfd), told as the producer's own reads tell
 * theirs; after the file's last chunk, whether it changed meanwhile (as tar). Told at once, not
 * after the small files waiting to be read (as wr_report() does): this may run while they are
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
	if (what && w->problem)
		w->problem(w->hook_ctx, e->path, s->rerr > 0 ? ZN_ERR_IO : ZN_ERR_CHANGED, what);
	if (s->rerr)
		w->input_err = ZN_ERR_IO;
	close(s->rfd);
	s->rfd = -1;
}

/* The digests the workers computed for a written slot go to its files' entries (owned by the
 * producer), before the slot is filled again or once every thread is joined. */
void wr_harvest(struct zn_writer *w, struct slot *s)
{
	if (s->rfd >= 0 && s->nsegs)
		settle_read(w, s);
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].last && w->opt.digest == ZN_DIGEST_SHA256)
			memcpy(w->ents[s->segs[i].entry].sha, s->segs[i].sha, 32);
	s->nsegs = 0;
}

zn_result wr_acquire_slot(struct zn_writer *w, int klass, struct slot **out)
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
	s->gen = ++w->fills;
	*out = s;
	return ZN_OK;
}

/* Give back a slot the producer took but will not queue (it holds no block). */
void wr_release_slot(struct zn_writer *w, struct slot *s)
{
	pthread_mutex_lock(&w->mu);
	s->state = SLOT_FREE;
	pthread_cond_broadcast(&w->cv_free);
	pthread_mutex_unlock(&w->mu);
}

/* Give a filled slot its sequence number and queue it for the workers. */
void wr_queue_slot(struct zn_writer *w, struct slot *s)
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
	return ZN_OK;
}

void wr_stop_threads(struct zn_writer *w)
{
	wr_crew_stop(w);
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
