/* SPDX-License-Identifier: MIT */
/* archive_write.c - the archive writer's API: open, add, finish (the index and the footer).
 *
 * The writer is six modules around one struct zn_writer (archive_writer.h), each owning a part
 * of it:
 *   archive_walk.c      the directory walk, by descriptors, in byte order of names
 *   archive_batch.c     small files read in batches (io_uring chains, the crew)
 *   archive_pack.c      where each file's bytes go: packed blocks, chunks of large files
 *   archive_dedup.c     identical files stored once
 *   archive_entries.c   the entry table: paths, owners, hardlinks
 *   archive_pipeline.c  blocks compressed, hashed and written in order on the job pool (its
 *                       opening comment tells how the threads share the work)
 * This file holds the public functions and what finish does once every block is written: the
 * rows in path order, the checks across them, the index and the footer.
 */
#include <dirent.h>
#include <sys/resource.h>

#include "common/cpu_features.h"
#include "archive_writer.h"

/* ------------------------------------------------------------------------------------------------
 * Small helpers
 * ---------------------------------------------------------------------------------------------- */

int wr_grow(void **p, size_t *cap, size_t need, size_t elem)
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

/* Names a problem with an input. Problems are named in the order of the walk: the small files
 * waiting to be read, all found before this one, are read first, and theirs named. */
void wr_report(struct zn_writer *w, const char *path, zn_result r, const char *what)
{
	if (w->hook.problem && (w->batch.npend || w->batch.fly_to) && !w->batch.flushing &&
	    !atomic_load(&w->pipe.cancel)) {
		zn_result fr = wr_flush_pending(w);
		if (fr != ZN_OK)
			wr_set_error(w, fr);
	}
	if (w->hook.problem)
		w->hook.problem(w->hook.ctx, path, r, what);
}

void wr_report_errno(struct zn_writer *w, const char *path, const char *action, int e)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s: %s", action, strerror(e));
	wr_report(w, path, ZN_ERR_IO, msg);
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
int wr_class_of(const struct zn_writer *w, const struct went *e)
{
	return (!w->opt.no_skip && is_precompressed(e->path, e->path_len)) ? CLASS_STORE
	                                                                   : CLASS_COMPRESS;
}

/* ------------------------------------------------------------------------------------------------
 * Public API
 * ---------------------------------------------------------------------------------------------- */

void zn_create_options_init(struct zn_create_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->struct_size = sizeof(*opt);
	opt->level = ZN_LEVEL_DEFAULT;
	opt->threads = 0;
	opt->chunk_size = ZN_CHUNK_SIZE_DEFAULT;
	opt->memory_limit = 256u << 20;
	opt->digest = ZN_DIGEST_SHA256;
	opt->digest_min_size = ZN_DIGEST_MIN_SIZE_DEFAULT;
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
	uint64_t used = open_now + 2ull * (uint64_t)w->walk.levels + w->opt.threads + 32;
	return used >= nofile->rlim_cur ? 0 : (int)ZN_MIN(PEND_DIRS, (nofile->rlim_cur - used) / 2);
}

/* Version 2 (digest_min_size, column filters) unless the caller asks for none: an archive with
 * digest_min_size 0 is version 1, byte for byte as before version 2, and reads everywhere. */
static uint32_t format_version(const struct zn_create_options *opt)
{
	return opt->digest_min_size ? ZN_FORMAT_VERSION_DMS : ZN_FORMAT_VERSION;
}

uint64_t zn_create_memory_min(uint64_t chunk_size)
{
	return ZN_MIN_SLOTS * (chunk_size + ZSTD_compressBound(chunk_size));
}

zn_result zn_writer_open(struct zn_writer **out, int fd, const struct zn_create_options *opt_in,
                         const struct zn_hooks *hooks)
{
	if (!out)
		return ZN_ERR_INVALID_ARG;
	*out = NULL;
	if (fd < 0)
		return ZN_ERR_INVALID_ARG;
	struct zn_create_options opt;
	zn_create_options_init(&opt);
	struct zn_hooks hook = {.struct_size = sizeof(hook)};
	if ((opt_in && zn_sized_in(&opt, sizeof(opt), opt_in, ZN_FIRST_SIZE_create_options)) ||
	    (hooks && zn_sized_in(&hook, sizeof(hook), hooks, ZN_FIRST_SIZE_hooks)))
		return ZN_ERR_INVALID_ARG;
	if (opt.level < ZN_LEVEL_MIN || opt.level > ZN_LEVEL_MAX ||
	    opt.chunk_size < ZN_CHUNK_SIZE_MIN || opt.chunk_size > ZN_CHUNK_SIZE_MAX ||
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
	if (opt.repo && strlen(opt.repo) > 255)
		return ZN_ERR_INVALID_ARG;

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
	w->hook = hook;
	w->fd = fd;
	/* The caller's string need not outlive this call: opt.repo is our copy, or NULL. */
	w->opt.repo = NULL;
	if (opt.repo && opt.repo[0] && !(w->opt.repo = w->repo = strdup(opt.repo))) {
		free(w);
		return ZN_ERR_NOMEM;
	}
	/* A quarter of the open-file limit for the directories a walk keeps open, at most 64: deep
	 * trees under `ulimit -n 1024` as tar, and under much lower limits too. */
	struct rlimit nofile;
	w->walk.levels = 64;
	if (getrlimit(RLIMIT_NOFILE, &nofile))
		nofile.rlim_cur = 0; /* unknown: no batch holds descriptors (fd_budget) */
	else if (nofile.rlim_cur != RLIM_INFINITY)
		w->walk.levels = (int)ZN_MAX(4, ZN_MIN(64, nofile.rlim_cur / 4));
	if (regular) {
		w->out_dev = ost.st_dev;
		w->out_ino = ost.st_ino;
	}
	zn_result r = wr_pipe_open(w);
	if (r == ZN_OK) {
		wr_batch_open(w);
		w->batch.pend_dirs_max = fd_budget(w, &nofile);
	}
	if (r == ZN_OK && (wr_intern_name(w, "") != 0 || !w->names))
		r = ZN_ERR_NOMEM;
	if (r != ZN_OK) {
		zn_writer_free(w);
		return r;
	}
	/* The file header. */
	uint8_t hdr[ZN_HEADER_SIZE] = {0};
	memcpy(hdr, ZN_MAGIC, ZN_MAGIC_LEN);
	zn_put_le32(hdr + 8, format_version(&w->opt));
	if (zn_write_all(fd, hdr, sizeof(hdr)) != ZN_OK) {
		int err = errno; /* why, for the caller (the header says so) */
		zn_writer_free(w);
		errno = err;
		return ZN_ERR_IO;
	}
	*out = w;
	return ZN_OK;
}

zn_result zn_writer_add_path(struct zn_writer *w, const char *fs_path, const char *name)
{
	/* From a hook during a walk: the walk's own path buffer and batch are in use. */
	if (!w || !fs_path || w->finished || w->walk.busy)
		return ZN_ERR_INVALID_ARG;
	if (atomic_load(&w->pipe.cancel))
		return wr_first_error(w);
	w->walk.busy = 1;
	struct wr_clock clock = wr_clock_start();
	zn_result r = wr_add_path(w, fs_path, name);
	wr_clock_stop(clock, &w->pipe.cpu_read);
	w->walk.busy = 0;
	return r;
}

/* Adds entry e, whose content (a file's) comes from src. */
static zn_result add_entry(struct zn_writer *w, const struct zn_entry *given, struct source *src)
{
	/* The caller's entry at this library's size, its lengths of 0 made strlen. */
	struct zn_entry ent = {.struct_size = sizeof(ent)};
	if (!given || zn_sized_in(&ent, sizeof(ent), given, ZN_FIRST_SIZE_entry))
		return ZN_ERR_INVALID_ARG;
	const struct zn_entry *e = &ent;
	if (ent.path && !ent.path_len)
		ent.path_len = strlen(ent.path);
	if (ent.link && !ent.link_len)
		ent.link_len = strlen(ent.link);
	if (ent.uname && !ent.uname_len)
		ent.uname_len = strlen(ent.uname);
	if (ent.gname && !ent.gname_len)
		ent.gname_len = strlen(ent.gname);
	if (!w || !e->path || w->finished || e->type > ZN_TYPE_HARDLINK)
		return ZN_ERR_INVALID_ARG;
	if (atomic_load(&w->pipe.cancel))
		return wr_first_error(w);
	if (!zn_path_is_safe(e->path, e->path_len))
		return ZN_ERR_UNSAFE_PATH;
	/* From a filter hook during a walk: placed after every file found before it (whatever the
	 * batches), and never while a batch's rooms are being read into. Not from a problem hook
	 * while a batch is acted on. */
	if (w->batch.flushing)
		return ZN_ERR_INVALID_ARG;
	zn_result r = wr_flush_pending(w);
	if (r != ZN_OK) {
		wr_set_error(w, r); /* fatal, as in zn_writer_add_path */
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
	RETURN_IF_ERROR(wr_new_entry(w, e->path, e->path_len, (int)e->type, NULL, &idx));
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
	d->uname = wr_intern_name(w, tmp);
	size_t gl = ZN_MIN(e->gname_len, sizeof(tmp) - 1);
	memcpy(tmp, e->gname ? e->gname : "", e->gname ? gl : 0);
	tmp[e->gname ? gl : 0] = 0;
	w->ents[idx].gname = wr_intern_name(w, tmp);
	d = &w->ents[idx];
	d->mtime_ns = e->mtime_ns;
	if (e->type == ZN_TYPE_SYMLINK || e->type == ZN_TYPE_HARDLINK) {
		r = wr_set_link(w, d, e->link, e->link_len);
	} else if (e->type == ZN_TYPE_FILE) {
		d->size = e->size;
		d->has_digest = w->opt.digest == ZN_DIGEST_SHA256;
		r = wr_emit_content(w, idx, src);
	}
	/* A stream that failed leaves its entry out and the writer sound (the header says so); any
	 * other failure from here on (memory) leaves a half-made entry: fatal, the first error
	 * wins, as in zn_writer_add_path. */
	if (r != ZN_OK && !w->ents[idx].dropped)
		wr_set_error(w, r);
	return r;
}

/* add_entry, its CPU time counted as the read stage's. */
static zn_result add_counted(struct zn_writer *w, const struct zn_entry *e, struct source *src)
{
	if (!w)
		return ZN_ERR_INVALID_ARG;
	struct wr_clock clock = wr_clock_start();
	zn_result r = add_entry(w, e, src);
	wr_clock_stop(clock, &w->pipe.cpu_read);
	return r;
}

zn_result zn_writer_add_memory(struct zn_writer *w, const struct zn_entry *e, const void *data)
{
	struct source src = {.fd = -1, .mem = data};
	return add_counted(w, e, &src);
}

void zn_entry_init(struct zn_entry *e, int type)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*e = (struct zn_entry){
	        .struct_size = sizeof(*e),
	        .type = (uint32_t)type,
	        .mode = type == ZN_TYPE_DIR       ? 0755
	                : type == ZN_TYPE_SYMLINK ? 0777
	                                          : 0644,
	        .uid = (uint32_t)getuid(),
	        .gid = (uint32_t)getgid(),
	        .mtime_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
	};
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
	return add_counted(w, e, &src);
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
	        .pkg_group = "",
	        .pkg_name = "",
	        .pkg_version = "",
	};
	if (e->pkg) {
		struct wr_pkg_fields f;
		wr_pkg_unpack(e->pkg, &f);
		r->pkg_type = f.type;
		r->pkg_group = f.group;
		r->pkg_name = f.name;
		r->pkg_version = f.version;
	}
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
	*id = wr_intern_name(w, tmp);
	return *id ? ZN_OK : ZN_ERR_NOMEM; /* id 0 is "" */
}

/* The meta hook (struct zn_hooks) over the rows, in path order. */
static zn_result apply_meta_hook(struct zn_writer *w, const uint64_t *order, size_t m)
{
	for (size_t i = 0; i < m && w->hook.meta; i++) {
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
		w->hook.meta(w->hook.ctx, &e);
		d->mode = e.mode & 07777;
		d->uid = e.uid;
		d->gid = e.gid;
		d->mtime_ns = e.mtime_ns;
		zn_result r = meta_name(w, e.uname, e.uname_len, &d->uname);
		if (r == ZN_OK)
			r = meta_name(w, e.gname, e.gname_len, &d->gname);
		if (r == ZN_ERR_INVALID_ARG) /* the hook's mistake: say which entry it was */
			wr_report(
			        w, d->path, r,
			        "the meta hook gave an owner name over 255 bytes or holding a NUL; "
			        "no archive is written");
		if (r != ZN_OK)
			return r;
	}
	return ZN_OK;
}

/* Once every job has returned and the digests are harvested, the pipeline's buffers and the sets
 * that found copies and hardlinks are done with: freed before the index is built, the peak of
 * a create of many files (and by zn_writer_free, whatever the writer got to). */
static void drop_work_memory(struct zn_writer *w)
{
	wr_pipe_drop_buffers(w);
	free(w->dup.contents);
	free(w->dup.larges);
	free(w->dup.lsums);
	free(w->dup.lwait);
	free(w->dup.aside);
	free(w->inodes);
	free(w->paths);
	free(w->packs);
	w->packs = NULL;
	w->packs_cap = 0;
	w->dup.contents = w->dup.larges = w->dup.lsums = w->dup.lwait = w->paths = NULL;
	w->dup.aside = NULL;
	w->inodes = NULL;
	w->dup.contents_cap = w->dup.larges_cap = w->dup.lsums_cap = w->dup.lwait_cap =
	        w->paths_cap = 0;
	w->dup.ncontents = w->dup.nlarges = w->dup.nlsums = w->dup.nlwait = w->inodes_cap =
	        w->ninodes = 0;
}

/* Every block queued and written: the small files pending read and placed, the packers' last
 * blocks queued, every job returned. */
static zn_result finish_blocks(struct zn_writer *w)
{
	zn_result pr = atomic_load(&w->pipe.cancel) ? ZN_OK : wr_flush_pending(w);
	wr_drop_pending(w);
	if (pr != ZN_OK)
		wr_set_error(w, pr);
	for (int k = 0; k < 2; k++) {
		struct slot *s = w->pipe.pack[k];
		if (s && s->usize && !atomic_load(&w->pipe.cancel))
			wr_queue_slot(w, s);
		else if (s) /* only copies went into it, or canceled: no block */
			wr_release_slot(w, s);
		w->pipe.pack[k] = NULL;
	}
	wr_pipe_drain(w);
	if (w->pipe.err != ZN_OK)
		return w->pipe.err;
	if (w->pipe.write_seq > UINT32_MAX)
		return ZN_ERR_LIMIT; /* first_block is a u32 (256 TiB in the smallest blocks) */
	return ZN_OK;
}

/* What the blocks' jobs found goes to the entries. */
static void settle_entries(struct zn_writer *w)
{
	/* Digests computed by the jobs land in the entries now that every job has returned (and
	 * what the output job's own reads found: before the hardlinks to a file it could not
	 * read), */
	for (unsigned i = 0; i < w->pipe.nslots; i++)
		wr_harvest(w, &w->pipe.slots[i]);
	/* a hardlink to a file that could not be read goes with it, */
	for (size_t i = 0; i < w->nents; i++) {
		struct went *e = &w->ents[i];
		if (!e->dropped && wr_left_out(w, e)) {
			e->dropped = 1;
			if (w->ents[e->link_entry].dropped == DROPPED_REMOVED)
				wr_report(
				        w, e->path, ZN_ERR_CHANGED,
				        "hardlink to a file removed before we read it; not stored");
			else
				wr_report(w, e->path, ZN_ERR_IO,
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
}

/* An entry below one that is not a directory ("a" a file or symlink, and "a/b") could never be
 * extracted: it is left out and named. In path order a nearest existing ancestor comes first,
 * so it is settled (kept, or left out for the same reason). */
static void drop_below_files(struct zn_writer *w, const uint64_t *order, size_t m)
{
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
			wr_report(w, e->path, ZN_ERR_EXISTS, below_why);
			w->input_err = ZN_ERR_IO;
		}
	}
}

/* Hardlinks that readers could not resolve are left out, and named: one found on disk whose
 * target drop_below_files left out, and one added from memory whose target path is not a
 * regular file of the archive. The rows left out go from order[]; returns how many stay. */
static size_t drop_bad_hardlinks(struct zn_writer *w, uint64_t *order, size_t m)
{
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
			wr_report(w, e->path, code, why);
			w->input_err = ZN_ERR_IO;
			continue;
		}
		order[k++] = order[i];
	}
	return k;
}

/* The rows of the index: entries sorted by path, those left out dropped; *order is malloc'd. */
static zn_result make_rows(struct zn_writer *w, uint64_t **order_out, size_t *m_out)
{
	/* Paths are unique (new_entry). */
	uint64_t *order = malloc((w->nents ? w->nents : 1) * sizeof(uint64_t));
	if (!order)
		return ZN_ERR_NOMEM;
	size_t m = 0;
	for (size_t i = 0; i < w->nents; i++)
		if (!w->ents[i].dropped)
			order[m++] = i;
	qsort_r(order, m, sizeof(uint64_t), cmp_entries, w->ents);
	drop_below_files(w, order, m);
	m = drop_bad_hardlinks(w, order, m);
	zn_result r = apply_meta_hook(w, order, m);
	if (r != ZN_OK) {
		free(order);
		return r;
	}
	*order_out = order;
	*m_out = m;
	return ZN_OK;
}

/* Writes the index of rows order[0..m) and the footer; frees order. */
static zn_result write_index(struct zn_writer *w, uint64_t *order, size_t m)
{
	struct zn_index_input in = {
	        .nrows = m,
	        .nblocks = w->pipe.write_seq,
	        .blocks = w->pipe.blocks,
	        .chunk_size = w->opt.chunk_size,
	        .level = w->opt.level,
	        .digest = w->opt.digest,
	        .digest_min_size = w->opt.digest_min_size,
	        .filters = format_version(&w->opt) >= ZN_FORMAT_VERSION_DMS,
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
		in.packages |= e->pkg != NULL;
	}
	in.repo = w->repo;
	struct row_source rs = {w, order};
	in.get_row = index_row_of;
	in.row_ctx = &rs;
	/* Zero bytes up to a multiple of 64, so that the index's columns, 8-aligned within it,
	 * are aligned in the file too (Arrow asks for 8 bytes, 64 recommended). */
	static const uint8_t zeros[ZN_INDEX_ALIGN];
	const uint64_t pad = (ZN_INDEX_ALIGN - w->pipe.file_off % ZN_INDEX_ALIGN) % ZN_INDEX_ALIGN;
	const uint64_t index_off = w->pipe.file_off + pad;
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
	zn_put_le64(foot + 32, w->pipe.write_seq);
	zn_put_le32(foot + 40, format_version(&w->opt));
	zn_put_le64(foot + 48, zn_xxh3(foot, 48));
	memcpy(foot + 56, ZN_FOOTER_MAGIC, 8);
	if (r == ZN_OK)
		r = zn_write_all(w->fd, io.sums, io.npages * 8);
	if (r == ZN_OK)
		r = zn_write_all(w->fd, foot, sizeof(foot));
	/* The archive's size, and the file's: zn_writer_open emptied a file that held more. */
	const uint64_t end = index_off + index_len + io.npages * 8 + ZN_FOOTER_SIZE;
	if (r == ZN_ERR_IO && !w->pipe.out_errno)
		w->pipe.out_errno = errno;
	free(io.sums);
	w->stats.entries = m;
	w->stats.content_bytes = in.content_bytes;
	w->stats.archive_bytes = end;
	w->stats.blocks = w->pipe.write_seq;
	w->stats.stored_blocks = w->pipe.stored_blocks;
	w->stats.index_bytes = index_len;
	if (r == ZN_OK)
		w->stats.complete = 1;
	return r;
}

zn_result zn_writer_finish(struct zn_writer *w)
{
	if (!w || w->finished)
		return ZN_ERR_INVALID_ARG;
	w->finished = 1;
	struct wr_clock clock = wr_clock_start();
	zn_result r = finish_blocks(w);
	wr_clock_stop(clock, &w->pipe.cpu_read);
	RETURN_IF_ERROR(r);
	clock = wr_clock_start();
	settle_entries(w);
	wr_pkg_finish(w);
	drop_work_memory(w);
	uint64_t *order;
	size_t m;
	r = make_rows(w, &order, &m);
	if (r == ZN_OK)
		r = write_index(w, order, m);
	wr_clock_stop(clock, &w->pipe.cpu_index);
	return r != ZN_OK ? r : w->input_err;
}

void zn_writer_stats(const struct zn_writer *w, struct zn_write_stats *st)
{
	if (!w || !st)
		return;
	struct zn_write_stats s = w->stats;
	s.struct_size = sizeof(s);
	s.write_errno = w->pipe.out_errno;
	s.cpu_read_ns = atomic_load(&w->pipe.cpu_read);
	s.cpu_compress_ns = atomic_load(&w->pipe.cpu_compress);
	s.cpu_span_ns = atomic_load(&w->pipe.cpu_span);
	s.cpu_output_ns = atomic_load(&w->pipe.cpu_output);
	s.cpu_index_ns = atomic_load(&w->pipe.cpu_index);
	zn_sized_out(st, &s, sizeof(s), ZN_FIRST_SIZE_write_stats);
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
	wr_drop_pending(w); /* first: the crew may be reading into a slot */
	wr_pipe_close(w);   /* the jobs still queued skip their work, then the pool is freed */
	wr_batch_close(w);
	drop_work_memory(w);
	for (struct strchunk *c = w->strs, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	for (uint32_t i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	for (size_t i = 0; i < w->nents; i++)
		free(w->ents[i].pkg);
	free(w->ents);
	free(w->repo);
	free(w->walk.pathbuf);
	free(w->walk.roots);
	free(w);
}
