/* SPDX-License-Identifier: MIT */
/* archive_walk.c - walking directory trees for the writer: descriptors only, byte order of names.
 */
#include <dirent.h>

#include "archive_writer.h"

/* A directory being walked: a frame of the walk's own stack, on the heap, so that a tree of any
 * depth costs memory, not C stack (the recursive walk this replaces crashed on a tree 1,800 deep,
 * which tar archives). Down to w->walk.levels levels each keeps its descriptor open; below, a
 * directory's descriptor is closed while one of its subdirectories is walked, and opened again
 * afterwards (reopen_level), so that a tree of any depth needs few descriptors (tar archives
 * trees 2,000 deep under a limit of 1,024 open files). */
struct level {
	struct level *up; /* NULL: where a PATH starts, never closed */
	const char *name; /* its name in up (up's list of names stays while it is walked) */
	int fd;           /* -1 while closed */
	dev_t dev;        /* as it was when opened (fstat) */
	ino_t ino;
	size_t rel_len; /* its stored path is pathbuf[0..rel_len) */
	/* The walk through it. */
	char **names; /* its entries' names, sorted, each followed by its d_type (is_leaf) */
	size_t n, next;
	size_t run_from, run_to, next_run; /* names[run_from..run_to) stated ahead */
	int depth;
	int parent_closed; /* up->fd was closed for the walk of this one */
	uint64_t self;     /* its entry; NO_ENTRY for a PATH with no name of its own */
	struct dev_ino id; /* as the walk of its parent saw it (lstat) */
};

static zn_result enter_dir(struct zn_writer *w, struct level *parent, const char *name,
                           size_t rel_len, int depth, uint64_t self, const struct dev_ino *id,
                           struct level **out);

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b); /* byte order */
}

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
	uint64_t key, *slot = wr_path_slot(w, rel, len, &key);
	if (!*slot)
		return 0;
	uint64_t i = wr_slot_entry(*slot);
	return w->ents[i].type == ZN_TYPE_DIR && w->ents[i].walked && !w->ents[i].dropped &&
	       same_dir(&w->packs[i].dir, st);
}

/* walked_before for a directory with no name of its own (a PATH ".", or "d/..", under -C). */
static int root_walked(const struct zn_writer *w, const struct stat *st)
{
	for (size_t k = 0; k < w->walk.nroots; k++)
		if (same_dir(&w->walk.roots[k], st))
			return 1;
	return 0;
}

/* Adds regular file `name` of directory dirfd (stored as pathbuf[0..rel_len)): a small one to
 * the batch, a large one read now, a hardlink to one met before as a link. */
static zn_result add_file(struct zn_writer *w, int dirfd, const char *name, size_t rel_len,
                          const struct stat *st)
{
	const char *rel = w->walk.pathbuf;
	uint64_t idx;
	RETURN_IF_ERROR(wr_new_entry(w, rel, rel_len, ZN_TYPE_FILE, st, &idx));
	if (idx == NO_ENTRY)
		return ZN_OK; /* given before: its content is not read again */
	struct went *e = &w->ents[idx];
	wr_fill_stat(w, e, st);
	if (st->st_nlink > 1) {
		int64_t first = wr_inode_lookup(w, st, idx);
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
		return wr_add_pending(w, idx, dirfd, name, st);
	}
	RETURN_IF_ERROR(wr_flush_pending(w));
	/* O_NONBLOCK: if a FIFO replaced the file since the scan, reading it fails at once
	 * instead of waiting for a writer (no effect on regular files). */
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		wr_report_open_failure(w, &w->ents[idx], errno, NULL);
		return ZN_OK;
	}
	struct stat fst;
	if (fstat(fd, &fst) || !S_ISREG(fst.st_mode) || fst.st_ino != st->st_ino ||
	    fst.st_dev != st->st_dev) {
		/* Replaced since the directory was read (by a FIFO, another file, ...). */
		wr_report(w, rel, ZN_ERR_CHANGED, "replaced while being archived; not stored");
		w->input_err = ZN_ERR_IO;
		w->ents[idx].dropped = 1;
		close(fd);
		return ZN_OK;
	}
	struct source src = {.fd = fd, .mtim = st->st_mtim};
	if (e->size >= w->opt.chunk_size)
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	zn_result r = wr_emit_content(w, idx, &src); /* and checks it unchanged after */
	close(fd);
	return r;
}

/* Adds what `name` in directory `dir` is; a directory to walk comes back in *child, entered
 * (see walk_from), else *child is NULL. */
static zn_result add_one(struct zn_writer *w, struct level *dir, const char *name, size_t rel_len,
                         const struct stat *st, int depth, struct level **child)
{
	*child = NULL;
	int dirfd = dir->fd;
	const char *rel = w->walk.pathbuf;
	uint64_t idx;
	if (S_ISDIR(st->st_mode)) {
		if (rel_len ? walked_before(w, rel, rel_len, st) : root_walked(w, st)) {
			wr_report(w, rel_len ? rel : ".", ZN_OK,
			          "given more than once; stored once (the first)");
			return ZN_OK;
		}
		idx = NO_ENTRY;
		if (rel_len) {
			RETURN_IF_ERROR(wr_new_entry(w, rel, rel_len, ZN_TYPE_DIR, st, &idx));
			if (idx != NO_ENTRY)
				wr_fill_stat(w, &w->ents[idx], st);
		}
		if (w->opt.no_recursion && depth == 0)
			return ZN_OK; /* the PATH itself, not what is in it */
		const struct dev_ino id = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
		return enter_dir(w, dir, name, rel_len, depth + 1, idx, &id, child);
	}
	if (!rel_len)
		return ZN_OK;
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target));
		if (n < 0 || n == sizeof(target)) {
			wr_report_errno(w, rel, "cannot read symlink",
			                n < 0 ? errno : ENAMETOOLONG);
			return ZN_OK;
		}
		RETURN_IF_ERROR(wr_new_entry(w, rel, rel_len, ZN_TYPE_SYMLINK, st, &idx));
		if (idx == NO_ENTRY)
			return ZN_OK;
		wr_fill_stat(w, &w->ents[idx], st);
		return wr_set_link(w, &w->ents[idx], target, (size_t)n);
	}
	if (!S_ISREG(st->st_mode)) {
		char msg[64];
		snprintf(msg, sizeof(msg), "not a regular file, directory or symlink; skipped");
		wr_report(w, rel, ZN_ERR_UNSUPPORTED, msg);
		w->input_err = ZN_ERR_IO; /* an input left out, like one that cannot be read */
		return ZN_OK;
	}
	if ((w->out_ino && st->st_ino == w->out_ino && st->st_dev == w->out_dev) ||
	    (w->skip_ino && st->st_ino == w->skip_ino && st->st_dev == w->skip_dev)) {
		wr_report(w, rel, ZN_OK, "is the archive being written; skipped");
		return ZN_OK;
	}
	return add_file(w, dirfd, name, rel_len, st);
}

/* Whether fd is the directory that level l was when the walk went through it. */
static int is_level(int fd, const struct level *l)
{
	struct stat now;
	return !fstat(fd, &now) && now.st_dev == l->dev && now.st_ino == l->ino;
}

/* Level l (closed) opened again by its name from the nearest level above that is open, each
 * step checked to be the directory the walk went through; -1 with *err set (0: one of them was
 * moved or replaced meanwhile). Down the chain of closed levels in a loop, not by recursion: it
 * may be thousands long. */
static int open_level(const struct level *l, int *err)
{
	size_t k = 0; /* closed levels from l up, l's included */
	const struct level *top = l;
	for (; top && (top == l || top->fd < 0); top = top->up)
		k++;
	const struct level **chain = top ? malloc(k * sizeof(*chain)) : NULL;
	if (!chain) { /* no open level above: not reached, a PATH's start is never closed */
		*err = top ? ENOMEM : EBADF;
		return -1;
	}
	size_t i = k;
	for (const struct level *at = l; at != top; at = at->up)
		chain[--i] = at; /* chain[0] is the one just below top */
	int fd = top->fd;
	*err = 0;
	for (i = 0; i < k && fd >= 0; i++) {
		int next =
		        openat(fd, chain[i]->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		*err = errno;
		if (fd != top->fd)
			close(fd);
		if (next >= 0 && !is_level(next, chain[i])) {
			close(next);
			*err = 0;
			next = -1;
		}
		fd = next;
	}
	free(chain);
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
	char keep = w->walk.pathbuf[l->rel_len];
	w->walk.pathbuf[l->rel_len] = 0;
	wr_report(w, l->rel_len ? w->walk.pathbuf : ".", ZN_ERR_IO, msg);
	w->walk.pathbuf[l->rel_len] = keep;
	w->input_err = ZN_ERR_IO;
}

/* Reads directory d's names, sorted by bytes, into l->names; ZN_ERR_NOMEM. */
static zn_result read_names(DIR *d, struct level *l)
{
	size_t cap = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		size_t len = strlen(de->d_name);
		if (wr_grow((void **)&l->names, &cap, l->n + 1, sizeof(char *)) ||
		    !(l->names[l->n] = malloc(len + 2)))
			return ZN_ERR_NOMEM;
		memcpy(l->names[l->n], de->d_name, len + 1);
		l->names[l->n][len + 1] = (char)de->d_type; /* see is_leaf */
		l->n++;
	}
	if (l->n)
		qsort(l->names, l->n, sizeof(char *), cmp_names);
	return ZN_OK;
}

/* Opens `name` in dirfd as a directory, or (name NULL) a new descriptor of dirfd, retried once
 * after the batch gives back its own if descriptors ran short; -1 with *err. */
static int open_retrying(struct zn_writer *w, int dirfd, const char *name, int *err)
{
	const int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	for (int tries = 0;; tries++) {
		int fd = name ? openat(dirfd, name, dflags) : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		*err = fd < 0 ? errno : 0;
		if (fd >= 0 || tries || !wr_give_back_fds(w, *err))
			return fd;
	}
}

/* Done with level l (r: how its walk went; `walked`: its names were gone through): the batch
 * is read if it borrowed l's descriptor (or dropped after a fatal error), the parent's
 * descriptor comes back if l's walk took it, l's is closed unless `keep_fd`, and the directory
 * is marked walked (walked_before, root_walked). l is freed. */
static zn_result leave_dir(struct zn_writer *w, struct level *l, zn_result r, int walked,
                           int keep_fd)
{
	if (walked && r == ZN_OK)
		r = wr_pend_dir_moves(w); /* the directory is about to go */
	else if (walked)
		wr_drop_pending(w); /* fatal: nothing more is read */
	if (l->parent_closed)
		reopen_level(w, l, l->up);
	if (l->fd >= 0 && !keep_fd)
		close(l->fd);
	if (l->self != NO_ENTRY) {
		w->ents[l->self].walked = 1;
		w->packs[l->self].dir = l->id;
	} else if (!l->rel_len && !wr_grow((void **)&w->walk.roots, &w->walk.roots_cap,
	                                   w->walk.nroots + 1, sizeof(*w->walk.roots))) {
		w->walk.roots[w->walk.nroots++] = l->id;
	}
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l);
	return r;
}

/* Opens directory `name` in parent, whose entry is `self` (NO_ENTRY: it has none), and reads its
 * names: *out is the level to walk, or NULL when there is nothing to walk (a problem named). */
static zn_result enter_dir(struct zn_writer *w, struct level *parent, const char *name,
                           size_t rel_len, int depth, uint64_t self, const struct dev_ino *id,
                           struct level **out)
{
	*out = NULL;
	RETURN_IF_ERROR(wr_pend_dir_moves(w));
	struct level *l = malloc(sizeof(*l));
	if (!l)
		return ZN_ERR_NOMEM;
	*l = (struct level){.up = parent,
	                    .name = name,
	                    .rel_len = rel_len,
	                    .depth = depth,
	                    .self = self,
	                    .id = *id};
	int err;
	l->fd = open_retrying(w, parent->fd, name, &err);
	if (l->fd < 0) {
		wr_report_errno(w, rel_len ? w->walk.pathbuf : name,
		                "cannot open directory; not stored", err);
		/* Left out, as tar leaves it out, not stored as an empty directory: its contents
		 * are not in the archive. */
		if (self != NO_ENTRY)
			w->ents[self].dropped = 1;
		return leave_dir(w, l, ZN_OK, 0, 0);
	}
	struct stat here;
	if (fstat(l->fd, &here))
		memset(&here, 0, sizeof(here));
	l->dev = here.st_dev;
	l->ino = here.st_ino;
	/* Deep down, the parent's descriptor is given back while this directory is walked. */
	l->parent_closed = depth > w->walk.levels && parent->up && parent->fd >= 0;
	if (l->parent_closed) {
		close(parent->fd);
		parent->fd = -1;
	}
	DIR *d = fdopendir(l->fd);
	if (!d) {
		wr_report_errno(w, w->walk.pathbuf, "cannot read directory", errno);
		return leave_dir(w, l, ZN_OK, 0, 0);
	}
	zn_result r = read_names(d, l);
	/* The names are read: the directory is used through a descriptor of its own, which the
	 * walks of subdirectories may replace. */
	int fd = r == ZN_OK ? open_retrying(w, dirfd(d), NULL, &err) : -1;
	if (r == ZN_OK && fd < 0)
		wr_report_errno(w, w->walk.pathbuf, "cannot read directory", err);
	if (fd < 0) { /* none of the names is stored; reopen_level goes through d's descriptor */
		r = leave_dir(w, l, r, 0, 1);
		closedir(d);
		return r;
	}
	closedir(d);
	l->fd = fd;
	*out = l;
	return ZN_OK;
}

/* The stat of names[i] of l: from the run stated ahead, or now. Returns 0 or an errno value. */
static int stat_name(struct zn_writer *w, struct level *l, size_t i, struct stat *st)
{
	if (i >= l->run_to && i >= l->next_run) {
		l->run_from = i;
		l->run_to = wr_stat_ahead(w, l->fd, l->names, i, l->n, &l->next_run);
	}
	int err = 0;
	if (i < l->run_to) {
		*st = w->crew.run_st[i - l->run_from];
		err = w->crew.run_err[i - l->run_from];
	} else if (fstatat(l->fd, l->names[i], st, AT_SYMLINK_NOFOLLOW)) {
		err = errno;
	}
	if (!err && S_ISDIR(st->st_mode) && i < l->run_to) {
		/* Not a directory when read: its walk may state runs of its own, so the rest of
		 * this run is stated again. */
		l->run_to = i + 1;
		l->next_run = i + 1;
	}
	return err;
}

/* The next name of level l: stored, or, for a directory to walk, entered (*child). */
static zn_result visit(struct zn_writer *w, struct level *l, struct level **child)
{
	*child = NULL;
	const size_t i = l->next++, rel_len = l->rel_len;
	const char *name = l->names[i];
	size_t nlen = strlen(name);
	size_t child_len = rel_len + (rel_len ? 1 : 0) + nlen;
	if (wr_grow((void **)&w->walk.pathbuf, &w->walk.pathbuf_cap, child_len + 1, 1))
		return ZN_ERR_NOMEM;
	char *path = w->walk.pathbuf;
	if (rel_len)
		path[rel_len] = '/';
	memcpy(path + rel_len + (rel_len ? 1 : 0), name, nlen + 1);
	struct stat st;
	int err = stat_name(w, l, i, &st);
	zn_result r = ZN_OK;
	if (err == ENOENT) {
		wr_report_removed(w, path);
	} else if (err) {
		wr_report_errno(w, path, "cannot stat", err);
	} else if (w->opt.one_file_system && S_ISDIR(st.st_mode) && st.st_dev != l->dev) {
		/* A mount point: the directory alone. Only directories are tested, as tar does: a
		 * file bind-mounted in place (a container's /etc/hosts), or one of an overlay's
		 * lower layer, is an ordinary member of its directory. */
		uint64_t idx;
		if ((!w->hook.filter || w->hook.filter(w->hook.ctx, path, 1)) &&
		    (r = wr_new_entry(w, path, child_len, ZN_TYPE_DIR, &st, &idx)) == ZN_OK &&
		    idx != NO_ENTRY)
			wr_fill_stat(w, &w->ents[idx], &st);
	} else if (!w->hook.filter || w->hook.filter(w->hook.ctx, path, S_ISDIR(st.st_mode))) {
		r = add_one(w, l, name, child_len, &st, l->depth, child);
	}
	if (!*child)
		path[rel_len] = 0;
	if (atomic_load(&w->pipe.cancel) && r == ZN_OK)
		r = wr_first_error(w);
	return r;
}

/* Walks the tree below level `top` (entered), depth first, in byte order of names, with the
 * levels on the walk's own stack. A fatal error stops it: every level is left, innermost
 * first, as a return would have. */
static zn_result walk_from(struct zn_writer *w, struct level *top)
{
	zn_result r = ZN_OK;
	for (struct level *l = top; l;) {
		if (r == ZN_OK && l->next < l->n && l->fd >= 0) {
			struct level *child;
			r = visit(w, l, &child);
			if (child)
				l = child;
			continue;
		}
		struct level *up = l == top ? NULL : l->up;
		r = leave_dir(w, l, r, 1, 0);
		if (up)
			w->walk.pathbuf[up->rel_len] = 0;
		l = up;
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

/* Whether the filter keeps a PATH stored as w->walk.pathbuf: it and each directory above it in
 * the stored path, as a walk would have asked on its way down (an excluded directory takes
 * everything below it along, even when given by a PATH of its own). */
static int filter_path(struct zn_writer *w, size_t rel_len, int is_dir)
{
	char *p = w->walk.pathbuf;
	for (size_t i = 0; i < rel_len; i++) {
		if (p[i] != '/')
			continue;
		p[i] = 0;
		int keep = w->hook.filter(w->hook.ctx, p, 1);
		p[i] = '/';
		if (!keep)
			return 0;
	}
	return w->hook.filter(w->hook.ctx, p, is_dir);
}

zn_result wr_add_path(struct zn_writer *w, const char *fs_path, const char *name)
{
	const char *src = name ? name : fs_path;
	if (wr_grow((void **)&w->walk.pathbuf, &w->walk.pathbuf_cap, strlen(src) + 2, 1))
		return ZN_ERR_NOMEM;
	size_t rel_len = normalize_name(src, w->walk.pathbuf);
	for (const char *p = src; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == src || p[-1] == '/') && (!p[2] || p[2] == '/')) {
			wr_report(w, src, ZN_OK, "stored without the part up to its last '..'");
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
		wr_report_errno(w, fs_path, "cannot stat", errno);
		free(copy);
		return ZN_OK;
	}
	if (!rel_len && !S_ISDIR(st.st_mode)) {
		/* Only a directory may have no name of its own (its entries go to the top). */
		free(copy);
		return ZN_ERR_INVALID_ARG;
	}
	if (rel_len && w->hook.filter && !filter_path(w, rel_len, S_ISDIR(st.st_mode))) {
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
			wr_report_errno(w, fs_path, "cannot open parent directory", errno);
			free(copy);
			return ZN_OK;
		}
	}
	if (!*base) /* fs_path is "/" */
		base = ".";
	zn_result r;
	struct level top = {.fd = dirfd}, *walk = NULL;
	if (S_ISDIR(st.st_mode) && slash && !*(slash + 1)) {
		const struct dev_ino id = {(uint64_t)st.st_dev, (uint64_t)st.st_ino};
		top.fd = AT_FDCWD;
		r = enter_dir(w, &top, "/", 0, 0, NO_ENTRY, &id, &walk);
	} else {
		r = add_one(w, &top, base, rel_len, &st, 0, &walk);
	}
	if (walk)
		r = walk_from(w, walk);
	if (r == ZN_OK)
		r = wr_flush_pending(w); /* before the parent directory's descriptor goes */
	else
		wr_drop_pending(w); /* fatal: nothing more is read */
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	if (r != ZN_OK)
		wr_set_error(w,
		             r); /* inputs that cannot be read are reported, not returned: this is
		                 fatal, and zn_writer_finish() must not complete the archive */
	else if (atomic_load(&w->pipe.cancel))
		r = wr_first_error(w);
	return r;
}
