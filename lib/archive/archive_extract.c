/* SPDX-License-Identifier: MIT */
/* archive_extract.c - parallel extraction and verification of archives.
 *
 * Both jobs walk the same plan: a map from each block to the pieces of files it holds ("segments",
 * in block order, built once from the index). N workers take blocks from a shared atomic cursor,
 * decode each block once (stored blocks are used straight from the mapping), check its XXH3 and
 * then handle every piece in it: extraction writes it with pwrite() into its file, verification
 * hashes it. Nothing is copied between threads; each worker owns its decode buffer.
 *
 * Extraction is done in phases so that no write can ever go through a symlink:
 *   1. directories (and missing parents), on the calling thread, in path order;
 *   2. file contents, by the workers: a file held in one block is created, written, given its
 *      mode, owner and times, and closed by one worker; a file spanning blocks is opened once
 *      under a striped lock, pre-sized, written piece by piece by whichever workers hold its
 *      blocks, and finished by the worker that writes its last outstanding piece;
 *   3. empty files, symlinks and hardlinks, on the calling thread, after all data;
 *   4. directory modes and times, deepest first, so that writing into them cannot change them.
 * Every path is opened relative to the target directory with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS) where the kernel has it, and otherwise component by component with
 * O_NOFOLLOW, so neither a symlink from the archive nor one already in the destination is ever
 * followed, and ".." or absolute paths are refused before anything is touched.
 *
 * A damaged block damages only the files that have bytes in it: they are named (in path order,
 * after the workers finish, so messages do not depend on timing) and removed, and every other file
 * is still extracted. The first system error (disk full, ...) cancels the remaining work.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sha256.h"
#include <zstd.h>

#include "archive_extract.h"
#include "common/xxh3.h"
#include "common/cpu_features.h"

void xreport(struct xjob *j, const struct xent *e, zn_result r, const char *what)
{
	if (!j->problem)
		return;
	char stack[512];
	/* In size_t: a crafted path of 2^32 - 1 bytes must not wrap the size to 0. */
	char *p = e->path_len < sizeof(stack) ? stack : malloc((size_t)e->path_len + 1);
	if (!p)
		return;
	if (e->path_len)
		memcpy(p, e->path, e->path_len);
	p[e->path_len] = 0;
	pthread_mutex_lock(&j->report_mu);
	j->problem(j->ctx, p, r, what);
	pthread_mutex_unlock(&j->report_mu);
	if (p != stack)
		free(p);
}

static void xreport_errno(struct xjob *j, const struct xent *e, const char *what, int err)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	xreport(j, e, err == EEXIST ? ZN_ERR_EXISTS : ZN_ERR_IO, msg);
}

void set_status(struct xjob *j, uint64_t i, uint8_t st)
{
	/* Byte stores from several workers: use an atomic to keep the sanitizer (and C11) happy. */
	__atomic_store_n(&j->status[i], st, __ATOMIC_RELAXED);
}

uint8_t get_status(struct xjob *j, uint64_t i)
{
	return __atomic_load_n(&j->status[i], __ATOMIC_RELAXED);
}

/* ST_OK -> st, and only from ST_OK: a file that was not overwritten (ST_FAILED) must never
 * become "damaged", which would have its pre-existing namesake removed. */
/* Returns whether this call made the change (so that one thread names what went wrong). */
static int downgrade_status(struct xjob *j, uint64_t i, uint8_t st)
{
	uint8_t ok = ST_OK;
	return __atomic_compare_exchange_n(&j->status[i], &ok, st, 0, __ATOMIC_RELAXED,
	                                   __ATOMIC_RELAXED);
}

static void system_error(struct xjob *j, zn_result r)
{
	pthread_mutex_lock(&j->mu);
	if (j->err == ZN_OK)
		j->err = r;
	atomic_store(&j->cancel, 1);
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* Whether the job is cancelled. The caller's stop flag (zn_extract_options.stop, set by a
 * signal handler on any thread, so read atomically) becomes a cancellation here, so every
 * phase has one thing to check and the clean-up treats a stop like any other cancellation. */
static int halted(struct xjob *j)
{
	const volatile sig_atomic_t *stop = j->opt ? j->opt->stop : NULL;
	if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED) && !atomic_load(&j->cancel))
		system_error(j, ZN_ERR_CANCELED);
	return atomic_load(&j->cancel);
}

/* The message for a file that could not be created (errno says why; temp < 0: its new copy
 * beside the old file, create_file). */
static void report_create_failure(struct xjob *j, const struct xent *e, int temp)
{
	int err = errno;
	if (temp < 0) {
		xreport_errno(j, e,
		              "not replaced (the old file is kept): cannot create the new one "
		              "beside it",
		              err);
		return;
	}
	if (err == ELOOP) { /* openat2's RESOLVE_NO_SYMLINKS, or O_NOFOLLOW on the name itself */
		/* No hint: where the archive has that directory, its own message gives one. */
		xreport(j, e, ZN_ERR_IO, "not created: a symlink on its path is not followed");
		return;
	}
	xreport_errno(j, e, err == EEXIST ? "not overwritten" : "cannot create", err);
}

/* ------------------------------------------------------------------------------------------------
 * Workers
 * ---------------------------------------------------------------------------------------------- */

/* Opens (creates) entry i's file for writing; on failure marks it failed and names it. */
static int open_output(struct xjob *j, struct dircache *dc, uint64_t i)
{
	struct xent *e = &j->ents[i];
	char base[256];
	int dfd = parent_fd(j, dc, e, base, sizeof(base));
	int temp = 0;
	int fd = dfd < 0 ? -1 : create_file(j, dfd, base, e->mode, i, &temp);
	if (fd < 0 && dfd >= 0 && (errno == EEXIST || errno == EISDIR) && j->skip_old) {
		set_status(j, i, ST_SKIPPED); /* kept as it is, and not named */
	} else if (fd < 0) {
		set_status(j, i, ST_FAILED);
		report_create_failure(j, e, temp);
	} else {
		__atomic_store_n(&j->created[i], (uint8_t)(temp ? 1 + temp : 1), __ATOMIC_RELAXED);
	}
	return fd;
}

/* A file written under its temporary name (create_file) takes the old one's name if it is
 * complete (ok), and is removed otherwise, leaving the old one as it was. 0, or -1 with errno
 * set and the temporary file removed. */
static int finish_temp(const struct xjob *j, int dfd, const char *base, uint64_t i, int temp,
                       int ok)
{
	char tmp[64];
	temp_name(j, i, temp - 1, tmp);
	if (ok && !renameat(dfd, tmp, dfd, base))
		return 0;
	int err = errno;
	unlinkat(dfd, tmp, 0);
	errno = err;
	return ok ? -1 : 0;
}

/* Entry i, if written under its temporary name, takes its own name when complete (status OK)
 * or goes, leaving the old file as it was. */
static void settle_temp(struct xjob *j, struct dircache *dc, uint64_t i)
{
	if (j->created[i] < 2)
		return;
	struct xent *e = &j->ents[i];
	char base[256];
	int dfd = parent_fd(j, dc, e, base, sizeof(base));
	int ok = j->status[i] == ST_OK;
	if (dfd < 0 || finish_temp(j, dfd, base, i, j->created[i] - 1, ok)) {
		if (ok)
			xreport_errno(j, e, "cannot replace the file that was there", errno);
		j->status[i] = ST_FAILED;
		ok = 0;
	}
	j->created[i] = (uint8_t)ok;
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
 * at all). Skipped bytes read back as zeros wherever they are: the file was made with O_EXCL,
 * and its size is set (pre-sized, or by the tail's ftruncate). */
static int hole_run(const uint8_t *p, uint64_t n, uint64_t size)
{
	return size && all_zero(p, n);
}

/* Writes `len` bytes at file offset `off`; returns 0 or an errno. With `size`, the file's final
 * size, runs of zero bytes (hole_run) are not written, as zstd and cp --sparse leave them: the
 * file was made with O_EXCL, so skipped bytes read back as zeros, and a skipped tail is made
 * part of the file by ftruncate (or, where that fails, by writing its last byte). */
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

/* Writes one piece of a file. `data` is NULL when the block could not be used (damaged). When
 * that or a cancellation of the job stops the piece, nothing is created, and a file already
 * created for earlier pieces is only closed (the clean-up after the workers removes it, as its
 * status is no longer ST_OK). A file is written only while its status is ST_OK. */
static void write_one(struct xjob *j, struct dircache *dc, uint64_t i, const struct xseg *s,
                      const uint8_t *data)
{
	struct xent *e = &j->ents[i];
	int multi = j->pieces[i] > 1;
	if (atomic_load(&j->cancel)) {
		/* A system error (a full disk) ended the job, maybe while this block was being
		 * decoded: nothing more is created or written. The file is named by that error. */
		data = NULL;
		downgrade_status(j, i, ST_FAILED);
	}
	int usable = data && get_status(j, i) == ST_OK;
	int fd = -1;
	if (!multi) {
		if (usable)
			fd = open_output(j, dc, i);
	} else {
		pthread_mutex_t *m = &j->stripes[i % 64];
		pthread_mutex_lock(m);
		if (j->fds[i] == -1 && usable) {
			int nfd = open_output(j, dc, i);
			j->fds[i] = nfd < 0 ? -2 : nfd;
			/* Pre-size; a hint only. */
			if (nfd >= 0 && ftruncate(nfd, (off_t)e->size)) {
			}
		}
		fd = j->fds[i];
		pthread_mutex_unlock(m);
	}
	if (fd >= 0 && usable) {
		int err = write_at(fd, data + s->boff, s->len, s->foff, j->sparse ? e->size : 0);
		if (err) {
			/* Named once, by the first of the workers writing its pieces; not when the
			 * source failed: the archive's mapping lost its pages (the file shrank),
			 * which is said once, at the end, or by the caller's SIGBUS handling. */
			if (err == EFAULT)
				atomic_store(&j->unreadable, 1);
			if (downgrade_status(j, i, ST_FAILED) && err != EFAULT)
				xreport_errno(j, e, "write failed", err);
			set_status(j, i, ST_FAILED);
			/* Too large for this file system or limit: that file only, as tar.
			 * Anything else (a full disk) ends the job. */
			if (err != EFBIG)
				system_error(j, ZN_ERR_IO);
		}
		atomic_fetch_add(&j->done_bytes, s->len);
	}
	if (multi) {
		if (atomic_fetch_sub(&j->left[i], 1) != 1)
			return; /* not the last piece */
		/* The last piece closes the file, whichever worker opened it: this one may have
		 * read fds[i] before another worker's piece created the file. */
		pthread_mutex_lock(&j->stripes[i % 64]);
		fd = j->fds[i];
		pthread_mutex_unlock(&j->stripes[i % 64]);
	}
	if (fd >= 0) {
		if (get_status(j, i) == ST_OK)
			apply_meta_fd(j, fd, e);
		close(fd);
	}
}

/* Writes one piece into its file and into the files stored once for it. */
static void write_piece(struct xjob *j, struct dircache *dc, const struct xseg *s,
                        const uint8_t *data)
{
	write_one(j, dc, s->entry, s, data);
	/* Only bytes that are there are given to the copies: visiting every copy for every piece
	 * of a damaged file would be work that writes nothing (settle_copies() ends them). */
	if (!data)
		return;
	for (uint64_t c = j->copy_next ? j->copy_next[s->entry] : 0; c; c = j->copy_next[c - 1])
		write_one(j, dc, c - 1, s, data);
}

/* The digest of a spanning file's bytes, `got` (NULL if some were missing), must be its
 * copies' too. Once per file, so the work stays within the number of files. */
static void judge_copies(struct xjob *j, uint64_t i, const uint8_t *got)
{
	for (uint64_t c = j->copy_next ? j->copy_next[i] : 0; c; c = j->copy_next[c - 1])
		if (!got || (j->ents[c - 1].has_digest && memcmp(got, j->ents[c - 1].sha256, 32)))
			downgrade_status(j, c - 1, ST_DAMAGED);
}

/* After the workers: a copy whose shared bytes did not load is damaged as its primary is
 * (verify writes nothing, so only this marks it); verify counts its bytes as checked. A copy
 * that did not get every piece (a damaged block, a cancelled job) is closed here, to be
 * removed by the clean-up. */
void settle_copies(struct xjob *j)
{
	for (uint64_t i = 0; j->primary_of && j->bytes_bad && i < j->n; i++) {
		uint64_t p = j->primary_of[i];
		if (!p)
			continue;
		if (j->bytes_bad[p - 1])
			downgrade_status(j, i, ST_DAMAGED);
		if (j->verify)
			atomic_fetch_add(&j->done_bytes, j->ents[i].size);
		else if (j->fds && atomic_load(&j->left[i])) {
			if (j->fds[i] >= 0)
				close(j->fds[i]);
			j->fds[i] = -1;
			downgrade_status(j, i, atomic_load(&j->cancel) ? ST_FAILED : ST_DAMAGED);
		}
	}
}

/* The digest of the last whole file hashed in the block at hand: files sharing its bytes
 * (identical files stored once, next to each other in the plan) are not hashed again. */
struct last_hash {
	uint64_t boff, len; /* len 0: none yet (no piece is empty) */
	uint8_t sha[32];
};

static void hash_piece(struct xjob *j, struct last_hash *h, const struct xseg *s,
                       const uint8_t *data)
{
	uint64_t i = s->entry;
	struct xent *e = &j->ents[i];
	if (!e->has_digest) {
		/* Asked to check digests, extraction keeps no file whose digest the index lost
		 * (verify names it as such: report_lost). */
		if ((e->lost & ZN_LOST_DIGEST) && !j->verify)
			downgrade_status(j, i, ST_DAMAGED);
		return;
	}
	if (j->pieces[i] == 1) {
		if (!data)
			return; /* the block failed to load: already marked damaged */
		if (h->boff != s->boff || h->len != s->len) {
			zn_sha256(data + s->boff, s->len, h->sha);
			h->boff = s->boff;
			h->len = s->len;
		}
		if (memcmp(h->sha, e->sha256, 32))
			downgrade_status(j, i, ST_DAMAGED);
		return;
	}
	/* Multi-block file: feed the shared context in block order (this worker holds the turn). */
	if (s->first || j->span_entry != i) {
		SHA256_Init(&j->span_ctx);
		j->span_entry = i;
		j->span_missing = 0;
	}
	if (data)
		SHA256_Update(&j->span_ctx, data + s->boff, s->len);
	else
		j->span_missing = 1;
	if (s->last) {
		uint8_t got[32];
		SHA256_Final(got, &j->span_ctx);
		const uint8_t *v = j->span_missing ? NULL : got;
		if (!v || memcmp(v, e->sha256, 32))
			downgrade_status(j, i, ST_DAMAGED);
		judge_copies(j, i, v);
		j->span_entry = UINT64_MAX;
	}
}

/* Block b failed its checksums. Where the archive has digests and the block still decodes to
 * its size, each file held whole in it is judged by its own SHA-256 and kept if it matches (a
 * flipped byte in a block of packed small files then costs the files it is in, not all of
 * them). Everything else with bytes in it is damaged. Returns the bytes to write the kept
 * files from, or NULL. */
static const uint8_t *salvage_block(struct xjob *j, uint64_t b, struct zn_block_cache *bc,
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
	for (uint64_t s = j->bstart[b]; s < j->bstart[b + 1]; s++) {
		const struct xseg *g = &j->segs[s];
		const struct xent *e = &j->ents[g->entry];
		if (data && j->pieces[g->entry] == 1 && e->has_digest) {
			if (h.boff != g->boff || h.len != g->len) {
				zn_sha256(data + g->boff, g->len, h.sha);
				h.boff = g->boff;
				h.len = g->len;
			}
			if (!memcmp(h.sha, e->sha256, 32)) {
				kept = 1;
				continue;
			}
		}
		downgrade_status(j, g->entry, ST_DAMAGED);
		if (j->bytes_bad) /* its copies follow: settle_copies() */
			__atomic_store_n(&j->bytes_bad[g->entry], 1, __ATOMIC_RELAXED);
	}
	if (kept)
		atomic_fetch_add(&j->blocks_salvaged, 1);
	return kept ? data : NULL;
}

/* Block b, checked, or what salvage_block keeps of it (NULL: nothing). */
static const uint8_t *load_block(struct xjob *j, struct zn_block_cache *bc, uint64_t b)
{
	struct zn_blockinfo bi;
	const uint8_t *data;
	const int info_ok = zn_block_info(j->r, b, &bi) == ZN_OK;
	zn_result res = info_ok ? zn_block_get(j->r, bc, b, &bi, bi.usize, ZN_BLOCK_CHECKED, &data)
	                        : ZN_ERR_CORRUPT;
	if (res == ZN_OK)
		return data;
	if (res == ZN_ERR_NOMEM) {
		system_error(j, res);
		return NULL;
	}
	return salvage_block(j, b, bc, info_ok ? &bi : NULL);
}

static void *xworker(void *arg)
{
	struct xjob *j = arg;
	struct zn_reader *r = j->r;
	struct zn_block_cache bc;
	zn_block_cache_init(&bc, r, 1);
	struct dircache dc = {.fd = -1, .len = (size_t)-1};
	const int hashing = j->verify || (j->opt && j->opt->check_digest);
	for (;;) {
		uint64_t w = atomic_fetch_add(&j->cursor, 1);
		if (w >= j->nwork)
			break;
		halted(j); /* a stop: the remaining pieces are skipped, the clean-up removes them */
		uint64_t b = j->work[w];
		int64_t span = j->span_idx[b];
		int cancel = atomic_load(&j->cancel);
		const uint8_t *data = cancel ? NULL : load_block(j, &bc, b);
		if (hashing && span >= 0) {
			pthread_mutex_lock(&j->mu);
			while (j->span_turn != span && !atomic_load(&j->cancel))
				pthread_cond_wait(&j->cv, &j->mu);
			pthread_mutex_unlock(&j->mu);
			/* Released by a cancellation rather than by its turn: the shared digest
			 * context is not this worker's to feed. */
			cancel = cancel || atomic_load(&j->cancel);
		}
		struct last_hash h = {0};
		for (uint64_t s = j->bstart[b]; s < j->bstart[b + 1]; s++) {
			const struct xseg *g = &j->segs[s];
			/* Extraction with check_digest hashes a piece before writing it: a file
			 * held in one block that does not match is never written; a longer one is
			 * removed after the workers when its last piece does not match. */
			if (hashing && !cancel)
				hash_piece(j, &h, g, data);
			if (j->verify)
				atomic_fetch_add(&j->done_bytes, g->len);
			else
				write_piece(j, &dc, g, cancel ? NULL : data);
		}
		zn_block_release(r, b);
		if (hashing && span >= 0) {
			pthread_mutex_lock(&j->mu);
			j->span_turn++;
			pthread_cond_broadcast(&j->cv);
			pthread_mutex_unlock(&j->mu);
		}
		if (j->progress && w % 4 == 0) {
			pthread_mutex_lock(&j->mu);
			j->progress(j->ctx, atomic_load(&j->done_bytes), r->content_bytes);
			pthread_mutex_unlock(&j->mu);
		}
	}
	dircache_drop(&dc);
	free(dc.path);
	zn_block_cache_free(&bc, r);
	return NULL;
}

static unsigned resolve_threads(unsigned threads)
{
	return threads ? threads : zn_cpu_count();
}

zn_result run_workers(struct xjob *j, unsigned threads)
{
	threads = resolve_threads(threads);
	if (threads > j->nwork)
		threads = j->nwork ? (unsigned)ZN_MIN(j->nwork, 256) : 1;
	pthread_t tids[256];
	unsigned started = 0;
	for (unsigned t = 1; t < threads && t < 256; t++) {
		if (pthread_create(&tids[started], NULL, xworker, j))
			break;
		started++;
	}
	xworker(j); /* the calling thread works too */
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Setup shared by extract and verify
 * ---------------------------------------------------------------------------------------------- */

/* Reading the entries out of the index (0.5 us each: 50 ms of serial work for 100,000 files
 * before a block is decoded) is shared by the threads, in ranges. */
struct init_range {
	struct xjob *j;
	uint64_t lo, hi;
};

/* Row i as the extractor keeps it (xent), or non-zero if it cannot be read. Fields lost to a
 * damaged index page that only describe the entry are not applied: what was lost stays as the
 * extraction makes it (mode 0644, a new directory's 0755, as a stored mode is applied; this
 * user as the owner, without a file's set-id bits, apply_owner; the time it is written,
 * entry_times), and an existing directory keeps its mode and owner (mkdir_beneath). Extract
 * names each entry it extracts so at its end, verify each in job_init (report_lost). */
static int read_entry(struct xjob *j, uint64_t i, struct xent *x)
{
	struct zn_entry e;
	const uint8_t *sha;
	unsigned lost;
	if (zn_entry_fields(j->r, i, &e, &sha, &lost) != ZN_OK || e.path_len > UINT32_MAX ||
	    e.link_len > UINT32_MAX || e.uname_len > 255 || e.gname_len > 255)
		return -1;
	if (lost & ZN_LOST_MODE)
		e.mode = e.type == ZN_TYPE_DIR ? 0755 : 0644;
	*x = (struct xent){
	        .path = e.path,
	        .link = e.link,
	        .uname = e.uname,
	        .gname = e.gname,
	        .sha256 = sha,
	        .mtime_ns = e.mtime_ns,
	        .size = e.size,
	        .block_offset = e.block_offset,
	        .path_len = (uint32_t)e.path_len,
	        .link_len = (uint32_t)e.link_len,
	        .mode = e.mode,
	        .uid = e.uid,
	        .gid = e.gid,
	        .first_block = e.first_block,
	        .type = (uint8_t)e.type,
	        .has_digest = e.has_digest != 0,
	        .lost = lost & 31,
	        .uname_len = (uint8_t)e.uname_len,
	        .gname_len = (uint8_t)e.gname_len,
	};
	return 0;
}

/* Leaves the first n components off e's path, as tar --strip-components; non-zero if that is
 * all of it. */
static int strip_path(struct xent *e, unsigned n)
{
	uint32_t at = 0;
	for (unsigned k = 0; k < n; k++) {
		const char *slash = memchr(e->path + at, '/', e->path_len - at);
		if (!slash)
			return -1;
		at = (uint32_t)(slash - e->path) + 1;
	}
	if (at == e->path_len)
		return -1;
	e->path += at;
	e->path_len -= at;
	e->strip = at;
	return 0;
}

static void *read_entries(void *arg)
{
	struct init_range *p = arg;
	struct xjob *j = p->j;
	for (uint64_t i = p->lo; i < p->hi; i++) {
		if (j->select && !j->select[i])
			j->status[i] = ST_SKIPPED;
		else if (read_entry(j, i, &j->ents[i])) {
			/* Unreadable: no path, so nothing later reports or compares it as a file
			 * (it was reported as unreadable once, in job_init). */
			memset(&j->ents[i], 0, sizeof(j->ents[i]));
			j->status[i] = ST_DAMAGED;
		} else if (j->strip && strip_path(&j->ents[i], j->strip)) {
			j->status[i] = ST_SKIPPED; /* nothing is left of its path */
		}
	}
	return NULL;
}

static uint64_t below_start(const struct xjob *j, uint64_t i);

/* Paths that point into the mapped archive (a column or page stored raw; decoded ones are the
 * reader's own memory) are copied: should the file shrink under the extraction (the command
 * then maps zeros there and stops it), the files begun are still found by name and removed. */
static int in_map(const struct zn_reader *r, const struct xent *e)
{
	const uintptr_t p = (uintptr_t)e->path, lo = (uintptr_t)r->map;
	return e->path && r->mapped && p - lo < r->map_size;
}

static zn_result own_paths(struct xjob *j)
{
	uint64_t total = 0;
	for (uint64_t i = 0; i < j->n; i++)
		if (in_map(j->r, &j->ents[i]))
			total += (uint64_t)j->ents[i].path_len + j->ents[i].strip;
	if (!total)
		return ZN_OK;
	char *at = j->paths = malloc(total);
	if (!at)
		return ZN_ERR_NOMEM;
	for (uint64_t i = 0; i < j->n; i++) {
		struct xent *e = &j->ents[i];
		if (!in_map(j->r, e))
			continue;
		memcpy(at, e->path - e->strip, (size_t)e->path_len + e->strip);
		e->path = at + e->strip;
		at += e->path_len + e->strip;
	}
	return ZN_OK;
}

/* Whether stored path a sorts before b (memcmp, a prefix first), as index rows must. */
static int path_before(const struct xent *a, const struct xent *b)
{
	const char *ap = a->path - a->strip, *bp = b->path - b->strip;
	size_t al = a->path_len + a->strip, bl = b->path_len + b->strip;
	int c = memcmp(ap, bp, ZN_MIN(al, bl));
	return c < 0 || (c == 0 && al < bl);
}

/* A symlink's target as the file system can hold it: not empty, no NUL (a crafted one would be
 * cut at the NUL, or refused by symlink()). */
static int symlink_target_ok(const struct xent *e)
{
	return e->link && e->link_len && !memchr(e->link, 0, e->link_len);
}

/* Rows the writer never makes: a path not after the one before it (out of order, or twice),
 * paths below one the archive holds as something other than a directory, and a symlink whose
 * target no file system holds. Each is named, in path order, and then treated as an unreadable
 * row (damaged, no path), so that nothing is made of it and no other file is taken for it ("File
 * exists"). With a selection the rows not selected have no path, so the search for what lies
 * below a file may miss (never invent) such rows. */
static zn_result refuse_unsound_rows(struct xjob *j)
{
	uint8_t *why = calloc(j->n ? j->n : 1, 1);
	if (!why)
		return ZN_ERR_NOMEM;
	enum { ORDER = 1, BELOW, TARGET };
	static const char *const says[] = {
	        [ORDER] = "index rows out of order (or a path twice): damaged",
	        [BELOW] = "below a path the archive holds as a file or link: damaged",
	        [TARGET] = "symlink target empty or holding a NUL byte: damaged",
	};
	uint64_t prev = UINT64_MAX, any = 0;
	for (uint64_t i = 0; i < j->n; i++) {
		const struct xent *e = &j->ents[i];
		if (!e->path || why[i])
			continue;
		if (prev != UINT64_MAX && !path_before(&j->ents[prev], e)) {
			why[i] = ORDER;
			any++;
			continue;
		}
		prev = i;
		if (e->type == ZN_TYPE_SYMLINK && !symlink_target_ok(e)) {
			why[i] = TARGET;
			any++;
		}
		if (e->type == ZN_TYPE_DIR)
			continue;
		const char *ep = e->path - e->strip;
		size_t elen = e->path_len + e->strip;
		/* The rows that start with the path follow it: most files are no prefix of the next
		 * row, and then of none (a search otherwise, past names with a byte below '/'). */
		const struct xent *nx = i + 1 < j->n ? &j->ents[i + 1] : NULL;
		if (!nx || (nx->path && (nx->path_len + nx->strip <= elen ||
		                         memcmp(nx->path - nx->strip, ep, elen))))
			continue;
		for (uint64_t k = below_start(j, i); k < j->n; k++) {
			const struct xent *f = &j->ents[k];
			if (!f->path)
				break;
			const char *fp = f->path - f->strip;
			size_t flen = f->path_len + f->strip;
			if (flen <= elen || fp[elen] != '/' || memcmp(fp, ep, elen))
				break;
			why[k] = BELOW;
			any++;
		}
	}
	for (uint64_t i = 0; any && i < j->n; i++) {
		if (!why[i])
			continue;
		if (j->status[i] == ST_OK || j->status[i] == ST_SKIPPED)
			xreport(j, &j->ents[i], ZN_ERR_CORRUPT, says[why[i]]);
		memset(&j->ents[i], 0, sizeof(j->ents[i]));
		j->status[i] = ST_DAMAGED;
	}
	free(why);
	return ZN_OK;
}

/* Names an entry of which some fields were lost (read_entry), saying which. */
static void report_lost(struct xjob *j, const struct xent *e)
{
	char msg[96];
	zn_lost_message(e->lost, msg);
	j->lost_any = 1;
	xreport(j, e, ZN_ERR_CORRUPT, msg); /* nothing without a problem hook */
}

zn_result job_init(struct xjob *j, struct zn_reader *r, const uint8_t *select, unsigned threads)
{
	j->r = r;
	j->n = r->nentries;
	j->select = select;
	j->rootfd = -1;
	j->span_entry = UINT64_MAX;
	static _Atomic unsigned jobs;
	j->seq = atomic_fetch_add(&jobs, 1);
	pthread_mutex_init(&j->mu, NULL);
	pthread_mutex_init(&j->report_mu, NULL);
	pthread_mutex_init(&j->names_mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	for (int i = 0; i < 64; i++)
		pthread_mutex_init(&j->stripes[i], NULL);
	size_t n1 = j->n ? j->n : 1;
	j->ents = calloc(n1, sizeof(*j->ents));
	j->status = calloc(n1, 1);
	j->created = calloc(n1, 1);
	j->pieces = calloc(n1, sizeof(uint64_t));
	if (!j->ents || !j->status || !j->created || !j->pieces)
		return ZN_ERR_NOMEM;
	threads = (unsigned)ZN_MIN(ZN_MIN(resolve_threads(threads), 16), j->n / 8192 + 1);
	pthread_t tids[16];
	struct init_range parts[16];
	unsigned started = 0;
	for (unsigned t = 0; t < threads; t++)
		parts[t] = (struct init_range){j, j->n * t / threads, j->n * (t + 1) / threads};
	for (unsigned t = 1; t < threads; t++) {
		if (pthread_create(&tids[started], NULL, read_entries, &parts[t]))
			break;
		started++;
	}
	read_entries(&parts[0]);
	if (started + 1 < threads) { /* the ranges that could not be started are done here */
		parts[started + 1].hi = j->n;
		read_entries(&parts[started + 1]);
	}
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	/* Damaged entries are reported in order, whatever the thread count: by path where the path
	 * can still be read (a damaged index page in another column, or a crafted archive). */
	for (uint64_t i = 0; i < j->n; i++) {
		if (j->ents[i].lost && j->status[i] == ST_OK) {
			if (j->verify) /* extract names those it extracts, at its end */
				report_lost(j, &j->ents[i]);
			continue;
		}
		if (j->status[i] != ST_DAMAGED || !j->problem)
			continue;
		struct zn_entry e;
		zn_result why = zn_reader_entry(r, i, &e);
		const char *p;
		size_t len;
		char *name = NULL, num[64];
		if (zn_entry_path(r, i, &p, &len) == ZN_OK && len && !memchr(p, 0, len))
			name = strndup(p, len);
		snprintf(num, sizeof(num), "entry %llu", (unsigned long long)i);
		j->problem(j->ctx, name ? name : num, why,
		           name ? "metadata unreadable in the index (damaged)"
		                : "entry unreadable in the index");
		free(name);
	}
	zn_result res = own_paths(j);
	return res == ZN_OK ? refuse_unsound_rows(j) : res;
}

void job_free(struct xjob *j)
{
	free(j->ents);
	free(j->paths);
	free(j->status);
	free(j->created);
	free(j->pieces);
	free(j->copy_next);
	free(j->primary_of);
	free(j->bytes_bad);
	free(j->bstart);
	free(j->segs);
	free(j->work);
	free(j->span_idx);
	free(j->reopened);
	free(j->fds);
	free(j->left);
	if (j->rootfd >= 0)
		close(j->rootfd);
	pthread_mutex_destroy(&j->mu);
	pthread_mutex_destroy(&j->report_mu);
	pthread_mutex_destroy(&j->names_mu);
	pthread_cond_destroy(&j->cv);
	for (int i = 0; i < 64; i++)
		pthread_mutex_destroy(&j->stripes[i]);
}

void zn_extract_options_init(struct zn_extract_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->same_owner = geteuid() == 0;
	opt->same_permissions = geteuid() == 0;
	opt->sparse = 1;
}

/* After the workers: blocks that failed their checksums are named once, in a line of their own
 * (their damaged files are named one by one). Returns whether there were any. */
int report_bad_blocks(struct xjob *j)
{
	uint64_t bad = atomic_load(&j->blocks_bad), kept = atomic_load(&j->blocks_salvaged);
	if (bad && j->problem) {
		char msg[200];
		const int one = bad == 1;
		snprintf(msg, sizeof(msg), "%llu data block%s not match %s checksum%s%s%s",
		         (unsigned long long)bad, one ? " does" : "s do", one ? "its" : "their",
		         one ? "" : "s", kept ? "; the files held whole in " : "",
		         kept ? (one ? "it whose SHA-256 matches are intact"
		                     : "them whose SHA-256 matches are intact")
		              : "");
		pthread_mutex_lock(&j->report_mu);
		j->problem(j->ctx, "(data)", ZN_ERR_CHECKSUM, msg);
		pthread_mutex_unlock(&j->report_mu);
	}
	return bad != 0;
}

static int cmp_stripped(const void *a, const void *b, void *ctx)
{
	const struct xjob *j = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	const struct xent *e = &j->ents[x], *f = &j->ents[y];
	int c = memcmp(e->path, f->path, ZN_MIN(e->path_len, f->path_len));
	if (!c)
		c = e->path_len < f->path_len ? -1 : e->path_len > f->path_len;
	return c ? c : x < y ? -1 : x > y;
}

/* strip_components: entries that become one path are as with tar, where the later one in the
 * archive (in path order) replaces the earlier. Only the last of each name is extracted, so
 * the result does not depend on which is written first. */
static zn_result keep_last_of_names(struct xjob *j)
{
	uint64_t *ix = malloc((j->n ? j->n : 1) * sizeof(uint64_t)), m = 0;
	if (!ix)
		return ZN_ERR_NOMEM;
	for (uint64_t i = 0; i < j->n; i++)
		if (j->status[i] == ST_OK)
			ix[m++] = i;
	qsort_r(ix, m, sizeof(*ix), cmp_stripped, j);
	for (uint64_t k = 0; k + 1 < m; k++) {
		const struct xent *e = &j->ents[ix[k]], *f = &j->ents[ix[k + 1]];
		if (e->path_len == f->path_len && !memcmp(e->path, f->path, e->path_len))
			j->status[ix[k]] = ST_SKIPPED;
	}
	free(ix);
	return ZN_OK;
}

/* The first row after row i whose path is at or after "PATH/" (PATH: row i's) in path order, where
 * the rows below it begin: a binary search, as names "PATH" + a byte below '/' may come first, and
 * a crafted archive may hold many of them. Rows whose path could not be read (no path, length 0)
 * sort first; a crafted archive out of order only makes the count wrong. */
static uint64_t below_start(const struct xjob *j, uint64_t i)
{
	/* In the order of the stored paths, before any strip_components, which may not keep it. */
	const struct xent *e = &j->ents[i];
	const char *ep = e->path - e->strip;
	size_t elen = e->path_len + e->strip;
	uint64_t lo = i + 1, hi = j->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct xent *f = &j->ents[mid];
		const char *fp = f->path - f->strip;
		size_t flen = f->path_len + f->strip;
		size_t n = ZN_MIN(flen, elen);
		int c = n ? memcmp(fp, ep, n) : 0;
		if (!c && flen > elen)
			c = (unsigned char)fp[elen] < '/' ? -1 : 1;
		else if (!c)
			c = -1; /* f is a prefix of PATH (or PATH itself): before "PATH/" */
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A directory that existed and is kept only because the index lost its mode (mkdir_beneath): it
 * is extracted, as far as anything of it is, where keep_dirs' ones are passed over. */
static int kept_for_lost(const struct xjob *j, uint64_t i)
{
	return j->status[i] == ST_KEPT && !j->keep_dirs;
}
/* Phase 4: directory modes and times, deepest (last in path order) first (of a directory
 * that existed, with no_overwrite_dir, the times alone, as tar's); then the modes of the
 * existing directories keep_dirs opened up. */
static void restore_dirs(struct xjob *j, struct dircache *dc)
{
	char base[256];
	for (uint64_t i = j->n; i-- > 0;) {
		const struct xent *e = &j->ents[i];
		int kept = (j->status[i] == ST_KEPT && j->opt->no_overwrite_dir) ||
		           kept_for_lost(j, i);
		if ((j->status[i] != ST_OK && !kept) || e->type != ZN_TYPE_DIR)
			continue;
		int dfd = parent_fd(j, dc, e, base, sizeof(base));
		if (dfd >= 0)
			(kept ? apply_times_at : apply_meta_dir)(j, dfd, base, e);
	}
	for (size_t k = j->nreopened; k-- > 0;) {
		const struct reopened *o = &j->reopened[k];
		int dfd = parent_fd(j, dc, &j->ents[o->i], base, sizeof(base));
		if (dfd < 0 || chmod_dir(dfd, base, o->mode)) {
			char msg[96];
			snprintf(msg, sizeof(msg), "could not give back its mode %04o: %s",
			         (unsigned)o->mode, strerror(errno));
			xreport(j, &j->ents[o->i], ZN_OK, msg);
		}
	}
	j->nreopened = 0;
}

/* Copy a file's content from the archive into an already created file (hardlinks whose target
 * was not extracted). */
struct fd_sink {
	int fd;
};

static zn_result sink_fd(void *ctx, const void *data, size_t len)
{
	return zn_write_all(((struct fd_sink *)ctx)->fd, data, len);
}

zn_result zn_extract(struct zn_reader *r, const char *dir, const uint8_t *select,
                     const struct zn_extract_options *opt_in, zn_problem_fn problem,
                     zn_progress_fn progress, void *ctx)
{
	if (!r || !dir || !*dir)
		return ZN_ERR_INVALID_ARG;
	struct zn_extract_options opt;
	if (opt_in)
		opt = *opt_in;
	else
		zn_extract_options_init(&opt);
	struct xjob j;
	memset(&j, 0, sizeof(j));
	j.opt = &opt;
	j.problem = problem;
	j.progress = progress;
	j.ctx = ctx;
	j.same_owner = opt.same_owner;
	j.by_name = !opt.numeric_owner;
	j.sparse = opt.sparse;
	j.strip = opt.strip_components;
	j.skip_old = opt.skip_existing && !opt.overwrite;
	j.keep_dirs = j.skip_old || opt.no_overwrite_dir;
	j.umask = read_umask();
	/* Without /proc the umask cannot be read without changing it (a race with the program's
	 * other threads): the common 022 stands in. */
	j.perm_mask =
	        opt.same_permissions ? 07777 : 0777 & ~(uint32_t)(j.umask < 0 ? 022 : j.umask);
	j.euid = geteuid();
	j.egid = getegid();
	zn_result res = job_init(&j, r, select, opt.threads);
	if (res != ZN_OK)
		goto out;
	if ((mkdir(dir, 0755) && errno != EEXIST) ||
	    (j.rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (problem) {
			char msg[128];
			snprintf(msg, sizeof(msg), "cannot use as the target directory: %s",
			         strerror(errno));
			problem(ctx, dir, ZN_ERR_IO, msg);
		}
		res = ZN_ERR_IO;
		goto out;
	}
	/* Refuse unsafe paths before touching anything. */
	for (uint64_t i = 0; i < j.n; i++) {
		if (j.status[i] != ST_OK)
			continue;
		struct xent *e = &j.ents[i];
		if (!zn_path_is_safe(e->path, e->path_len)) {
			xreport(&j, e, ZN_ERR_UNSAFE_PATH,
			        "unsafe path (absolute, empty or with '..'); skipped");
			j.status[i] = ST_DAMAGED;
		}
	}
	if (j.strip && (res = keep_last_of_names(&j)) != ZN_OK)
		goto out;
	/* Phase 1: directories. */
	struct dircache dc = {.fd = -1, .len = (size_t)-1};
	for (uint64_t i = 0; i < j.n && !halted(&j); i++) {
		struct xent *e = &j.ents[i];
		if (j.status[i] != ST_OK || e->type != ZN_TYPE_DIR)
			continue;
		int made = mkdir_beneath(&j, &dc, e);
		if (made > 0) {
			j.status[i] = ST_KEPT; /* an existing directory, keep_dirs */
		} else if (made < 0) {
			int err = errno;
			j.status[i] = ST_FAILED;
			/* What is below it cannot be extracted either: said once, here. In path
			 * order "d/..." follows "d" after the names "d" + a byte below '/'. */
			uint64_t below = 0;
			for (uint64_t k = below_start(&j, i); k < j.n; k++) {
				const struct xent *f = &j.ents[k];
				if (f->path_len <= e->path_len || f->path[e->path_len] != '/' ||
				    memcmp(f->path, e->path, e->path_len))
					break;
				if (j.status[k] == ST_OK) {
					j.status[k] = ST_FAILED;
					below++;
				}
			}
			char msg[256], more[64] = "";
			if (below == 1)
				snprintf(more, sizeof(more),
				         "; the entry below it is not extracted");
			else if (below)
				snprintf(more, sizeof(more),
				         "; the %llu entries below it are not extracted",
				         (unsigned long long)below);
			if (err == EEXIST)
				snprintf(msg, sizeof(msg),
				         "not overwritten: something that is not a directory "
				         "stands where the archive has one%s",
				         more);
			else if (err == ELOOP) /* a symlink on its path (openat2, O_NOFOLLOW) */
				snprintf(msg, sizeof(msg),
				         "not created: a symlink on its path is not followed%s",
				         more);
			else
				snprintf(msg, sizeof(msg), "cannot create directory: %s%s",
				         strerror(err), more);
			xreport(&j, e, err == EEXIST ? ZN_ERR_EXISTS : ZN_ERR_IO, msg);
		}
		/* The cached parent stays valid: only successful opens are cached, and the only
		 * directories ever removed are empty ones where the archive has a file or link
		 * (--overwrite, remove_old), which a valid archive never also has below a path.
		 * A crafted one that does gets a timing-dependent result, never a write outside
		 * the target: a removed directory's descriptor creates nothing. */
	}
	/* --skip-old-files: what exists is passed over before any block is read, so that damage in
	 * blocks only such files use does not count, whatever the timing. */
	for (uint64_t i = 0; j.skip_old && i < j.n && !halted(&j); i++) {
		struct xent *e = &j.ents[i];
		if (j.status[i] != ST_OK || e->type == ZN_TYPE_DIR)
			continue;
		char base[256];
		int dfd = parent_fd(&j, &dc, e, base, sizeof(base));
		struct stat st;
		if (dfd >= 0 && !fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
			j.status[i] = ST_SKIPPED;
	}
	/* Phase 2: contents. */
	res = build_plan(&j);
	if (res == ZN_OK) {
		j.fds = malloc((j.n ? j.n : 1) * sizeof(int));
		j.left = malloc((j.n ? j.n : 1) * sizeof(*j.left));
		if (!j.fds || !j.left)
			res = ZN_ERR_NOMEM;
	}
	if (res != ZN_OK) { /* the directories made or opened up still get their modes */
		restore_dirs(&j, &dc);
		goto out_dc;
	}
	for (uint64_t i = 0; i < j.n; i++) {
		j.fds[i] = -1;
		atomic_init(&j.left[i], j.pieces[i]);
	}
	run_workers(&j, opt.threads);
	settle_copies(&j);
	/* Files written under a temporary name replace their old namesakes now, before any
	 * hardlink looks for them by name; unfinished ones go, and the old ones stay. */
	for (uint64_t i = 0; i < j.n; i++)
		settle_temp(&j, &dc, i);
	/* Phase 3: empty files, then symlinks and hardlinks (a hardlink to an empty file must find
	 * the file this job created, not an older one of the same name). */
	for (uint64_t i = 0; i < j.n; i++) {
		struct xent *e = &j.ents[i];
		if (j.status[i] != ST_OK || e->type != ZN_TYPE_FILE || e->size)
			continue;
		if (halted(&j)) {
			j.status[i] = ST_FAILED; /* not made: neither listed nor counted as made */
			continue;
		}
		int fd = open_output(&j, &dc, i);
		if (fd < 0)
			continue; /* named, and marked failed */
		apply_meta_fd(&j, fd, e);
		close(fd);
		settle_temp(&j, &dc, i);
	}
	/* Hardlinks whose target is not extracted: the first of each group gets the content, and
	 * stand_in[target] = its index + 1, for the others to link to (calloc'd on first need; a
	 * failed allocation only writes the content again for each). */
	uint64_t *stand_in = NULL;
	for (uint64_t i = 0; i < j.n; i++) {
		struct xent *e = &j.ents[i];
		if (j.status[i] != ST_OK)
			continue;
		char base[256];
		if (e->type == ZN_TYPE_SYMLINK || e->type == ZN_TYPE_HARDLINK) {
			if (halted(&j)) {
				j.status[i] = ST_FAILED; /* not made, as above */
				continue;
			}
			int dfd = parent_fd(&j, &dc, e, base, sizeof(base));
			char *target = e->link ? strndup(e->link, e->link_len) : NULL;
			const char *why = NULL; /* a reason that errno does not carry */
			const char *damaged_why = NULL;
			int temp = 0; /* < 0: no new file could be made beside the old one */
			int rc = -1;
			if (dfd >= 0 && target) {
				if (e->type == ZN_TYPE_SYMLINK) {
					struct linkspec l = {target, -1, NULL};
					rc = place_link(&j, &l, dfd, base, i);
					if (!rc)
						apply_meta_link(&j, dfd, base, e);
				} else {
					rc = -1;
					uint64_t t;
					const int found = zn_reader_find(r, e->link, e->link_len,
					                                 &t) == ZN_OK;
					/* Target not selected, or not written (it existed). */
					const int absent = found && (j.status[t] == ST_SKIPPED ||
					                             j.status[t] == ST_FAILED);
					if (found && j.ents[t].type == ZN_TYPE_FILE &&
					    j.status[t] == ST_OK &&
					    zn_path_is_safe(e->link, e->link_len)) {
						rc = place_hardlink(&j, t, dfd, base, i);
					} else if (absent && stand_in && stand_in[t] &&
					           j.status[stand_in[t] - 1] == ST_OK) {
						/* An earlier link of the group holds the content
						 * already: this one links to it, as on disk. */
						rc = place_hardlink(&j, stand_in[t] - 1, dfd, base,
						                    i);
					} else if (absent) {
						/* Write the content here, and link the group's
						 * other members to this one. */
						if (!stand_in)
							stand_in = calloc(j.n, sizeof(*stand_in));
						int fd = create_file(&j, dfd, base, e->mode, i,
						                     &temp);
						if (fd >= 0) {
							struct fd_sink s = {fd};
							zn_result got = zn_reader_read_entry(
							        r, i, sink_fd, &s);
							if (got == ZN_OK)
								apply_meta_fd(&j, fd, e);
							close(fd);
							rc = got == ZN_OK ? 0 : -1;
							if (temp)
								rc = finish_temp(&j, dfd, base, i,
								                 temp, !rc);
							else if (rc)
								unlinkat(dfd, base, 0);
							if (!rc && stand_in)
								stand_in[t] = i + 1;
							if (got == ZN_ERR_CHECKSUM ||
							    got == ZN_ERR_CORRUPT) {
								rc = -1;
								damaged_why = "damaged in the "
								              "archive (the "
								              "content of its "
								              "target); not "
								              "extracted";
							} else if (got != ZN_OK) {
								rc = -1;
								errno = got == ZN_ERR_NOMEM ? ENOMEM
								                            : EIO;
							}
						}
					} else {
						why = "cannot create hardlink: its target was not "
						      "extracted";
					}
				}
			}
			if (rc && damaged_why) {
				xreport(&j, e, ZN_ERR_CHECKSUM, damaged_why);
				j.status[i] = ST_DAMAGED;
			} else if (rc && why) {
				xreport(&j, e, ZN_ERR_IO, why);
				j.status[i] = ST_FAILED;
			} else if (rc && (temp < 0 || (errno == EEXIST && opt.overwrite))) {
				report_create_failure(&j, e, -1);
				j.status[i] = ST_FAILED;
			} else if (rc && (errno == EEXIST || errno == EISDIR) && j.skip_old) {
				j.status[i] = ST_SKIPPED; /* kept as it is, and not named */
			} else if (rc && errno == EEXIST && !opt.overwrite) {
				report_create_failure(&j, e, 0); /* "not overwritten" */
				j.status[i] = ST_FAILED;
			} else if (rc && errno == ELOOP) {
				xreport(&j, e, ZN_ERR_IO,
				        "not created: a symlink on its path is not followed");
				j.status[i] = ST_FAILED;
			} else if (rc) {
				xreport_errno(&j, e,
				              e->type == ZN_TYPE_SYMLINK ? "cannot create symlink"
				                                         : "cannot create hardlink",
				              errno);
				j.status[i] = ST_FAILED;
			}
			free(target);
		}
	}
	free(stand_in);
	halted(&j); /* a stop that came after the last check still makes the result CANCELED */
	/* Entries extracted without what the damaged index lost of them, in path order; an
	 * existing directory kept under keep_dirs (unless it was to get its lost time) and files
	 * passed over are not named; after a stop or a system error, none (not all were made). */
	for (uint64_t i = 0; i < j.n && j.err == ZN_OK && !atomic_load(&j.cancel); i++)
		if (j.ents[i].lost && (j.status[i] == ST_OK || kept_for_lost(&j, i) ||
		                       (j.status[i] == ST_KEPT && opt.no_overwrite_dir &&
		                        (j.ents[i].lost & ZN_LOST_MTIME))))
			report_lost(&j, &j.ents[i]);
	/* Damaged files are named in path order. Files this job created but could not finish
	 * (damaged, a write error, cancelled) are removed. A file it did not create is left alone:
	 * with --overwrite an old file is replaced only by a complete new one (create_file). */
	for (uint64_t i = 0; i < j.n; i++) {
		struct xent *e = &j.ents[i];
		if (j.status[i] == ST_OK || e->type != ZN_TYPE_FILE)
			continue;
		int damaged = j.status[i] == ST_DAMAGED && j.pieces[i]; /* else named by the plan */
		if (damaged)
			xreport(&j, e, ZN_ERR_CHECKSUM, "damaged in the archive; not extracted");
		if (j.created[i] != 1)
			continue; /* what was there before stays */
		char base[256];
		int dfd = parent_fd(&j, &dc, e, base, sizeof(base));
		if (dfd >= 0)
			unlinkat(dfd, base, 0);
	}
	restore_dirs(&j, &dc); /* Phase 4 */
	if (j.progress)
		j.progress(j.ctx, atomic_load(&j.done_bytes), r->content_bytes);
	res = j.err;
	if (res == ZN_ERR_IO) { /* a failed write stopped the job: how much it left undone */
		uint64_t undone = 0;
		for (uint64_t i = 0; i < j.n; i++)
			undone += j.status[i] == ST_FAILED && j.ents[i].type != ZN_TYPE_DIR;
		if (problem && undone) {
			char msg[160];
			snprintf(msg, sizeof(msg),
			         "extraction stopped at %s: %llu entr%s not extracted, the others "
			         "are complete",
			         atomic_load(&j.unreadable)
			                 ? "a block the archive no longer held (it shrank?)"
			                 : "the failed write above",
			         (unsigned long long)undone, undone == 1 ? "y is" : "ies are");
			problem(ctx, dir, ZN_ERR_IO, msg);
		}
	}
	/* After a failed write too: what is marked OK then is made and complete (-v lists it). */
	for (uint64_t i = 0; (res == ZN_OK || res == ZN_ERR_IO) && opt.extracted && i < j.n; i++)
		if (j.status[i] == ST_OK || kept_for_lost(&j, i))
			opt.extracted(j.ctx, j.ents[i].path, j.ents[i].path_len);
	if (res == ZN_OK) {
		int damaged = report_bad_blocks(&j) | j.lost_any, failed = 0;
		for (uint64_t i = 0; i < j.n; i++) {
			damaged |= j.status[i] == ST_DAMAGED;
			failed |= j.status[i] == ST_FAILED;
		}
		res = damaged ? ZN_ERR_DAMAGED : failed ? ZN_ERR_IO : ZN_OK;
	}
out_dc:
	dircache_drop(&dc);
	free(dc.path);
out:
	job_free(&j);
	return res;
}
