/* SPDX-License-Identifier: MIT */
/* archive_job.c - the job extract and verify share: its entries read from the index, rows the
 * writer never makes refused, reports.
 *
 * Every row is read once, on the job's pool (reading a row takes about 0.5 us: 50 ms of serial
 * work for 100,000 files before a block is decoded), into a job_entry of 24 bytes: its path, type,
 * fields lost and status. What else a phase needs of a row it reads again from the index
 * (job_read_row), which the reader holds decoded anyway. Rows that cannot be read, and rows the
 * writer never makes (out of order, below a file, a symlink no file system can hold), are named
 * in path order whatever the thread count, and then have no path: nothing is made of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_extract.h"
#include "common/cpu_features.h"

/* Rows per part of the parallel reading of the rows: fewer rows are read on one thread. */
#define ROWS_PER_PART 8192
/* At most this many parts read rows: a row's pages of compressed columns are decoded under the
 * reader's one lock (zn_row), which more threads would only queue on. */
#define ROW_PARTS_MAX 16

void job_report(struct job *j, uint64_t i, zn_result r, const char *what)
{
	if (!j->problem)
		return;
	const struct job_entry *e = &j->ents[i];
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

void job_report_errno(struct job *j, uint64_t i, const char *what, int err)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	job_report(j, i, err == EEXIST ? ZN_ERR_EXISTS : ZN_ERR_IO, msg);
}

void job_report_lost(struct job *j, uint64_t i)
{
	char msg[96];
	zn_lost_message(j->ents[i].lost, msg);
	j->lost_any = 1;
	job_report(j, i, ZN_ERR_CORRUPT, msg); /* nothing without a problem hook */
}

int job_report_bad_blocks(struct job *j)
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

void job_fail(struct job *j, zn_result r)
{
	zn_pool_fail(j->pool, r);
	/* Workers waiting for their turn to hash wake up and see the cancellation. */
	pthread_mutex_lock(&j->mu);
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

int job_halted(struct job *j)
{
	/* The stop flag is set by a signal handler on any thread, so read atomically. */
	const volatile sig_atomic_t *stop = j->opt ? j->opt->stop : NULL;
	if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED) && !zn_pool_canceled(j->pool))
		job_fail(j, ZN_ERR_CANCELED);
	return zn_pool_canceled(j->pool);
}

/* ------------------------------------------------------------------------------------------------
 * Rows
 * ---------------------------------------------------------------------------------------------- */

/* Row i's fields as zn_entry_fields reads them, within the job's limits; non-zero if it cannot
 * be read. */
static int read_fields(struct job *j, uint64_t i, struct zn_entry *e, const uint8_t **sha,
                       unsigned *lost)
{
	return zn_entry_fields(j->r, i, e, sha, lost) != ZN_OK || e->path_len > UINT32_MAX ||
	       e->link_len > UINT32_MAX || e->uname_len > 255 || e->gname_len > 255;
}

/* Fields lost to a damaged index page that only describe the entry are not applied: what was
 * lost stays as the extraction makes it (mode 0644, a new directory's 0755, as a stored mode is
 * applied; this user as the owner, without a file's set-id bits; the time it is written), and an
 * existing directory keeps its mode and owner (zn_fs_mkdir). Extract names each entry it
 * extracts so at its end, verify each in job_init (job_report_lost). */
int job_read_row(struct job *j, uint64_t i, struct job_row *x)
{
	struct zn_entry e;
	const uint8_t *sha;
	unsigned lost;
	if (read_fields(j, i, &e, &sha, &lost))
		return -1;
	if (lost & ZN_LOST_MODE)
		e.mode = e.type == ZN_TYPE_DIR ? 0755 : 0644;
	const struct job_entry *je = &j->ents[i];
	*x = (struct job_row){
	        .meta = {.mode = e.mode,
	                 .uid = e.uid,
	                 .gid = e.gid,
	                 .uname = e.uname,
	                 .gname = e.gname,
	                 .uname_len = (uint8_t)e.uname_len,
	                 .gname_len = (uint8_t)e.gname_len,
	                 .type = (uint8_t)e.type,
	                 .lost = lost & 31,
	                 .mtime_ns = e.mtime_ns},
	        .path = je->path,
	        .path_len = je->path_len,
	        .link = e.link,
	        .link_len = (uint32_t)e.link_len,
	        .sha256 = sha,
	        .size = e.size,
	        .block_offset = e.block_offset,
	        .first_block = e.first_block,
	};
	return 0;
}

const uint8_t *job_sha256(struct job *j, uint64_t i)
{
	if (j->r->digest != ZN_DIGEST_SHA256 || j->ents[i].type != ZN_TYPE_FILE)
		return NULL;
	if (j->r->digest_min_size) { /* a file below it has no stored digest (format version 2) */
		const uint8_t *size = job_col_row(j, j->cols.size, ZN_COL_SIZE, 8, i);
		if (!size || zn_get_le64(size) < j->r->digest_min_size)
			return NULL;
	}
	return job_col_row(j, j->cols.sha256, ZN_COL_SHA256, 32, i);
}

/* String i of an offsets column (whole: off, bytes) or, without them, from the reader; NULL and
 * 0 if it cannot be read. */
static void read_name(struct job *j, const uint8_t *off, const uint8_t *bytes, int off_id,
                      uint64_t i, const char **s, uint8_t *len)
{
	size_t n = 0;
	*s = NULL;
	if (off && bytes) {
		uint64_t a = zn_get_le64(off + 8 * i), b = zn_get_le64(off + 8 * i + 8);
		*s = b - a ? (const char *)bytes + a : "";
		n = b - a;
	} else if (zn_entry_str(j->r, off_id, i, s, &n) != ZN_OK) {
		*s = NULL;
		n = 0;
	}
	*len = (uint8_t)ZN_MIN(n, 255); /* at most 255 in a row job_init read */
}

int job_read_meta(struct job *j, uint64_t i, struct zn_meta *m)
{
	const struct job_cols *c = &j->cols;
	const struct job_entry *e = &j->ents[i];
	const uint8_t *mode = job_col_row(j, c->mode, ZN_COL_MODE, 4, i),
	              *uid = job_col_row(j, c->uid, ZN_COL_UID, 4, i),
	              *gid = job_col_row(j, c->gid, ZN_COL_GID, 4, i),
	              *mt = job_col_row(j, c->mtime, ZN_COL_MTIME_NS, 8, i);
	*m = (struct zn_meta){.type = e->type, .lost = e->lost};
	/* What job_init found lost stays lost, and what it read is there still (a page once
	 * checked or decoded stays so); as job_read_row fills them. */
	if ((!mode && !(e->lost & ZN_LOST_MODE)) || (!(uid && gid) && !(e->lost & ZN_LOST_OWNER)) ||
	    (!mt && !(e->lost & ZN_LOST_MTIME)))
		return -1;
	m->mode = mode ? zn_get_le32(mode) & 07777 : 0;
	if (e->lost & ZN_LOST_MODE)
		m->mode = e->type == ZN_TYPE_DIR ? 0755 : 0644;
	m->uid = uid && gid ? zn_get_le32(uid) : 0;
	m->gid = uid && gid ? zn_get_le32(gid) : 0;
	m->mtime_ns = mt ? (int64_t)zn_get_le64(mt) : 0;
	read_name(j, c->uname_off, c->uname_bytes, ZN_COL_UNAME_OFFSETS, i, &m->uname,
	          &m->uname_len);
	read_name(j, c->gname_off, c->gname_bytes, ZN_COL_GNAME_OFFSETS, i, &m->gname,
	          &m->gname_len);
	return 0;
}

/* The columns read again later, whole where every row was read (job_cols). */
static void take_columns(struct job *j)
{
	struct zn_reader *r = j->r;
	if (j->select)
		return; /* only some rows' pages are decoded: decoding all would cost more */
	j->cols = (struct job_cols){
	        .mode = zn_col(r, ZN_COL_MODE),
	        .uid = zn_col(r, ZN_COL_UID),
	        .gid = zn_col(r, ZN_COL_GID),
	        .mtime = zn_col(r, ZN_COL_MTIME_NS),
	        .size = zn_col(r, ZN_COL_SIZE),
	        .first_block = zn_col(r, ZN_COL_FIRST_BLOCK),
	        .block_offset = zn_col(r, ZN_COL_BLOCK_OFFSET),
	        .sha256 = r->digest == ZN_DIGEST_SHA256 ? zn_col(r, ZN_COL_SHA256) : NULL,
	        .uname_off = zn_col(r, ZN_COL_UNAME_OFFSETS),
	        .uname_bytes = zn_col(r, ZN_COL_UNAME_BYTES),
	        .gname_off = zn_col(r, ZN_COL_GNAME_OFFSETS),
	        .gname_bytes = zn_col(r, ZN_COL_GNAME_BYTES),
	};
}

/* Leaves the first n components off e's path, as tar --strip-components; non-zero if that is
 * all of it. */
static int strip_path(struct job_entry *e, unsigned n)
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

/* A symlink's target as the file system can hold it: not empty, no NUL (a crafted one would be
 * cut at the NUL, or refused by symlink()). */
static int symlink_target_ok(const struct zn_entry *e)
{
	return e->link && e->link_len && !memchr(e->link, 0, e->link_len);
}

/* Entry i read into its record. */
static void read_entry(struct job *j, uint64_t i)
{
	struct job_entry *x = &j->ents[i];
	struct zn_entry e;
	const uint8_t *sha;
	unsigned lost;
	memset(x, 0, sizeof(*x));
	if (j->select && !j->select[i]) {
		x->status = ST_SKIPPED; /* no path: it is nothing to this job */
		return;
	}
	if (read_fields(j, i, &e, &sha, &lost)) {
		/* Unreadable: no path, so nothing later reports or compares it as a file (it is
		 * named as unreadable once, in job_init). */
		x->status = ST_DAMAGED;
		return;
	}
	*x = (struct job_entry){.path = e.path,
	                        .path_len = (uint32_t)e.path_len,
	                        .type = (uint8_t)e.type,
	                        .lost = lost & 31,
	                        .status = ST_OK};
	if (e.type == ZN_TYPE_SYMLINK && !symlink_target_ok(&e))
		x->flags |= JE_BAD_TARGET;
	if (j->strip && strip_path(x, j->strip))
		x->status = ST_SKIPPED; /* nothing is left of its path */
}

struct row_parts {
	struct job *j;
	unsigned parts;
};

static void read_part(void *arg, unsigned t)
{
	const struct row_parts *rp = arg;
	struct job *j = rp->j;
	for (uint64_t i = j->n * t / rp->parts, end = j->n * (t + 1) / rp->parts; i < end; i++)
		read_entry(j, i);
}

/* Paths that point into the mapped archive (a column or page stored raw; decoded ones are the
 * reader's own memory) are copied: should the file shrink under the extraction (the command then
 * maps zeros there and stops it), the files begun are still found by name and removed. */
static int in_map(const struct zn_reader *r, const struct job_entry *e)
{
	const uintptr_t p = (uintptr_t)e->path, lo = (uintptr_t)r->map;
	return e->path && r->mapped && p - lo < r->map_size;
}

static zn_result own_paths(struct job *j)
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
		struct job_entry *e = &j->ents[i];
		if (!in_map(j->r, e))
			continue;
		memcpy(at, e->path - e->strip, (size_t)e->path_len + e->strip);
		e->path = at + e->strip;
		at += e->path_len + e->strip;
	}
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Rows the writer never makes
 * ---------------------------------------------------------------------------------------------- */

/* Whether stored path a sorts before b (memcmp, a prefix first), as index rows must. */
static int path_before(const struct job_entry *a, const struct job_entry *b)
{
	const char *ap = a->path - a->strip, *bp = b->path - b->strip;
	size_t al = a->path_len + a->strip, bl = b->path_len + b->strip;
	int c = memcmp(ap, bp, ZN_MIN(al, bl));
	return c < 0 || (c == 0 && al < bl);
}

uint64_t job_below_start(const struct job *j, uint64_t i)
{
	/* In the order of the stored paths, before any strip_components, which may not keep it.
	 * A binary search, as names "PATH" + a byte below '/' may come first, and a crafted
	 * archive may hold many of them. Rows whose path could not be read (no path, length 0)
	 * sort first; a crafted archive out of order only makes the count wrong. */
	const struct job_entry *e = &j->ents[i];
	const char *ep = e->path - e->strip;
	size_t elen = e->path_len + e->strip;
	uint64_t lo = i + 1, hi = j->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct job_entry *f = &j->ents[mid];
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

enum { UNSOUND_ORDER = 1, UNSOUND_BELOW, UNSOUND_TARGET };

/* Marks in why[] the rows below row i, a file or link (their path starts with "PATH/"); how
 * many. The rows that start with the path follow it: most files are no prefix of the next row,
 * and then of none (a search otherwise, past names with a byte below '/'). */
static uint64_t mark_below(const struct job *j, uint64_t i, uint8_t *why)
{
	const struct job_entry *e = &j->ents[i];
	const char *ep = e->path - e->strip;
	size_t elen = e->path_len + e->strip;
	const struct job_entry *nx = i + 1 < j->n ? &j->ents[i + 1] : NULL;
	if (!nx || (nx->path &&
	            (nx->path_len + nx->strip <= elen || memcmp(nx->path - nx->strip, ep, elen))))
		return 0;
	uint64_t marked = 0;
	for (uint64_t k = job_below_start(j, i); k < j->n; k++) {
		const struct job_entry *f = &j->ents[k];
		if (!f->path)
			break;
		const char *fp = f->path - f->strip;
		size_t flen = f->path_len + f->strip;
		if (flen <= elen || fp[elen] != '/' || memcmp(fp, ep, elen))
			break;
		why[k] = UNSOUND_BELOW;
		marked++;
	}
	return marked;
}

/* Rows the writer never makes: a path not after the one before it (out of order, or twice),
 * paths below one the archive holds as something other than a directory, and a symlink whose
 * target no file system holds. Each is named, in path order, and then treated as an unreadable
 * row (damaged, no path), so that nothing is made of it and no other file is taken for it ("File
 * exists"). With a selection the rows not selected have no path, so the search for what lies
 * below a file may miss (never invent) such rows. */
static zn_result refuse_unsound_rows(struct job *j)
{
	uint8_t *why = calloc(j->n ? j->n : 1, 1);
	if (!why)
		return ZN_ERR_NOMEM;
	static const char *const says[] = {
	        [UNSOUND_ORDER] = "index rows out of order (or a path twice): damaged",
	        [UNSOUND_BELOW] = "below a path the archive holds as a file or link: damaged",
	        [UNSOUND_TARGET] = "symlink target empty or holding a NUL byte: damaged",
	};
	uint64_t prev = UINT64_MAX, any = 0;
	for (uint64_t i = 0; i < j->n; i++) {
		const struct job_entry *e = &j->ents[i];
		if (!e->path || why[i])
			continue;
		if (prev != UINT64_MAX && !path_before(&j->ents[prev], e)) {
			why[i] = UNSOUND_ORDER;
			any++;
			continue;
		}
		prev = i;
		if (e->flags & JE_BAD_TARGET) {
			why[i] = UNSOUND_TARGET;
			any++;
		}
		if (e->type != ZN_TYPE_DIR)
			any += mark_below(j, i, why);
	}
	for (uint64_t i = 0; any && i < j->n; i++) {
		if (!why[i])
			continue;
		if (j->ents[i].status == ST_OK || j->ents[i].status == ST_SKIPPED)
			job_report(j, i, ZN_ERR_CORRUPT, says[why[i]]);
		memset(&j->ents[i], 0, sizeof(j->ents[i]));
		j->ents[i].status = ST_DAMAGED;
	}
	free(why);
	return ZN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The job
 * ---------------------------------------------------------------------------------------------- */

/* Rows that cannot be read are named in order, whatever the thread count: by path where the
 * path can still be read (a damaged index page in another column, or a crafted archive); verify
 * names here the rows that lost fields (extract names those it extracts, at its end). */
static void report_unreadable(struct job *j)
{
	for (uint64_t i = 0; i < j->n; i++) {
		if (j->ents[i].lost && j->ents[i].status == ST_OK) {
			if (j->verify)
				job_report_lost(j, i);
			continue;
		}
		if (j->ents[i].status != ST_DAMAGED || !j->problem)
			continue;
		struct zn_entry e;
		zn_result why = zn_reader_entry(j->r, i, &e);
		const char *p;
		size_t len;
		char *name = NULL, num[64];
		if (zn_entry_path(j->r, i, &p, &len) == ZN_OK && len && !memchr(p, 0, len))
			name = strndup(p, len);
		snprintf(num, sizeof(num), "entry %llu", (unsigned long long)i);
		j->problem(j->ctx, name ? name : num, why,
		           name ? "metadata unreadable in the index (damaged)"
		                : "entry unreadable in the index");
		free(name);
	}
}

/* The pool: as many threads as asked (0: one per CPU), but no more than the work can use, the
 * blocks or the parts of reading the rows; ZN_THREADS_MAX at most (zn_pool_new). */
static unsigned pool_threads(const struct job *j, unsigned threads, unsigned row_parts)
{
	uint64_t want = threads ? threads : zn_cpu_count();
	return (unsigned)ZN_MAX(1, ZN_MIN(want, ZN_MAX(j->r->nblocks, row_parts)));
}

zn_result job_init(struct job *j, struct zn_reader *r, const uint8_t *select, unsigned threads)
{
	j->r = r;
	j->n = r->nentries;
	j->select = select;
	j->span_entry = UINT64_MAX;
	pthread_mutex_init(&j->mu, NULL);
	pthread_mutex_init(&j->report_mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	for (int i = 0; i < 64; i++)
		pthread_mutex_init(&j->stripes[i], NULL);
	uint64_t want = threads ? threads : zn_cpu_count();
	struct row_parts rp = {
	        j, (unsigned)ZN_MIN(ZN_MIN(want, ROW_PARTS_MAX), j->n / ROWS_PER_PART + 1)};
	RETURN_IF_ERROR(zn_pool_new(&j->pool, pool_threads(j, threads, rp.parts), 0));
	rp.parts = ZN_MIN(rp.parts, zn_pool_threads(j->pool)); /* fewer if threads failed */
	j->ents = calloc(j->n ? j->n : 1, sizeof(*j->ents));
	if (!j->ents)
		return ZN_ERR_NOMEM;
	zn_pool_run(j->pool, read_part, &rp, rp.parts);
	take_columns(j);
	report_unreadable(j);
	RETURN_IF_ERROR(own_paths(j));
	return refuse_unsound_rows(j);
}

void job_free(struct job *j)
{
	zn_pool_free(j->pool);
	free(j->ents);
	free(j->paths);
	plan_free(&j->plan);
	pthread_mutex_destroy(&j->mu);
	pthread_mutex_destroy(&j->report_mu);
	pthread_cond_destroy(&j->cv);
	for (int i = 0; i < 64; i++)
		pthread_mutex_destroy(&j->stripes[i]);
}
