/* SPDX-License-Identifier: MIT */
/* archive_extract.c - parallel extraction: the workers (shared with verify) and zn_extract.
 *
 * The threads
 * -----------
 * One job (archive_extract.h) reads each block the selected files need once. The caller's thread
 * reads the rows (in parallel, on the job's pool: archive_job.c), makes the directories and
 * builds the plan (archive_plan.c); then N workers (job_run_workers: zn_pool_run, the caller's
 * thread one of them) take blocks from one atomic cursor over the plan's queue, in block order.
 * A worker decodes its block into its own buffer (a block cache of one slot; a stored block is
 * used straight from the mapping), checks its checksums and handles every piece of a file in it:
 * extraction writes it with pwrite() into its file, verification hashes it. When the workers
 * return, the caller's thread alone makes what needs the data in place (links), names what went
 * wrong, in path order, and gives directories their modes.
 *
 * Buffers and ownership
 * ---------------------
 * Nothing is copied between threads. A decoded block belongs to the worker that decoded it until
 * it takes the next one. A file held in one block is created, written, given its mode, owner and
 * times, and closed by the worker holding that block. A file spanning blocks (a plan_span) is
 * opened once, by whichever worker meets one of its pieces first, under the span's stripe lock;
 * pieces are written at their offsets by whichever workers hold their blocks; the worker that
 * writes the last outstanding piece (its `left` falls to 0) finishes and closes it. A file's
 * status byte is written by any worker (atomic stores, only ever downgraded from ST_OK); the
 * caller reads it after the workers return.
 *
 * Hashing a spanning file is one SHA-256 chain, fed in block order: blocks holding such pieces
 * have a turn (plan.span_turn), and a worker waits under the job's lock until the turn is its
 * block's, hashes, and moves the turn on.
 *
 * Why there is no deadlock
 * ------------------------
 * The only wait is for a hashing turn. Turns increase with block order and blocks are taken from
 * the cursor in block order, so the block holding the smallest outstanding turn has been taken
 * by a worker that is running (a part of zn_pool_run claims blocks only while it runs) and that
 * waits for nothing: it moves the turn on. A cancellation (the first error, job_fail, or the
 * caller's stop flag) broadcasts to every waiter, which then skips its hashing. The stripe locks
 * are held only around opening a file, never while waiting.
 *
 * Extraction is done in phases so that no write can ever go through a symlink:
 *   1. directories (and missing parents), on the calling thread, in path order;
 *   2. file contents, by the workers;
 *   3. empty files, symlinks and hardlinks, on the calling thread, after all data;
 *   4. directory modes and times, deepest first, so that writing into them cannot change them.
 * Every name is made through fs_beneath.h (never following a symlink), and ".." or absolute paths
 * are refused before anything is touched.
 *
 * A damaged block damages only the files that have bytes in it: they are named (in path order,
 * after the workers finish, so messages do not depend on timing) and removed, and every other file
 * is still extracted. The first system error (disk full, ...) cancels the remaining work.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "archive_extract.h"
#include "common/sized.h"

/* ------------------------------------------------------------------------------------------------
 * Writing files
 * ---------------------------------------------------------------------------------------------- */

/* The message for a file that could not be created (errno says why; temp < 0: its new copy
 * beside the old file, zn_fs_create). */
static void report_create_failure(struct job *j, uint64_t i, int temp)
{
	int err = errno;
	if (temp < 0) {
		job_report_errno(j, i,
		                 "not replaced (the old file is kept): cannot create the new one "
		                 "beside it",
		                 err);
		return;
	}
	if (err == ELOOP) { /* O_NOFOLLOW on a directory of its path, or on the name */
		/* No hint: where the archive has that directory, its own message gives one. */
		job_report(j, i, ZN_ERR_IO, "not created: a symlink on its path is not followed");
		return;
	}
	job_report_errno(j, i, err == EEXIST ? "not overwritten" : "cannot create", err);
}

/* Where a file is made: its directory (a descriptor of a dircache) and its name there. */
struct out_place {
	int dfd;
	char base[256];
};

/* Entry i's file made new, unnamed, in its directory (*at, for finish_output); on failure it is
 * marked failed and named. */
static int open_output(struct job *j, struct zn_dircache *dc, uint64_t i, uint32_t mode,
                       struct zn_outfile *f, struct out_place *at)
{
	const struct job_entry *e = &j->ents[i];
	at->dfd = zn_fs_parent(&j->target, dc, e->path, e->path_len, at->base, sizeof(at->base));
	if (at->dfd >= 0 && !zn_fs_open_new(&j->target, at->dfd, mode, i, f))
		return 0;
	/* With overwrite, where a file is there already, the new one was to be made beside it. */
	int err = errno;
	struct stat st;
	int beside = at->dfd >= 0 && j->target.overwrite &&
	             !fstatat(at->dfd, at->base, &st, AT_SYMLINK_NOFOLLOW) && !S_ISDIR(st.st_mode);
	errno = err;
	job_set_status(j, i, ST_FAILED);
	report_create_failure(j, i, beside ? -1 : 0);
	f->fd = -1;
	return -1;
}

/* Entry i's file could not take its name (errno says why, `beside` as zn_fs_publish says). */
static void publish_failed(struct job *j, uint64_t i, int beside)
{
	int err = errno;
	if (!beside && (err == EEXIST || err == EISDIR) && j->skip_old) {
		job_set_status(j, i, ST_SKIPPED); /* kept as it is, and not named */
		return;
	}
	job_set_status(j, i, ST_FAILED);
	if (beside == 2)
		job_report_errno(j, i, "cannot replace the file that was there", err);
	else
		report_create_failure(j, i, beside ? -1 : 0);
}

/* Entry i's file, written: given its metadata (m) and its name if its status is still ST_OK, and
 * closed. One that is not complete never had a name: it is gone once closed. `at` is where
 * open_output made it, or NULL to look its directory up again (in dc). */
static void finish_output(struct job *j, struct zn_dircache *dc, uint64_t i, struct zn_outfile *f,
                          const struct zn_meta *m, const struct out_place *at)
{
	const struct job_entry *e = &j->ents[i];
	struct out_place here;
	if (!at) {
		here.dfd = zn_fs_parent(&j->target, dc, e->path, e->path_len, here.base,
		                        sizeof(here.base));
		at = &here;
	}
	if (job_status(j, i) == ST_OK) {
		int beside = 0;
		zn_fs_apply_meta_fd(&j->target, f->fd, m, i);
		if (at->dfd < 0 || zn_fs_publish(&j->target, f, at->dfd, at->base, i, &beside))
			publish_failed(j, i, beside);
	}
	zn_fs_discard(&j->target, f, at->dfd, i);
}

/* Holes are made of runs of zero bytes between multiples of SPARSE_UNIT in the file. */
#define SPARSE_UNIT ((uint64_t)64 << 10)

static int all_zero(const uint8_t *p, uint64_t n)
{
	uint64_t i = 0;
	for (; i + 64 <= n; i += 64) { /* one vector OR per 64 bytes; most data leaves at once */
		uint64_t w[8], acc = 0;
		memcpy(w, p + i, 64);
		for (int k = 0; k < 8; k++)
			acc |= w[k];
		if (acc)
			return 0;
	}
	for (; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Whether the run of `n` bytes (up to the next SPARSE_UNIT boundary, or the end of the piece
 * when chunks are not multiples of the unit) may be left as a hole: all zeros (size 0: no holes
 * at all). Skipped bytes read back as zeros wherever they are: the file was made new, and its
 * size is set (pre-sized, or by the tail's ftruncate). */
static int hole_run(const uint8_t *p, uint64_t n, uint64_t size)
{
	return size && all_zero(p, n);
}

/* Writes `len` bytes at file offset `off`; returns 0 or an errno. With `size`, the file's final
 * size, runs of zero bytes (hole_run) are not written, as zstd and cp --sparse leave them: the
 * file was made new, so skipped bytes read back as zeros, and a skipped tail is made part of the
 * file by ftruncate (or, where that fails, by writing its last byte). */
static int write_at(int fd, const uint8_t *p, uint64_t len, uint64_t off, uint64_t size)
{
	int tail_hole = 0;
	while (len) {
		uint64_t n = ZN_MIN(len, SPARSE_UNIT - off % SPARSE_UNIT);
		if (hole_run(p, n, size)) {
			tail_hole = off + n == size;
			p += n, len -= n, off += n;
			continue;
		}
		/* Non-zero runs that follow go in the same write, up to ZN_WRITE_PIECE. */
		while (n < len && n < ZN_WRITE_PIECE) {
			uint64_t m = ZN_MIN(len - n, SPARSE_UNIT);
			if (hole_run(p + n, m, size))
				break;
			n += m;
		}
		ssize_t k = pwrite(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENOSPC;
		p += k, len -= (uint64_t)k, off += (uint64_t)k;
	}
	if (tail_hole && ftruncate(fd, (off_t)size)) {
		static const uint8_t zero;
		for (;;) {
			ssize_t k = pwrite(fd, &zero, 1, (off_t)(size - 1));
			if (k == 1)
				break;
			if (k < 0 && errno == EINTR)
				continue;
			return k < 0 ? errno : ENOSPC;
		}
	}
	return 0;
}

/* Entry i's metadata, to create or finish its file with; marks it damaged if its row cannot be
 * read (it could be once, in job_init: only a bug or a changed mapping gets here). */
static int file_meta(struct job *j, uint64_t i, struct zn_meta *m)
{
	if (!job_read_meta(j, i, m))
		return 0;
	job_downgrade(j, i, ST_DAMAGED);
	return -1;
}

/* A write failed with errno err: named once, by the first of the workers writing the file's
 * pieces; not when the source failed: the archive's mapping lost its pages (the file shrank),
 * which is said once, at the end, or by the caller's SIGBUS handling. */
static void write_failed(struct job *j, uint64_t i, int err)
{
	if (err == EFAULT)
		atomic_store(&j->unreadable, 1);
	if (job_downgrade(j, i, ST_FAILED) && err != EFAULT)
		job_report_errno(j, i, "write failed", err);
	job_set_status(j, i, ST_FAILED);
	/* Too large for this file system or limit: that file only, as tar. Anything else (a full
	 * disk) ends the job. */
	if (err != EFBIG)
		job_fail(j, ZN_ERR_IO);
}

/* The descriptor of span s's file, made by the first usable piece met: under the span's stripe
 * lock, as several workers may meet its pieces at once. -1 or -2 if none. */
static int span_fd(struct job *j, struct zn_dircache *dc, struct plan_span *s, int usable)
{
	pthread_mutex_t *m = &j->stripes[(uint64_t)(s - j->plan.spans) % 64];
	struct zn_meta meta;
	pthread_mutex_lock(m);
	struct out_place at;
	if (s->out.fd == -1 && usable && !file_meta(j, s->entry, &meta)) {
		if (open_output(j, dc, s->entry, meta.mode, &s->out, &at))
			s->out.fd = -2;
		/* Pre-size (a hint only): unnamed, the file is complete or gone. */
		else if (ftruncate(s->out.fd, (off_t)s->size)) {
		}
	}
	int fd = s->out.fd;
	pthread_mutex_unlock(m);
	return fd;
}

/* Writes piece g (in block b) of entry i, the owner or a copy (s: its span, NULL for a file
 * held in one block). `data` is NULL when the block could not be used (damaged). When that or a
 * cancellation stops the piece, nothing is created, and a file made for earlier pieces is only
 * dropped at its last piece (its status is no longer ST_OK: it never gets a name). A file is
 * written only while its status is ST_OK. */
static void write_one(struct job *j, struct zn_dircache *dc, uint64_t i, struct plan_span *s,
                      const struct plan_piece *g, uint64_t b, const uint8_t *data)
{
	const uint64_t size = s ? s->size : g->len;
	if (zn_pool_canceled(j->pool)) {
		/* A system error (a full disk) ended the job, maybe while this block was being
		 * decoded: nothing more is created or written. The file is named by that error. */
		data = NULL;
		job_downgrade(j, i, ST_FAILED);
	}
	int usable = data && job_status(j, i) == ST_OK;
	struct zn_meta meta;
	struct zn_outfile one = {-1, -1};
	struct out_place at;
	int fd = -1;
	if (s)
		fd = span_fd(j, dc, s, usable);
	else if (usable && !file_meta(j, i, &meta) && !open_output(j, dc, i, meta.mode, &one, &at))
		fd = one.fd;
	if (fd >= 0 && usable) {
		uint64_t foff = s ? j->plan.cum[b] + g->boff - s->start : 0;
		int err = write_at(fd, data + g->boff, g->len, foff, j->sparse ? size : 0);
		if (err)
			write_failed(j, i, err);
		atomic_fetch_add(&j->done_bytes, g->len);
	}
	struct zn_outfile *f = &one;
	if (s) {
		if (atomic_fetch_sub(&s->left, 1) != 1)
			return; /* not the last piece */
		/* The last piece finishes the file, whichever worker opened it: this one may have
		 * read s->out before another worker's piece created the file. */
		pthread_mutex_t *m = &j->stripes[(uint64_t)(s - j->plan.spans) % 64];
		pthread_mutex_lock(m);
		f = &s->out;
		pthread_mutex_unlock(m);
		if (f->fd >= 0 && job_status(j, i) == ST_OK)
			file_meta(j, i, &meta); /* on failure the file is damaged: dropped below */
	}
	if (f->fd >= 0)
		finish_output(j, dc, i, f, &meta, s ? NULL : &at);
}

/* Writes piece g of block b into its file and into the files stored once for it. */
static void write_piece(struct job *j, struct zn_dircache *dc, const struct plan_piece *g,
                        uint64_t b, const uint8_t *data)
{
	struct plan_span *s = piece_span(&j->plan, g);
	write_one(j, dc, piece_entry(&j->plan, g), s, g, b, data);
	/* Only bytes that are there are given to the copies: visiting every copy for every piece
	 * of a damaged file would be work that writes nothing (settle_copies ends them). */
	if (!data || !s)
		return;
	for (uint64_t c = s->next_copy; c; c = j->plan.spans[c - 1].next_copy)
		write_one(j, dc, j->plan.spans[c - 1].entry, &j->plan.spans[c - 1], g, b, data);
}

/* ------------------------------------------------------------------------------------------------
 * Hashing
 * ---------------------------------------------------------------------------------------------- */

/* The digest of a spanning file's bytes, `got` (NULL if some were missing), must be its
 * copies' too. Once per file, so the work stays within the number of files. */
static void check_copies(struct job *j, const struct plan_span *s, const uint8_t *got)
{
	for (uint64_t c = s->next_copy; c; c = j->plan.spans[c - 1].next_copy) {
		uint64_t i = j->plan.spans[c - 1].entry;
		const uint8_t *sha = job_sha256(j, i);
		if (!got || (sha && memcmp(got, sha, 32)))
			job_downgrade(j, i, ST_DAMAGED);
	}
}

/* A file that will not be finished: closed, and gone (a temporary name removed). */
static void drop_output(struct job *j, uint64_t i, struct zn_outfile *f)
{
	struct zn_dircache dc;
	char base[256];
	zn_dircache_init(&dc);
	const struct job_entry *e = &j->ents[i];
	int dfd = zn_fs_parent(&j->target, &dc, e->path, e->path_len, base, sizeof(base));
	zn_fs_discard(&j->target, f, dfd, i);
	zn_dircache_free(&dc);
}

/* After the workers: a copy whose shared bytes did not load is damaged as its primary is
 * (verify writes nothing, so only this marks it); verify counts its bytes as checked. A copy
 * that did not get every piece (a damaged block, a cancelled job) is dropped here. */
static void settle_copies(struct job *j)
{
	for (uint64_t k = 0; k < j->plan.nspans; k++) {
		struct plan_span *c = &j->plan.spans[k];
		if (!c->primary)
			continue;
		if (j->plan.spans[c->primary - 1].bytes_bad)
			job_downgrade(j, c->entry, ST_DAMAGED);
		if (j->verify) {
			atomic_fetch_add(&j->done_bytes, c->size);
		} else if (atomic_load(&c->left)) {
			job_downgrade(j, c->entry,
			              zn_pool_canceled(j->pool) ? ST_FAILED : ST_DAMAGED);
			if (c->out.fd >= 0)
				drop_output(j, c->entry, &c->out);
		}
	}
}

/* The digest of the last whole file hashed in the block at hand: files sharing its bytes
 * (identical files stored once, next to each other in the plan) are not hashed again. */
struct last_hash {
	uint64_t boff, len; /* len 0: none yet (no piece is empty) */
	uint8_t sha[32];
};

/* Piece g of a file spanning blocks (span s, block b): fed to the one digest context in block
 * order (this worker holds the turn), the file judged at its last piece. */
static void hash_span_piece(struct job *j, struct plan_span *s, const struct plan_piece *g,
                            uint64_t b, const uint8_t *data, const uint8_t *want)
{
	if (b == s->first_block || j->span_entry != s->entry) {
		SHA256_Init(&j->span_ctx);
		j->span_entry = s->entry;
		j->span_missing = 0;
	}
	if (data)
		SHA256_Update(&j->span_ctx, data + g->boff, g->len);
	else
		j->span_missing = 1;
	if (b == s->last_block) {
		uint8_t got[32];
		SHA256_Final(got, &j->span_ctx);
		const uint8_t *v = j->span_missing ? NULL : got;
		if (!v || memcmp(v, want, 32))
			job_downgrade(j, s->entry, ST_DAMAGED);
		check_copies(j, s, v);
		j->span_entry = UINT64_MAX;
	}
}

static void hash_piece(struct job *j, struct last_hash *h, const struct plan_piece *g, uint64_t b,
                       const uint8_t *data)
{
	struct plan_span *s = piece_span(&j->plan, g);
	const uint64_t i = piece_entry(&j->plan, g);
	const uint8_t *want = job_sha256(j, i);
	if (!want) {
		/* Asked to check digests, extraction keeps no file whose digest the index lost
		 * (verify names it as such: job_report_lost). */
		if ((j->ents[i].lost & ZN_LOST_DIGEST) && !j->verify)
			job_downgrade(j, i, ST_DAMAGED);
		return;
	}
	if (s) {
		hash_span_piece(j, s, g, b, data, want);
		return;
	}
	if (!data)
		return; /* the block failed to load: already marked damaged */
	if (h->boff != g->boff || h->len != g->len) {
		zn_sha256(data + g->boff, g->len, h->sha);
		h->boff = g->boff;
		h->len = g->len;
	}
	if (memcmp(h->sha, want, 32))
		job_downgrade(j, i, ST_DAMAGED);
}

/* ------------------------------------------------------------------------------------------------
 * The workers
 * ---------------------------------------------------------------------------------------------- */

/* Block b failed its checksums. Where the archive has digests and the block still decodes to
 * its size, each file held whole in it is judged by its own SHA-256 and kept if it matches (a
 * flipped byte in a block of packed small files then costs the files it is in, not all of
 * them). Everything else with bytes in it is damaged. Returns the bytes to write the kept
 * files from, or NULL. */
static const uint8_t *salvage_block(struct job *j, uint64_t b, struct zn_block_cache *bc,
                                    const struct zn_blockinfo *bi)
{
	struct zn_reader *r = j->r;
	const uint8_t *data = NULL;
	atomic_fetch_add(&j->blocks_bad, 1);
	if (r->digest != ZN_DIGEST_SHA256 || !bi ||
	    zn_block_get(r, bc, b, bi, bi->usize, ZN_BLOCK_UNCHECKED, &data) != ZN_OK)
		data = NULL;
	struct last_hash h = {0};
	int kept = 0;
	for (uint64_t k = j->plan.bstart[b]; k < j->plan.bstart[b + 1]; k++) {
		const struct plan_piece *g = &j->plan.pieces[k];
		struct plan_span *s = piece_span(&j->plan, g);
		const uint64_t i = piece_entry(&j->plan, g);
		const uint8_t *want = s ? NULL : job_sha256(j, i);
		if (data && want) {
			if (h.boff != g->boff || h.len != g->len) {
				zn_sha256(data + g->boff, g->len, h.sha);
				h.boff = g->boff;
				h.len = g->len;
			}
			if (!memcmp(h.sha, want, 32)) {
				kept = 1;
				continue;
			}
		}
		job_downgrade(j, i, ST_DAMAGED);
		if (s) /* its copies follow: settle_copies */
			__atomic_store_n(&s->bytes_bad, 1, __ATOMIC_RELAXED);
	}
	if (kept)
		atomic_fetch_add(&j->blocks_salvaged, 1);
	return kept ? data : NULL;
}

/* Block b, checked, or what salvage_block keeps of it (NULL: nothing). */
static const uint8_t *load_block(struct job *j, struct zn_block_cache *bc, uint64_t b)
{
	struct zn_blockinfo bi;
	const uint8_t *data;
	const int info_ok = zn_block_info(j->r, b, &bi) == ZN_OK;
	zn_result res = info_ok ? zn_block_get(j->r, bc, b, &bi, bi.usize, ZN_BLOCK_CHECKED, &data)
	                        : ZN_ERR_CORRUPT;
	if (res == ZN_OK)
		return data;
	if (res == ZN_ERR_NOMEM) {
		job_fail(j, res);
		return NULL;
	}
	return salvage_block(j, b, bc, info_ok ? &bi : NULL);
}

/* Waits for the hashing turn of a block holding pieces of spanning files (see the top of the
 * file); 0 when it is this block's, -1 when the job was cancelled instead: the shared digest
 * context is then not this worker's to feed. */
static int wait_turn(struct job *j, int64_t turn)
{
	pthread_mutex_lock(&j->mu);
	while (j->span_turn != turn && !zn_pool_canceled(j->pool))
		pthread_cond_wait(&j->cv, &j->mu);
	pthread_mutex_unlock(&j->mu);
	return zn_pool_canceled(j->pool) ? -1 : 0;
}

static void pass_turn(struct job *j)
{
	pthread_mutex_lock(&j->mu);
	j->span_turn++;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* Every piece of block b (its bytes `data`, NULL if unusable): hashed and/or written. */
static void handle_block(struct job *j, struct zn_dircache *dc, uint64_t b, const uint8_t *data,
                         int cancel)
{
	struct last_hash h = {0};
	for (uint64_t k = j->plan.bstart[b]; k < j->plan.bstart[b + 1]; k++) {
		const struct plan_piece *g = &j->plan.pieces[k];
		/* Extraction with check_digest hashes a piece before writing it: a file held in
		 * one block that does not match is never written; a longer one is removed after
		 * the workers when its last piece does not match. */
		if (j->hashing && !cancel)
			hash_piece(j, &h, g, b, data);
		if (j->verify)
			atomic_fetch_add(&j->done_bytes, g->len);
		else
			write_piece(j, dc, g, b, cancel ? NULL : data);
	}
}

/* One worker (a part of zn_pool_run): blocks from the cursor until none is left. After a
 * cancellation it still visits every block it takes, writing nothing, so that every spanning
 * file's last piece is met and its file closed. */
static void job_worker(void *arg, unsigned t)
{
	(void)t;
	struct job *j = arg;
	struct zn_reader *r = j->r;
	struct zn_block_cache bc;
	struct zn_dircache dc;
	zn_block_cache_init(&bc, r, 1, false);
	zn_dircache_init(&dc);
	for (;;) {
		uint64_t w = atomic_fetch_add(&j->cursor, 1);
		if (w >= j->plan.nwork)
			break;
		job_halted(j); /* a stop: the remaining pieces are skipped, the clean-up removes
		                  them */
		uint64_t b = j->plan.work[w];
		int64_t turn = j->plan.span_turn[b];
		int cancel = zn_pool_canceled(j->pool);
		const uint8_t *data = cancel ? NULL : load_block(j, &bc, b);
		if (j->hashing && turn >= 0)
			cancel |= wait_turn(j, turn);
		handle_block(j, &dc, b, data, cancel);
		zn_block_release(r, b);
		if (j->hashing && turn >= 0)
			pass_turn(j);
		if (j->progress && w % 4 == 0) {
			pthread_mutex_lock(&j->mu);
			j->progress(j->ctx, atomic_load(&j->done_bytes), r->content_bytes);
			pthread_mutex_unlock(&j->mu);
		}
	}
	zn_dircache_free(&dc);
	zn_block_cache_free(&bc);
}

void job_run_workers(struct job *j)
{
	unsigned n = (unsigned)ZN_MIN(zn_pool_threads(j->pool), j->plan.nwork);
	zn_pool_run(j->pool, job_worker, j, n ? n : 1);
	settle_copies(j);
}

/* ------------------------------------------------------------------------------------------------
 * zn_extract
 * ---------------------------------------------------------------------------------------------- */

void zn_extract_options_init(struct zn_extract_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->struct_size = sizeof(*opt);
	opt->same_owner = geteuid() == 0;
	opt->same_permissions = geteuid() == 0;
	opt->sparse = 1;
}

/* The target's hook for what fs_beneath warns about. */
static void warn_entry(void *ctx, uint64_t who, zn_result r, const char *msg)
{
	job_report(ctx, who, r, msg);
}

/* The target directory, made if missing (its last component); ZN_ERR_IO, named, if it cannot be
 * used. */
static zn_result open_root(struct job *j, const char *dir)
{
	int existed = 0;
	if ((mkdir(dir, 0755) && !(existed = errno == EEXIST)) ||
	    (j->target.rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (j->problem) {
			char msg[128];
			snprintf(msg, sizeof(msg), "cannot use as the target directory: %s",
			         strerror(errno));
			j->problem(j->ctx, dir, ZN_ERR_IO, msg);
		}
		return ZN_ERR_IO;
	}
	if (existed) /* a killed extraction's temporary files, in a rerun (zn_fs_mkdir below) */
		zn_fs_clean_stale(&j->target, j->target.rootfd, ".");
	return ZN_OK;
}

static int cmp_stripped(const void *a, const void *b, void *ctx)
{
	const struct job *j = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	const struct job_entry *e = &j->ents[x], *f = &j->ents[y];
	int c = memcmp(e->path, f->path, ZN_MIN(e->path_len, f->path_len));
	if (!c)
		c = e->path_len < f->path_len ? -1 : e->path_len > f->path_len;
	return c ? c : x < y ? -1 : x > y;
}

/* strip_components: entries that become one path are as with tar, where the later one in the
 * archive (in path order) replaces the earlier. Only the last of each name is extracted, so
 * the result does not depend on which is written first. */
static zn_result keep_last_of_names(struct job *j)
{
	uint64_t *ix = malloc((j->n ? j->n : 1) * sizeof(uint64_t)), m = 0;
	if (!ix)
		return ZN_ERR_NOMEM;
	for (uint64_t i = 0; i < j->n; i++)
		if (j->ents[i].status == ST_OK)
			ix[m++] = i;
	qsort_r(ix, m, sizeof(*ix), cmp_stripped, j);
	for (uint64_t k = 0; k + 1 < m; k++) {
		const struct job_entry *e = &j->ents[ix[k]], *f = &j->ents[ix[k + 1]];
		if (e->path_len == f->path_len && !memcmp(e->path, f->path, e->path_len))
			j->ents[ix[k]].status = ST_SKIPPED;
	}
	free(ix);
	return ZN_OK;
}

/* Unsafe paths are refused before anything is touched; with strip_components, only the last of
 * each name stays. */
static zn_result refuse_unsafe(struct job *j)
{
	for (uint64_t i = 0; i < j->n; i++) {
		struct job_entry *e = &j->ents[i];
		if (e->status == ST_OK && !zn_path_is_safe(e->path, e->path_len)) {
			job_report(j, i, ZN_ERR_UNSAFE_PATH,
			           "unsafe path (absolute, empty or with '..'); skipped");
			e->status = ST_DAMAGED;
		}
	}
	return j->strip ? keep_last_of_names(j) : ZN_OK;
}

/* What the file system holding `dir` has free for this user (statvfs; dir's parent where dir is
 * yet to be made): 0, or -1 where it cannot be told (nothing is then refused). */
static int free_space(const char *dir, uint64_t *bytes, uint64_t *inodes)
{
	struct statvfs sv;
	int rc = statvfs(dir, &sv);
	if (rc && errno == ENOENT) {
		const char *slash = strrchr(dir, '/');
		char *parent =
		        slash ? strndup(dir, slash == dir ? 1 : (size_t)(slash - dir)) : NULL;
		rc = statvfs(parent ? parent : ".", &sv);
		free(parent);
	}
	if (rc)
		return -1;
	*bytes = sv.f_frsize && sv.f_bavail > UINT64_MAX / sv.f_frsize
	                 ? UINT64_MAX
	                 : (uint64_t)sv.f_bavail * sv.f_frsize;
	*inodes = sv.f_files ? (uint64_t)sv.f_favail : UINT64_MAX; /* 0 files: not counted */
#ifdef ZN_TEST_HOOKS
	const char *fake = getenv("ZN_TEST_STATVFS"); /* "BYTES,INODES": as a file system that
	                                                  has that much free */
	if (fake && sscanf(fake, "%" SCNu64 ",%" SCNu64, bytes, inodes) != 2)
		return -1;
#endif
	return 0;
}

/* "2.1 GB" */
static void human_size(uint64_t n, char out[16])
{
	const char *unit[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1000 && u < 6)
		v /= 1000, u++;
	snprintf(out, 16, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* What the selected entries take once written (every regular file's bytes, identical files each
 * time, and an inode for each entry but hardlinks) against what dir's file system has free:
 * refused, before anything is written, where it does not fit (red-team finding 4 of issue 30: a
 * 10 kB archive of identical files wrote 2.1 GB, a 438 kB one describes 1 TB), unless
 * opt.no_space_check. Sparse files count whole: a bound, not the blocks they will take. */
static zn_result check_space(struct job *j, const char *dir)
{
	uint64_t bytes = 0, files = 0, inodes = 0, have_bytes, have_inodes;
	for (uint64_t i = 0; i < j->n; i++) {
		const struct job_entry *e = &j->ents[i];
		if (e->status != ST_OK)
			continue;
		inodes += e->type != ZN_TYPE_HARDLINK;
		const uint8_t *sz = e->type == ZN_TYPE_FILE
		                            ? job_col_row(j, j->cols.size, ZN_COL_SIZE, 8, i)
		                            : NULL;
		uint64_t size = sz ? zn_get_le64(sz) : 0;
		bytes = size > UINT64_MAX - bytes ? UINT64_MAX : bytes + size;
		files += e->type == ZN_TYPE_FILE;
	}
	if (j->opt->no_space_check || free_space(dir, &have_bytes, &have_inodes) ||
	    (bytes <= have_bytes && inodes <= have_inodes))
		return ZN_OK;
	char need[16], have[16], msg[320];
	human_size(bytes, need);
	human_size(have_bytes, have);
	if (bytes > have_bytes)
		snprintf(msg, sizeof(msg),
		         "not enough free space: the archive expands to %s (%llu bytes in %llu "
		         "files) and the file system there has %s free (%llu bytes); nothing "
		         "extracted",
		         need, (unsigned long long)bytes, (unsigned long long)files, have,
		         (unsigned long long)have_bytes);
	else
		snprintf(msg, sizeof(msg),
		         "not enough free inodes: the archive makes %llu entries and the file "
		         "system "
		         "there has %llu inodes free; nothing extracted",
		         (unsigned long long)inodes, (unsigned long long)have_inodes);
	if (j->problem)
		j->problem(j->ctx, dir, ZN_ERR_LIMIT, msg);
	return ZN_ERR_LIMIT;
}

/* Directory i could not be made (errno err): it and what is below it fail, said once. In path
 * order "d/..." follows "d" after the names "d" + a byte below '/'. */
static void dir_failed(struct job *j, uint64_t i, int err)
{
	const struct job_entry *e = &j->ents[i];
	j->ents[i].status = ST_FAILED;
	uint64_t below = 0;
	for (uint64_t k = job_below_start(j, i); k < j->n; k++) {
		const struct job_entry *f = &j->ents[k];
		if (f->path_len <= e->path_len || f->path[e->path_len] != '/' ||
		    memcmp(f->path, e->path, e->path_len))
			break;
		if (f->status == ST_OK) {
			j->ents[k].status = ST_FAILED;
			below++;
		}
	}
	char msg[256], more[64] = "";
	if (below == 1)
		snprintf(more, sizeof(more), "; the entry below it is not extracted");
	else if (below)
		snprintf(more, sizeof(more), "; the %llu entries below it are not extracted",
		         (unsigned long long)below);
	if (err == EEXIST)
		snprintf(msg, sizeof(msg),
		         "not overwritten: something that is not a directory stands where the "
		         "archive has one%s",
		         more);
	else if (err == ELOOP) /* a symlink on its path (O_NOFOLLOW) */
		snprintf(msg, sizeof(msg), "not created: a symlink on its path is not followed%s",
		         more);
	else
		snprintf(msg, sizeof(msg), "cannot create directory: %s%s", strerror(err), more);
	job_report(j, i, err == EEXIST ? ZN_ERR_EXISTS : ZN_ERR_IO, msg);
}

/* Phase 1: directories, in path order. The cached parent stays valid: only successful opens are
 * cached, and the only directories ever removed are empty ones where the archive has a file or
 * link (overwrite), which a valid archive never also has below a path. A crafted one that does
 * gets a timing-dependent result, never a write outside the target: a removed directory's
 * descriptor creates nothing. */
static void make_dirs(struct job *j, struct zn_dircache *dc)
{
	for (uint64_t i = 0; i < j->n && !job_halted(j); i++) {
		struct job_entry *e = &j->ents[i];
		if (e->status != ST_OK || e->type != ZN_TYPE_DIR)
			continue;
		/* An existing directory whose mode the damaged index lost keeps its own. */
		int keep = j->keep_dirs || (e->lost & ZN_LOST_MODE);
		int made = zn_fs_mkdir(&j->target, dc, e->path, e->path_len, keep, i);
		if (made > 0)
			e->status = ST_KEPT; /* an existing directory, kept */
		else if (made < 0)
			dir_failed(j, i, errno);
	}
}

/* --skip-old-files: what exists is passed over before any block is read, so that damage in
 * blocks only such files use does not count, whatever the timing. */
static void skip_existing(struct job *j, struct zn_dircache *dc)
{
	for (uint64_t i = 0; j->skip_old && i < j->n && !job_halted(j); i++) {
		struct job_entry *e = &j->ents[i];
		if (e->status != ST_OK || e->type == ZN_TYPE_DIR)
			continue;
		char base[256];
		int dfd = zn_fs_parent(&j->target, dc, e->path, e->path_len, base, sizeof(base));
		struct stat st;
		if (dfd >= 0 && !fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
			e->status = ST_SKIPPED;
	}
}

/* Phase 3a: empty files (a hardlink to one must find the file this job created, not an older
 * one of the same name). */
static void make_empty_files(struct job *j, struct zn_dircache *dc)
{
	for (uint64_t i = 0; i < j->n; i++) {
		struct job_entry *e = &j->ents[i];
		struct zn_meta meta;
		if (e->status != ST_OK || e->type != ZN_TYPE_FILE || (e->flags & JE_PLANNED))
			continue;
		if (job_halted(j)) {
			e->status = ST_FAILED; /* not made: neither listed nor counted as made */
			continue;
		}
		struct zn_outfile f;
		struct out_place at;
		if (file_meta(j, i, &meta) || open_output(j, dc, i, meta.mode, &f, &at))
			continue; /* named, and marked */
		finish_output(j, dc, i, &f, &meta, &at);
	}
}

/* Copy a file's content from the archive into an already created file (hardlinks whose target
 * was not extracted). */
static zn_result sink_fd(void *ctx, const void *data, size_t len)
{
	return zn_write_all(*(const int *)ctx, data, len);
}

/* How making a link went, for report_link. */
struct link_try {
	int rc;                  /* 0 made, -1 not (errno, unless a reason below) */
	int temp;                /* < 0: no new file could be made beside the old one */
	const char *why;         /* a reason errno does not carry */
	const char *damaged_why; /* the content it was to get is damaged */
};

/* Hardlink i whose target t was not extracted (not selected, or it existed): the content is
 * written here (its own row reads its target's), for the group's other members to link to. */
static void write_stand_in(struct job *j, uint64_t i, int dfd, const char *base,
                           const struct zn_meta *m, struct link_try *lt)
{
	struct zn_outfile f;
	if (zn_fs_open_new(&j->target, dfd, m->mode, i, &f))
		return;
	zn_result got = zn_reader_read_entry(j->r, i, sink_fd, &f.fd);
	int beside = 0;
	if (got == ZN_OK) {
		zn_fs_apply_meta_fd(&j->target, f.fd, m, i);
		lt->rc = zn_fs_publish(&j->target, &f, dfd, base, i, &beside);
		lt->temp = beside ? -1 : 0;
	}
	int err = errno;
	zn_fs_discard(&j->target, &f, dfd, i);
	errno = err;
	if (got == ZN_ERR_CHECKSUM || got == ZN_ERR_CORRUPT) {
		lt->damaged_why =
		        "damaged in the archive (the content of its target); not extracted";
	} else if (got != ZN_OK) {
		errno = got == ZN_ERR_NOMEM ? ENOMEM : EIO;
	}
}

/* Hardlink i (row x) at base in dfd. stand_in[t] (t a target not extracted) is the member of
 * t's group that got the content, + 1; made on first need (a failed allocation only writes the
 * content again for each). */
static void make_hardlink(struct job *j, struct zn_dircache *tc, uint64_t i,
                          const struct job_row *x, int dfd, const char *base, uint64_t **stand_in,
                          struct link_try *lt)
{
	uint64_t t;
	const int found = zn_reader_find(j->r, x->link, x->link_len, &t) == ZN_OK;
	/* Target not selected, or not written (it existed). */
	const int absent =
	        found && (j->ents[t].status == ST_SKIPPED || j->ents[t].status == ST_FAILED);
	const uint64_t *si = *stand_in;
	if (found && j->ents[t].type == ZN_TYPE_FILE && j->ents[t].status == ST_OK &&
	    zn_path_is_safe(x->link, x->link_len)) {
		lt->rc = zn_fs_place_hardlink(&j->target, tc, j->ents[t].path, j->ents[t].path_len,
		                              dfd, base, i);
	} else if (absent && si && si[t] && j->ents[si[t] - 1].status == ST_OK) {
		/* An earlier link of the group holds the content already: this one links to it, as
		 * on disk. */
		const struct job_entry *s = &j->ents[si[t] - 1];
		lt->rc = zn_fs_place_hardlink(&j->target, tc, s->path, s->path_len, dfd, base, i);
	} else if (absent) {
		if (!*stand_in)
			*stand_in = calloc(j->n, sizeof(**stand_in));
		write_stand_in(j, i, dfd, base, &x->meta, lt);
		if (!lt->rc && *stand_in)
			(*stand_in)[t] = i + 1;
	} else {
		lt->why = "cannot create hardlink: its target was not extracted";
	}
}

/* Names a link that was not made, and marks it. */
static void report_link(struct job *j, uint64_t i, const struct link_try *lt)
{
	struct job_entry *e = &j->ents[i];
	const int overwrite = j->target.overwrite;
	if (!lt->rc)
		return;
	if (lt->damaged_why) {
		job_report(j, i, ZN_ERR_CHECKSUM, lt->damaged_why);
		e->status = ST_DAMAGED;
	} else if (lt->why) {
		job_report(j, i, ZN_ERR_IO, lt->why);
		e->status = ST_FAILED;
	} else if (lt->temp < 0 || (errno == EEXIST && overwrite)) {
		report_create_failure(j, i, -1);
		e->status = ST_FAILED;
	} else if ((errno == EEXIST || errno == EISDIR) && j->skip_old) {
		e->status = ST_SKIPPED; /* kept as it is, and not named */
	} else if (errno == EEXIST && !overwrite) {
		report_create_failure(j, i, 0); /* "not overwritten" */
		e->status = ST_FAILED;
	} else if (errno == ELOOP) {
		job_report(j, i, ZN_ERR_IO, "not created: a symlink on its path is not followed");
		e->status = ST_FAILED;
	} else {
		job_report_errno(j, i,
		                 e->type == ZN_TYPE_SYMLINK ? "cannot create symlink"
		                                            : "cannot create hardlink",
		                 errno);
		e->status = ST_FAILED;
	}
}

/* Phase 3b: symlinks and hardlinks, in path order. */
static void make_links(struct job *j, struct zn_dircache *dc)
{
	uint64_t *stand_in = NULL;
	struct zn_dircache tc; /* the targets' directories */
	zn_dircache_init(&tc);
	for (uint64_t i = 0; i < j->n; i++) {
		struct job_entry *e = &j->ents[i];
		if (e->status != ST_OK ||
		    (e->type != ZN_TYPE_SYMLINK && e->type != ZN_TYPE_HARDLINK))
			continue;
		if (job_halted(j)) {
			e->status = ST_FAILED; /* not made, as above */
			continue;
		}
		char base[256];
		struct job_row x;
		struct link_try lt = {-1, 0, NULL, NULL};
		int dfd = zn_fs_parent(&j->target, dc, e->path, e->path_len, base, sizeof(base));
		char *target = NULL;
		if (dfd >= 0 && !job_read_row(j, i, &x) && x.link)
			target = strndup(x.link, x.link_len);
		if (target && e->type == ZN_TYPE_SYMLINK) {
			struct zn_linkspec l = {target, -1, NULL, -1};
			lt.rc = zn_fs_place_link(&j->target, &l, dfd, base, i);
			if (!lt.rc)
				zn_fs_apply_meta_link(&j->target, dfd, base, &x.meta, i);
		} else if (target) {
			make_hardlink(j, &tc, i, &x, dfd, base, &stand_in, &lt);
		}
		report_link(j, i, &lt);
		free(target);
	}
	zn_dircache_free(&tc);
	free(stand_in);
}

/* A directory that existed and is kept only because the index lost its mode (zn_fs_mkdir): it
 * is extracted, as far as anything of it is, where keep_dirs' ones are passed over. */
static int kept_for_lost(const struct job *j, uint64_t i)
{
	return j->ents[i].status == ST_KEPT && !j->keep_dirs;
}

/* Phase 4: directory modes and times, deepest (last in path order) first (of a directory that
 * existed, with no_overwrite_dir, the times alone, as tar's); then the modes of the existing
 * directories keep_dirs opened up. */
static void restore_dirs(struct job *j, struct zn_dircache *dc)
{
	char base[256];
	for (uint64_t i = j->n; i-- > 0;) {
		const struct job_entry *e = &j->ents[i];
		int kept =
		        (e->status == ST_KEPT && j->opt->no_overwrite_dir) || kept_for_lost(j, i);
		struct job_row x;
		if ((e->status != ST_OK && !kept) || e->type != ZN_TYPE_DIR ||
		    job_read_row(j, i, &x))
			continue;
		int dfd = zn_fs_parent(&j->target, dc, e->path, e->path_len, base, sizeof(base));
		if (dfd >= 0 && kept)
			zn_fs_apply_times_at(&j->target, dfd, base, &x.meta);
		else if (dfd >= 0)
			zn_fs_apply_meta_dir(&j->target, dfd, base, &x.meta, i);
	}
	struct zn_target *t = &j->target;
	for (size_t k = t->nreopened; k-- > 0;) {
		const struct zn_reopened *o = &t->reopened[k];
		const struct job_entry *e = &j->ents[o->who];
		int dfd = zn_fs_parent(t, dc, e->path, e->path_len, base, sizeof(base));
		if (dfd < 0 || zn_fs_chmod_dir(dfd, base, o->mode)) {
			char msg[96];
			snprintf(msg, sizeof(msg), "could not give back its mode %04o: %s",
			         (unsigned)o->mode, strerror(errno));
			job_report(j, o->who, ZN_OK, msg);
		}
	}
	t->nreopened = 0;
}

/* Entries extracted without what the damaged index lost of them, in path order; an existing
 * directory kept under keep_dirs (unless it was to get its lost time) and files passed over are
 * not named; after a stop or a system error, none (not all were made). Then damaged files, in
 * path order (a file not complete never had a name: nothing is left to remove). */
static void report_entries(struct job *j)
{
	for (uint64_t i = 0; i < j->n && !zn_pool_canceled(j->pool); i++) {
		const struct job_entry *e = &j->ents[i];
		if (e->lost && (e->status == ST_OK || kept_for_lost(j, i) ||
		                (e->status == ST_KEPT && j->opt->no_overwrite_dir &&
		                 (e->lost & ZN_LOST_MTIME))))
			job_report_lost(j, i);
	}
	for (uint64_t i = 0; i < j->n; i++) {
		const struct job_entry *e = &j->ents[i];
		/* Files whose extent the plan refused were named by it. */
		if (e->status == ST_DAMAGED && e->type == ZN_TYPE_FILE && (e->flags & JE_PLANNED))
			job_report(j, i, ZN_ERR_CHECKSUM, "damaged in the archive; not extracted");
	}
}

/* The result, once everything is done: a failed write that stopped the job says how much it
 * left undone; what is marked OK is listed (the extracted hook); damage and failures decide. */
static zn_result finish(struct job *j, const char *dir)
{
	if (j->progress)
		j->progress(j->ctx, atomic_load(&j->done_bytes), j->r->content_bytes);
	zn_result res = zn_pool_result(j->pool);
	if (res == ZN_ERR_IO) {
		uint64_t undone = 0;
		for (uint64_t i = 0; i < j->n; i++)
			undone += j->ents[i].status == ST_FAILED && j->ents[i].type != ZN_TYPE_DIR;
		if (j->problem && undone) {
			char msg[160];
			snprintf(msg, sizeof(msg),
			         "extraction stopped at %s: %llu entr%s not extracted, the others "
			         "are complete",
			         atomic_load(&j->unreadable)
			                 ? "a block the archive no longer held (it shrank?)"
			                 : "the failed write above",
			         (unsigned long long)undone, undone == 1 ? "y is" : "ies are");
			j->problem(j->ctx, dir, ZN_ERR_IO, msg);
		}
	}
	/* After a failed write too: what is marked OK then is made and complete (-v lists it). */
	for (uint64_t i = 0; (res == ZN_OK || res == ZN_ERR_IO) && j->extracted && i < j->n; i++)
		if (j->ents[i].status == ST_OK || kept_for_lost(j, i))
			j->extracted(j->ctx, j->ents[i].path, j->ents[i].path_len);
	if (res != ZN_OK)
		return res;
	int damaged = job_report_bad_blocks(j) | j->lost_any, failed = 0;
	for (uint64_t i = 0; i < j->n; i++) {
		damaged |= j->ents[i].status == ST_DAMAGED;
		failed |= j->ents[i].status == ST_FAILED;
	}
	/* --same-owner where this user may not give files away: each was named; the extraction
	 * failed, as tar's does, and this says how many and why in one line. */
	uint64_t owners = atomic_load(&j->target.owners_failed);
	if (owners && j->problem) {
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "%llu entr%s kept the extracting user as owner: the stored owners could "
		         "not "
		         "be given (that takes root, or CAP_CHOWN)",
		         (unsigned long long)owners, owners == 1 ? "y" : "ies");
		j->problem(j->ctx, dir, ZN_ERR_IO, msg);
	}
	failed |= owners != 0;
	return damaged ? ZN_ERR_DAMAGED : failed ? ZN_ERR_IO : ZN_OK;
}

/* Phases 1 to 4 (see the top of the file), once the job and the target are set up. */
static zn_result extract_all(struct job *j, const char *dir)
{
	struct zn_dircache dc;
	zn_dircache_init(&dc);
	make_dirs(j, &dc);
	skip_existing(j, &dc);
	zn_result res = plan_build(j);
	if (res != ZN_OK) { /* the directories made or opened up still get their modes */
		restore_dirs(j, &dc);
		zn_dircache_free(&dc);
		return res;
	}
	job_run_workers(j);
	make_empty_files(j, &dc);
	make_links(j, &dc);
	job_halted(j); /* a stop that came after the last check still makes the result CANCELED */
	report_entries(j);
	restore_dirs(j, &dc);
	zn_dircache_free(&dc);
	return finish(j, dir);
}

zn_result zn_extract(struct zn_reader *r, const char *dir, const uint8_t *select,
                     const struct zn_extract_options *opt_in, const struct zn_hooks *hooks)
{
	if (!r || !dir || !*dir)
		return ZN_ERR_INVALID_ARG;
	struct zn_extract_options opt;
	struct zn_hooks h = {0};
	zn_extract_options_init(&opt);
	if ((opt_in && zn_sized_in(&opt, sizeof(opt), opt_in, ZN_FIRST_SIZE_extract_options)) ||
	    (hooks && zn_sized_in(&h, sizeof(h), hooks, ZN_FIRST_SIZE_hooks)))
		return ZN_ERR_INVALID_ARG;
	struct job j;
	memset(&j, 0, sizeof(j));
	j.opt = &opt;
	j.problem = h.problem;
	j.progress = h.progress;
	j.extracted = h.extracted;
	j.ctx = h.ctx;
	j.hashing = opt.check_digest;
	j.sparse = opt.sparse;
	j.strip = opt.strip_components;
	j.skip_old = opt.skip_existing && !opt.overwrite;
	j.keep_dirs = j.skip_old || opt.no_overwrite_dir;
	j.target = (struct zn_target){.rootfd = -1,
	                              .overwrite = opt.overwrite,
	                              .touch = opt.touch,
	                              .same_owner = opt.same_owner,
	                              .by_name = !opt.numeric_owner,
	                              .same_permissions = opt.same_permissions,
	                              .warn = warn_entry,
	                              .warn_ctx = &j};
	zn_fs_target_start(&j.target);
	zn_result res = job_init(&j, r, select, opt.threads);
	if (res == ZN_OK)
		res = refuse_unsafe(&j);
	if (res == ZN_OK)
		res = check_space(&j, dir);
	if (res == ZN_OK)
		res = open_root(&j, dir);
	if (res == ZN_OK)
		res = extract_all(&j, dir);
	job_free(&j);
	zn_fs_target_end(&j.target);
	return res;
}
