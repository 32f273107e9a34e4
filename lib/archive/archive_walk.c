/* SPDX-License-Identifier: MIT */
/* archive_walk.c - walking directory trees for the writer: descriptors only, byte order of names.
 */
#include <dirent.h>

#include "archive_writer.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b); /* byte order */
}

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

/* Adds what `name` in directory `dir` is. Walking a subdirectory below w->walk.levels may
 * replace dir->fd (the same directory, opened again), or leave it -1 if that failed
 * (reported). */
static zn_result add_one(struct zn_writer *w, struct level *dir, const char *name, size_t rel_len,
                         const struct stat *st, int depth)
{
	int dirfd = dir->fd;
	const char *rel = w->walk.pathbuf;
	uint64_t idx;
	if (S_ISDIR(st->st_mode)) {
		if (rel_len ? walked_before(w, rel, rel_len, st) : root_walked(w, st)) {
			wr_report(w, rel_len ? rel : ".", ZN_OK,
			          "given more than once; stored once (the first)");
			return ZN_OK;
		}
		if (rel_len) {
			RETURN_IF_ERROR(wr_new_entry(w, rel, rel_len, ZN_TYPE_DIR, st, &idx));
			if (idx != NO_ENTRY)
				wr_fill_stat(w, &w->ents[idx], st);
		}
		if (w->opt.no_recursion && depth == 0)
			return ZN_OK; /* the PATH itself, not what is in it */
		zn_result r = walk(w, dir, name, rel_len, depth + 1, rel_len ? idx : NO_ENTRY);
		const struct dev_ino here = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
		if (!rel_len && !wr_grow((void **)&w->walk.roots, &w->walk.roots_cap,
		                         w->walk.nroots + 1, sizeof(*w->walk.roots)))
			w->walk.roots[w->walk.nroots++] = here;
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
	char keep = w->walk.pathbuf[l->rel_len];
	w->walk.pathbuf[l->rel_len] = 0;
	wr_report(w, l->rel_len ? w->walk.pathbuf : ".", ZN_ERR_IO, msg);
	w->walk.pathbuf[l->rel_len] = keep;
	w->input_err = ZN_ERR_IO;
}

/* Walks directory `name` in parent, whose entry is `self` (NO_ENTRY: it has none). */
static zn_result walk(struct zn_writer *w, struct level *parent, const char *name, size_t rel_len,
                      int depth, uint64_t self)
{
	RETURN_IF_ERROR(wr_pend_dir_moves(w));
	struct level me = {.up = parent, .name = name, .rel_len = rel_len};
	const int dflags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	me.fd = openat(parent->fd, name, dflags);
	int err = me.fd < 0 ? errno : 0;
	if (me.fd < 0 && wr_give_back_fds(w, err)) {
		me.fd = openat(parent->fd, name, dflags);
		err = me.fd < 0 ? errno : 0;
	}
	if (me.fd < 0) {
		wr_report_errno(w, rel_len ? w->walk.pathbuf : name,
		                "cannot open directory; not stored", err);
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
	int parent_closed = depth > w->walk.levels && parent->up && parent->fd >= 0;
	if (parent_closed) {
		close(parent->fd);
		parent->fd = -1;
	}
	DIR *d = fdopendir(me.fd);
	if (!d) {
		wr_report_errno(w, w->walk.pathbuf, "cannot read directory", errno);
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
		if (wr_grow((void **)&names, &cap, n + 1, sizeof(char *)) ||
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
	if (me.fd < 0 && wr_give_back_fds(w, err)) {
		me.fd = fcntl(dirfd(d), F_DUPFD_CLOEXEC, 0);
		err = me.fd < 0 ? errno : 0;
	}
	if (me.fd < 0) {
		wr_report_errno(w, w->walk.pathbuf, "cannot read directory", err);
		goto out;
	}
	closedir(d);
	d = NULL;
	size_t run_from = 0, run_to = 0, next_run = 0; /* names[run_from..run_to) stated ahead */
	for (size_t i = 0; i < n && r == ZN_OK && me.fd >= 0; i++) {
		size_t nlen = strlen(names[i]);
		size_t child_len = rel_len + (rel_len ? 1 : 0) + nlen;
		if (wr_grow((void **)&w->walk.pathbuf, &w->walk.pathbuf_cap, child_len + 1, 1)) {
			r = ZN_ERR_NOMEM;
			break;
		}
		if (rel_len)
			w->walk.pathbuf[rel_len] = '/';
		memcpy(w->walk.pathbuf + rel_len + (rel_len ? 1 : 0), names[i], nlen + 1);
		if (i >= run_to && i >= next_run) {
			run_from = i;
			run_to = wr_stat_ahead(w, me.fd, names, i, n, &next_run);
		}
		struct stat st;
		err = 0;
		if (i < run_to) {
			st = w->crew.run_st[i - run_from];
			err = w->crew.run_err[i - run_from];
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
			wr_report_removed(w, w->walk.pathbuf);
		} else if (err) {
			wr_report_errno(w, w->walk.pathbuf, "cannot stat", err);
		} else if (w->opt.one_file_system && S_ISDIR(st.st_mode) &&
		           st.st_dev != here.st_dev) {
			/* A mount point: the directory alone. Only directories are tested, as tar
			 * does: a file bind-mounted in place (a container's /etc/hosts), or one of
			 * an overlay's lower layer, is an ordinary member of its directory. */
			uint64_t idx;
			if ((!w->hook.filter || w->hook.filter(w->hook.ctx, w->walk.pathbuf, 1)) &&
			    (r = wr_new_entry(w, w->walk.pathbuf, child_len, ZN_TYPE_DIR, &st,
			                      &idx)) == ZN_OK &&
			    idx != NO_ENTRY)
				wr_fill_stat(w, &w->ents[idx], &st);
		} else if (!w->hook.filter ||
		           w->hook.filter(w->hook.ctx, w->walk.pathbuf, S_ISDIR(st.st_mode))) {
			r = add_one(w, &me, names[i], child_len, &st, depth);
		}
		w->walk.pathbuf[rel_len] = 0;
		if (atomic_load(&w->pipe.cancel) && r == ZN_OK)
			r = wr_first_error(w);
	}
	if (r == ZN_OK)
		r = wr_pend_dir_moves(w); /* the directory is about to go */
	else
		wr_drop_pending(w); /* fatal: nothing more is read */
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
	if (S_ISDIR(st.st_mode) && slash && !*(slash + 1)) {
		struct level top = {.fd = AT_FDCWD};
		r = walk(w, &top, "/", 0, 0, NO_ENTRY);
	} else {
		struct level top = {.fd = dirfd};
		r = add_one(w, &top, base, rel_len, &st, 0);
	}
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
