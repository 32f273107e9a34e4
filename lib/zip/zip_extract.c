/* SPDX-License-Identifier: MIT */
/* zip_extract.c - ZIP extraction and testing on every core, never writing outside the target.
 *
 * The plan, on the calling thread: each selected entry gets a safe relative path (leading '/'
 * and "." / ".." components dropped, as Info-ZIP does, with a warning), and every directory is
 * made, one component at a time below the target without following symlinks (fs_beneath.h).
 *
 * The data, on the pool: regular files sorted biggest first, taken by the workers through one
 * atomic counter, so that the longest entries start first and the small ones fill in behind.
 * Each worker owns a decoder and a buffer (zip_work) and a cached parent directory descriptor;
 * a file is created with O_CREAT | O_EXCL | O_NOFOLLOW in its parent, written from the decoder
 * (a stored entry straight from the mapped archive), given its mode and times through its
 * descriptor, and removed again if anything failed. Nothing is shared between workers but the
 * counter, the status bytes (each written by one worker) and the problem hook, called under a
 * mutex.
 *
 * Afterwards, on the calling thread: symlinks (only now, so that no file of the archive can be
 * written through one of its links), then directories' modes and times, deepest first.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_beneath.h"
#include "common/pool.h"
#include "common/sized.h"
#include "zip/zip_internal.h"

#define LINK_MAX_LEN 4095

enum { ST_TODO, ST_DONE, ST_SKIPPED, ST_FAILED };

/* One entry to write. */
struct xitem {
	uint64_t i; /* entry index */
	char *path; /* safe relative path, NUL-terminated (in the job's arena) */
	uint32_t len;
	uint8_t status; /* written by the one thread handling the item */
};

struct xjob {
	const struct zn_zip *z;
	struct zn_zip_extract_options opt_; /* the caller's, over the defaults */
	const struct zn_zip_extract_options *opt;
	zn_problem_fn problem;
	zn_extracted_fn extracted;
	void *ctx;
	pthread_mutex_t lock; /* serialises problem() */
	int rootfd;
	mode_t umask;
	struct xitem *items;
	uint64_t n;
	uint64_t *files; /* indices into items: regular files, biggest first */
	uint64_t n_files;
	atomic_uint_fast64_t next; /* the workers' counter into files */
	atomic_int damaged, unsupported, exists, io, canceled;
	int testing;
};

static void report(struct xjob *j, const char *path, zn_result r, const char *what)
{
	if (!j->problem)
		return;
	pthread_mutex_lock(&j->lock);
	j->problem(j->ctx, path, r, what);
	pthread_mutex_unlock(&j->lock);
}

/* Count and report a failed entry. */
static void entry_failed(struct xjob *j, const char *path, const struct zip_ent *e, zn_result r)
{
	char msg[160];
	if (r == ZN_ERR_UNSUPPORTED) {
		zn_zip_unsupported_message(e, msg);
		atomic_store(&j->unsupported, 1);
	} else if (r == ZN_ERR_IO || r == ZN_ERR_NOMEM) {
		snprintf(msg, sizeof(msg), "%s", zn_result_message(r));
		atomic_store(&j->io, 1);
	} else {
		const char *what = zn_result_message(r);
		if (r == ZN_ERR_CHECKSUM)
			what = "bad CRC";
		else if (r == ZN_ERR_LENGTH_MISMATCH)
			what = "size differs from the declared size";
		if (e->damage)
			what = "damaged entry (local header disagrees with the directory)";
		snprintf(msg, sizeof(msg), "%s", what);
		atomic_store(&j->damaged, 1);
	}
	report(j, path, r, msg);
}

static int stopped(const struct xjob *j)
{
	return j->opt && j->opt->stop && __atomic_load_n(j->opt->stop, __ATOMIC_RELAXED);
}

/* The safe form of name[0, n) into out (room for n + 1): components "", "." and ".." dropped
 * (a warning for ".." and a leading '/'), only the last with junk. Returns its length. */
static uint32_t safe_path(struct xjob *j, const uint8_t *name, uint32_t n, int junk, char *out)
{
	uint32_t len = 0, k = 0;
	int dropped = 0, abs = n && name[0] == '/';
	while (k < n) {
		uint32_t s = k;
		while (k < n && name[k] != '/')
			k++;
		uint32_t c = k - s;
		k++;
		if (!c || (c == 1 && name[s] == '.'))
			continue;
		if (c == 2 && name[s] == '.' && name[s + 1] == '.') {
			dropped = 1;
			continue;
		}
		if (memchr(name + s, 0, c)) {
			dropped = 1;
			continue;
		}
		if (junk)
			len = 0;
		if (len)
			out[len++] = '/';
		memcpy(out + len, name + s, c);
		len += c;
	}
	out[len] = 0;
	if ((dropped || abs) && !junk && !j->testing) {
		char msg[96];
		snprintf(msg, sizeof(msg), "skipped \"%s\" path component(s)", abs ? "/" : "../");
		report(j, out, ZN_OK, msg);
	}
	return len;
}

static uint32_t ent_type(const struct zip_ent *e)
{
	return e->mode & 0170000u;
}

/* Items for the selected entries, their paths in one arena. */
static zn_result plan_items(struct xjob *j, const uint8_t *select, char **arena)
{
	const struct zn_zip *z = j->z;
	uint64_t bytes = 1;
	for (uint64_t i = 0; i < z->count; i++)
		bytes += z->ents[i].name_len + 1u;
	*arena = malloc(bytes);
	j->items = calloc(z->count ? z->count : 1, sizeof(*j->items));
	j->files = calloc(z->count ? z->count : 1, sizeof(*j->files));
	if (!*arena || !j->items || !j->files)
		return ZN_ERR_NOMEM;
	char *a = *arena;
	int junk = j->opt->junk_paths;
	for (uint64_t i = 0; i < z->count; i++) {
		const struct zip_ent *e = z->ents + i;
		if ((select && !select[i]) || e->shadowed)
			continue;
		if (junk && ent_type(e) == 0040000u)
			continue;
		struct xitem *it = j->items + j->n;
		it->i = i;
		it->path = a;
		it->len = safe_path(j, e->name, e->name_len, junk, a);
		if (!it->len)
			continue; /* nothing left of the name ("../", "/") */
		a += it->len + 1;
		if (ent_type(e) == 0100000u)
			j->files[j->n_files++] = j->n;
		j->n++;
	}
	return ZN_OK;
}

static int cmp_size(const void *a, const void *b, void *ctx)
{
	const struct xjob *j = ctx;
	uint64_t i = *(const uint64_t *)a, k = *(const uint64_t *)b;
	uint64_t x = j->z->ents[j->items[i].i].size, y = j->z->ents[j->items[k].i].size;
	if (x != y)
		return x > y ? -1 : 1;
	return i < k ? -1 : i > k; /* equal sizes in archive order */
}

/* Split path at its last '/': the parent in dir (NUL-terminated copy), returns the base. */
static const char *split(const struct xitem *it, char *dir)
{
	const char *slash = strrchr(it->path, '/');
	size_t plen = slash ? (size_t)(slash - it->path) : 0;
	memcpy(dir, it->path, plen);
	dir[plen] = 0;
	return slash ? slash + 1 : it->path;
}

/* Make every directory the items need (directories themselves and files' parents). */
static void make_dirs(struct xjob *j)
{
	char *dir = malloc(65536 + 1), *last = malloc(65536 + 1);
	if (!dir || !last) {
		free(dir), free(last);
		atomic_store(&j->io, 1);
		return;
	}
	last[0] = 1, last[1] = 0; /* matches no path */
	for (uint64_t k = 0; k < j->n; k++) {
		struct xitem *it = j->items + k;
		const struct zip_ent *e = j->z->ents + it->i;
		if (ent_type(e) == 0040000u)
			memcpy(dir, it->path, it->len + 1u);
		else
			split(it, dir);
		if (!strcmp(dir, last))
			continue;
		int fd = zn_open_dir_beneath(j->rootfd, dir, 1);
		if (fd < 0) {
			char msg[160];
			snprintf(msg, sizeof(msg), "cannot make directory %s: %s", dir,
			         errno == ELOOP ? "a symlink is in the way" : strerror(errno));
			report(j, it->path, ZN_ERR_IO, msg);
			atomic_store(&j->io, 1);
			it->status = ST_FAILED;
			continue;
		}
		close(fd);
		strcpy(last, dir);
		if (ent_type(e) == 0040000u)
			it->status = ST_DONE;
	}
	free(dir), free(last);
}

static mode_t final_mode(const struct xjob *j, const struct zip_ent *e)
{
	uint32_t perm = e->mode & 07777u;
	if (!e->unix_mode)
		return (mode_t)((ent_type(e) == 0040000u ? 0777u : 0666u) & ~j->umask);
	return (mode_t)(perm & 01777u); /* set-id bits dropped, as Info-ZIP without -K */
}

static void entry_times(const struct zip_ent *e, struct timespec ts[2])
{
	ts[0].tv_sec = ts[1].tv_sec = (time_t)e->mtime;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
}

/* A worker's open parent directories: entries of a jar come in no order of directory (a class
 * of one package, then of another, then the first again), so one kept descriptor was opened and
 * closed again for most files; eight, the least recently used replaced, keep a package tree's
 * working set. */
#define DIRCACHE_SLOTS 8
struct dircache {
	struct {
		char *path; /* NULL: a free slot; else fd is its directory's descriptor */
		size_t len;
		int fd;
		uint64_t used;
	} slot[DIRCACHE_SLOTS];
	uint64_t clock;
};

static struct dircache *dircache_new(void)
{
	return calloc(1, sizeof(struct dircache));
}

static void dircache_free(struct dircache *c)
{
	for (unsigned k = 0; c && k < DIRCACHE_SLOTS; k++) {
		if (c->slot[k].path)
			close(c->slot[k].fd);
		free(c->slot[k].path);
	}
	free(c);
}

/* The descriptor of its parent directory below the root (-1 with errno set if it cannot be
 * opened), *base the name within it. */
static int parent_of(struct xjob *j, struct dircache *c, const struct xitem *it, const char **base)
{
	const char *slash = strrchr(it->path, '/');
	size_t plen = slash ? (size_t)(slash - it->path) : 0;
	*base = slash ? slash + 1 : it->path;
	unsigned victim = 0;
	for (unsigned k = 0; k < DIRCACHE_SLOTS; k++) {
		if (c->slot[k].path && c->slot[k].len == plen &&
		    !memcmp(c->slot[k].path, it->path, plen)) {
			c->slot[k].used = ++c->clock;
			return c->slot[k].fd;
		}
		if (!c->slot[k].path || c->slot[k].used < c->slot[victim].used)
			victim = k; /* a free slot, else the least recently used */
		if (!c->slot[k].path)
			break;
	}
	char *path = malloc(plen + 1);
	if (!path) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(path, it->path, plen);
	path[plen] = 0;
	int fd = zn_open_dir_beneath(j->rootfd, path, 0);
	if (fd < 0) {
		int e = errno;
		free(path);
		errno = e;
		return -1;
	}
	if (c->slot[victim].path)
		close(c->slot[victim].fd);
	free(c->slot[victim].path);
	c->slot[victim].path = path;
	c->slot[victim].len = plen;
	c->slot[victim].fd = fd;
	c->slot[victim].used = ++c->clock;
	return fd;
}

struct fd_sink {
	int fd;
};

static zn_result write_sink(void *ctx, const void *data, size_t len)
{
	struct fd_sink *s = ctx;
	const uint8_t *p = data;
	while (len) {
		size_t k = (size_t)ZN_MIN((uint64_t)len, ZN_WRITE_PIECE * 8);
		ssize_t w = write(s->fd, p, k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ZN_ERR_IO;
		p += w, len -= (size_t)w;
	}
	return ZN_OK;
}

static zn_result null_sink(void *ctx, const void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return ZN_OK;
}

/* Create it->path's file below dfd: O_EXCL, after removing what is there with overwrite. -1 with
 * it->status set when it is not to be written. */
static int create_file(struct xjob *j, int dfd, const char *base, struct xitem *it)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
		if (j->opt->never) {
			it->status = ST_SKIPPED;
			return -1;
		}
		if (!j->opt->overwrite) {
			it->status = ST_SKIPPED;
			atomic_store(&j->exists, 1);
			report(j, it->path, ZN_ERR_EXISTS,
			       "exists; not overwritten (use -o or -n)");
			return -1;
		}
		if (unlinkat(dfd, base, 0) != 0)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

static void write_file(struct xjob *j, struct dircache *c, struct zip_work *w, struct xitem *it)
{
	const struct zip_ent *e = j->z->ents + it->i;
	const char *base;
	int dfd = parent_of(j, c, it, &base);
	if (dfd < 0) {
		report(j, it->path, ZN_ERR_IO, strerror(errno));
		atomic_store(&j->io, 1);
		it->status = ST_FAILED;
		return;
	}
	if (!zip_supported(e) || e->damage) { /* refused before anything is created */
		entry_failed(j, it->path, e, e->damage ? (zn_result)e->damage : ZN_ERR_UNSUPPORTED);
		it->status = ST_FAILED;
		return;
	}
	int fd = create_file(j, dfd, base, it);
	if (fd < 0) {
		if (it->status == ST_SKIPPED)
			return;
		char msg[160];
		snprintf(msg, sizeof(msg), "cannot create: %s",
		         errno == ELOOP ? "a symlink is in the way" : strerror(errno));
		report(j, it->path, ZN_ERR_IO, msg);
		atomic_store(&j->io, 1);
		it->status = ST_FAILED;
		return;
	}
	struct fd_sink s = {fd};
	zn_result r = zn_zip_decode(j->z, it->i, w, write_sink, &s);
	if (r == ZN_OK) {
		struct timespec ts[2];
		entry_times(e, ts);
		if (fchmod(fd, final_mode(j, e)) != 0 || futimens(fd, ts) != 0)
			r = ZN_ERR_IO;
	}
	if (close(fd) != 0 && r == ZN_OK)
		r = ZN_ERR_IO;
	if (r != ZN_OK) {
		unlinkat(dfd, base, 0);
		entry_failed(j, it->path, e, r);
		it->status = ST_FAILED;
		return;
	}
	it->status = ST_DONE;
}

static void worker(void *arg, unsigned t)
{
	struct xjob *j = arg;
	struct zip_work w = {0};
	struct dircache *c = j->testing ? NULL : dircache_new();
	(void)t;
	for (;;) {
		uint64_t k = atomic_fetch_add(&j->next, 1);
		if (k >= j->n_files)
			break;
		if (stopped(j)) {
			atomic_store(&j->canceled, 1);
			break;
		}
		struct xitem *it = j->items + j->files[k];
		if (it->status == ST_FAILED) /* its directory could not be made: reported */
			continue;
		if (j->testing) {
			zn_result r = zn_zip_decode(j->z, it->i, &w, null_sink, NULL);
			it->status = r == ZN_OK ? ST_DONE : ST_FAILED;
			if (r != ZN_OK)
				entry_failed(j, it->path, j->z->ents + it->i, r);
		} else if (c) {
			write_file(j, c, &w, it);
		} else {
			atomic_store(&j->io, 1);
		}
	}
	dircache_free(c);
	zn_zip_work_release(&w);
}

/* Each symlink: its target read (at most LINK_MAX_LEN bytes), then made. */
static void make_link(struct xjob *j, struct dircache *c, struct zip_work *w, struct xitem *it)
{
	const struct zip_ent *e = j->z->ents + it->i;
	char target[LINK_MAX_LEN + 1];
	zn_result r = e->size > LINK_MAX_LEN ? ZN_ERR_LIMIT : ZN_OK;
	if (r == ZN_OK)
		r = zn_zip_read_to(j->z, it->i, target, sizeof(target) - 1);
	(void)w;
	if (r == ZN_OK && (e->size == 0 || memchr(target, 0, (size_t)e->size)))
		r = ZN_ERR_CORRUPT;
	if (r != ZN_OK) {
		entry_failed(j, it->path, e, r);
		it->status = ST_FAILED;
		return;
	}
	target[e->size] = 0;
	const char *base;
	int dfd = parent_of(j, c, it, &base);
	int ok = dfd >= 0 && symlinkat(target, dfd, base) == 0;
	if (!ok && dfd >= 0 && errno == EEXIST) {
		if (j->opt->never) {
			it->status = ST_SKIPPED;
			return;
		}
		if (!j->opt->overwrite) {
			it->status = ST_SKIPPED;
			atomic_store(&j->exists, 1);
			report(j, it->path, ZN_ERR_EXISTS,
			       "exists; not overwritten (use -o or -n)");
			return;
		}
		ok = unlinkat(dfd, base, 0) == 0 && symlinkat(target, dfd, base) == 0;
	}
	if (!ok) {
		char msg[160];
		snprintf(msg, sizeof(msg), "cannot make symlink: %s", strerror(errno));
		report(j, it->path, ZN_ERR_IO, msg);
		atomic_store(&j->io, 1);
		it->status = ST_FAILED;
		return;
	}
	struct timespec ts[2];
	entry_times(e, ts);
	utimensat(dfd, base, ts, AT_SYMLINK_NOFOLLOW);
	it->status = ST_DONE;
}

static int cmp_depth(const void *a, const void *b, void *ctx)
{
	const struct xjob *j = ctx;
	uint32_t x = j->items[*(const uint64_t *)a].len, y = j->items[*(const uint64_t *)b].len;
	return x > y ? -1 : x < y;
}

/* Links, then directories' modes and times, deepest (longest path) first. */
static void finish_tree(struct xjob *j)
{
	struct dircache *c = dircache_new();
	uint64_t *dirs = malloc((j->n ? j->n : 1) * sizeof(*dirs)), nd = 0;
	if (!c || !dirs) {
		dircache_free(c), free(dirs);
		atomic_store(&j->io, 1);
		return;
	}
	struct zip_work w = {0};
	for (uint64_t k = 0; k < j->n && !stopped(j); k++) {
		const struct zip_ent *e = j->z->ents + j->items[k].i;
		if (ent_type(e) == 0120000u && j->items[k].status != ST_FAILED)
			make_link(j, c, &w, j->items + k);
		else if (ent_type(e) == 0040000u && j->items[k].status == ST_DONE)
			dirs[nd++] = k;
	}
	qsort_r(dirs, nd, sizeof(*dirs), cmp_depth, j);
	for (uint64_t k = 0; k < nd; k++) {
		struct xitem *it = j->items + dirs[k];
		const struct zip_ent *e = j->z->ents + it->i;
		int fd = zn_open_dir_beneath(j->rootfd, it->path, 0);
		if (fd < 0)
			continue;
		struct timespec ts[2];
		entry_times(e, ts);
		/* An O_PATH descriptor takes neither fchmod nor futimens: through /proc would
		 * follow nothing either, but fchmodat on the parent with the base name is simpler.
		 */
		const char *base;
		int pfd = parent_of(j, c, it, &base);
		if (pfd >= 0) {
			fchmodat(pfd, base, final_mode(j, e), AT_SYMLINK_NOFOLLOW);
			utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW);
		}
		close(fd);
	}
	dircache_free(c), free(dirs);
	zn_zip_work_release(&w);
}

static zn_result outcome(struct xjob *j)
{
	if (j->canceled)
		return ZN_ERR_CANCELED;
	if (j->damaged)
		return ZN_ERR_DAMAGED;
	if (j->unsupported)
		return ZN_ERR_UNSUPPORTED;
	if (j->io)
		return ZN_ERR_IO;
	if (j->exists)
		return ZN_ERR_EXISTS;
	return ZN_OK;
}

static zn_result run_workers(struct xjob *j, unsigned threads)
{
	qsort_r(j->files, j->n_files, sizeof(*j->files), cmp_size, j);
	struct zn_pool *p = NULL;
	RETURN_IF_ERROR(zn_pool_new(&p, threads, 0));
	unsigned n = zn_pool_threads(p);
	if ((uint64_t)n > j->n_files)
		n = j->n_files ? (unsigned)j->n_files : 1;
	zn_pool_run(p, worker, j, n);
	zn_pool_free(p);
	return ZN_OK;
}

void zn_zip_extract_options_init(struct zn_zip_extract_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->struct_size = sizeof(*opt);
}

/* hooks->extracted for each entry written, a directory's path with its '/'. */
static void call_extracted(struct xjob *j)
{
	if (!j->extracted)
		return;
	for (uint64_t k = 0; k < j->n; k++) {
		struct xitem *it = j->items + k;
		if (it->status != ST_DONE)
			continue;
		int dir = ent_type(j->z->ents + it->i) == 0040000u;
		if (dir)
			it->path[it->len] = '/'; /* the arena keeps a byte after each path */
		j->extracted(j->ctx, it->path, it->len + (size_t)dir);
		it->path[it->len] = 0;
	}
}

/* The job's options and hooks from the caller's. */
static zn_result take_args(struct xjob *j, const struct zn_zip_extract_options *opt,
                           const struct zn_hooks *hooks)
{
	zn_zip_extract_options_init(&j->opt_);
	if (opt && zn_sized_in(&j->opt_, sizeof(j->opt_), opt, ZN_FIRST_SIZE_zip_extract_options))
		return ZN_ERR_INVALID_ARG;
	j->opt = &j->opt_;
	struct zn_hooks h = {0};
	if (hooks && zn_sized_in(&h, sizeof(h), hooks, ZN_FIRST_SIZE_hooks))
		return ZN_ERR_INVALID_ARG;
	j->problem = h.problem, j->extracted = h.extracted, j->ctx = h.ctx;
	return ZN_OK;
}

zn_result zn_zip_extract(const struct zn_zip *z, const char *dir, const uint8_t *select,
                         const struct zn_zip_extract_options *opt, const struct zn_hooks *hooks)
{
	struct xjob j = {.z = z};
	if (!z || !dir || take_args(&j, opt, hooks) != ZN_OK)
		return ZN_ERR_INVALID_ARG;
	pthread_mutex_init(&j.lock, NULL);
	j.umask = umask(022);
	umask(j.umask);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return ZN_ERR_IO;
	j.rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j.rootfd < 0)
		return ZN_ERR_IO;
	char *arena = NULL;
	zn_result r = plan_items(&j, select, &arena);
	if (r == ZN_OK) {
		make_dirs(&j);
		r = run_workers(&j, j.opt->threads);
	}
	if (r == ZN_OK) {
		finish_tree(&j);
		call_extracted(&j);
		r = outcome(&j);
	}
	close(j.rootfd);
	free(arena), free(j.items), free(j.files);
	pthread_mutex_destroy(&j.lock);
	return r;
}

zn_result zn_zip_test(const struct zn_zip *z, const uint8_t *select, unsigned threads,
                      const struct zn_hooks *hooks)
{
	struct xjob j = {.z = z, .testing = 1};
	if (!z || take_args(&j, NULL, hooks) != ZN_OK)
		return ZN_ERR_INVALID_ARG;
	pthread_mutex_init(&j.lock, NULL);
	char *arena = NULL;
	zn_result r = plan_items(&j, select, &arena);
	if (r == ZN_OK) { /* every entry with content is tested: symlinks too */
		j.n_files = 0;
		for (uint64_t k = 0; k < j.n; k++)
			if (ent_type(z->ents + j.items[k].i) != 0040000u)
				j.files[j.n_files++] = k;
		r = run_workers(&j, threads);
	}
	if (r == ZN_OK)
		r = outcome(&j);
	free(arena), free(j.items), free(j.files);
	pthread_mutex_destroy(&j.lock);
	return r;
}
