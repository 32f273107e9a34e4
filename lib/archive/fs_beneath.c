/* SPDX-License-Identifier: MIT */
/* fs_beneath.c - symlink-proof file operations below the target directory, and metadata
 * (see fs_beneath.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <dirent.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_beneath.h"
#include "znippy.h"

/* ------------------------------------------------------------------------------------------------
 * The target and its directories
 * ---------------------------------------------------------------------------------------------- */

/* The process's umask, read without changing it (umask(2) would race with other threads). */
static int read_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	int mask = -1;
	char line[128];
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Umask:", 6))
			mask = (int)strtol(line + 6, NULL, 8);
	if (f)
		fclose(f);
	return mask;
}

void zn_fs_target_start(struct zn_target *t)
{
	static _Atomic unsigned targets;
	t->seq = atomic_fetch_add(&targets, 1);
	t->umask = read_umask();
	/* Without /proc the umask cannot be read without changing it (a race with the program's
	 * other threads): the common 022 stands in. */
	t->perm_mask =
	        t->same_permissions ? 07777 : 0777 & ~(uint32_t)(t->umask < 0 ? 022 : t->umask);
	t->euid = geteuid();
	t->egid = getegid();
	/* Directory descriptors a cache may hold (zn_dircache): an eighth of the limit on open
	 * files, from 4 to 16 (from ulimit -n 128), leaving the rest to the other caches (the
	 * caller's and each worker's), the files and the archive. Walking up 3,000 levels opens
	 * 56,000 directories with 8, 16,900 with 12 and 15,600 with 16 (3,000 are walked down). */
	struct rlimit nofile;
	rlim_t lim = getrlimit(RLIMIT_NOFILE, &nofile) ? 64 : nofile.rlim_cur;
	t->dir_fds = (unsigned)ZN_MAX(4, ZN_MIN(16, lim / 8));
	/* Unnamed files are named through /proc/self/fd (make_link). */
	atomic_init(&t->tmpfile, access("/proc/self/fd", X_OK) == 0);
	atomic_init(&t->empty_path, 1);
	atomic_init(&t->owners_failed, 0);
#ifdef ZN_TEST_HOOKS
	if (getenv("ZN_TEST_NO_TMPFILE")) /* as on a file system without O_TMPFILE */
		atomic_init(&t->tmpfile, 0);
#endif
	pthread_mutex_init(&t->names_mu, NULL);
}

void zn_fs_target_end(struct zn_target *t)
{
	if (t->rootfd >= 0)
		close(t->rootfd);
	t->rootfd = -1;
	free(t->reopened);
	t->reopened = NULL;
	pthread_mutex_destroy(&t->names_mu);
}

/* ------------------------------------------------------------------------------------------------
 * The directory cache: a chain of held ancestors
 *
 * Entries come in path order (and in reverse, for the modes at the end), so the next parent
 * shares most of its components with the last one. The cache keeps the last parent's path with
 * the end of each component, and O_PATH descriptors for some of its levels: a new parent keeps
 * the levels it shares, and only the components after the deepest held one it shares are opened,
 * one openat(O_NOFOLLOW) each. Resolving every parent from the target again (openat2 of the whole
 * path, or component by component past PATH_MAX) made extraction of a tree D levels deep cost
 * D^2/2 component lookups in each phase: 51 s for 3,000 levels.
 *
 * Which levels are held: opening from level a down to level x holds x and the levels 1, 2, 4,
 * 8, ... above it, so walking back up one level at a time (the files after a subtree, or the
 * modes, deepest first) reopens at most as many levels as it climbs past the nearest held one:
 * O(D log D) opens for a walk up D levels, with about log2(D) descriptors held (12 for 3,000).
 * A cache holds at most t->dir_fds (zn_fs_target_start); the process's limit on open files is
 * respected whatever the depth: on EMFILE the ancestors' descriptors are let go and the open is
 * tried again.
 *
 * The descriptors only anchor *at() calls: a held ancestor was opened without following a
 * symlink, below the target, so a directory swapped for a symlink afterwards is not followed
 * (the held one is used, or the swapped name is refused, ELOOP). Components were checked by
 * zn_path_is_safe: no "..", so nothing resolves above the level it starts from.
 * ---------------------------------------------------------------------------------------------- */

void zn_dircache_init(struct zn_dircache *c)
{
	memset(c, 0, sizeof(*c));
}

/* Close the descriptors of levels deeper than `depth`, and forget those levels. */
static void dircache_cut(struct zn_dircache *c, size_t depth)
{
	for (size_t k = depth; k < c->depth; k++)
		if (c->fds[k] >= 0) {
			close(c->fds[k]);
			c->held--;
		}
	if (depth < c->depth)
		c->depth = depth;
	c->len = depth ? c->ends[depth - 1] : 0;
}

void zn_dircache_free(struct zn_dircache *c)
{
	dircache_cut(c, 0);
	free(c->path);
	free(c->ends);
	free(c->fds);
	zn_dircache_init(c);
}

/* Let go of every held descriptor but the deepest, keeping `keep` (a level, or SIZE_MAX). */
static void dircache_release(struct zn_dircache *c, size_t keep)
{
	for (size_t k = 0; k < c->depth; k++)
		if (c->fds[k] >= 0 && k != keep) {
			close(c->fds[k]);
			c->fds[k] = -1;
			c->held--;
		}
}

/* At the budget: every other held level let go, the deepest kept, so that what stays is still
 * spread over the chain. */
static void dircache_thin(struct zn_dircache *c)
{
	int drop = 0;
	for (size_t k = c->depth; k-- > 0;)
		if (c->fds[k] >= 0 && !(drop ^= 1)) {
			close(c->fds[k]);
			c->fds[k] = -1;
			c->held--;
		}
}

/* Room for `depth` levels and a path of `len` bytes. */
static int dircache_reserve(struct zn_dircache *c, size_t depth, size_t len)
{
	if (len + 1 > c->cap) {
		char *np = realloc(c->path, len + 1);
		if (!np)
			return -1;
		c->path = np;
		c->cap = len + 1;
	}
	if (depth > c->levels_cap) {
		size_t cap = ZN_MAX(depth, c->levels_cap * 2);
		size_t *ne = realloc(c->ends, cap * sizeof(*ne));
		if (ne)
			c->ends = ne;
		int *nf = ne ? realloc(c->fds, cap * sizeof(*nf)) : NULL;
		if (!nf)
			return -1;
		c->fds = nf;
		c->levels_cap = cap;
	}
	return 0;
}

/* Directory comp in dfd, opened without following a symlink; with `create`, made if missing
 * (mode 0777 less the umask, as mkdir -p). A symlink there fails with ELOOP (where
 * O_PATH | O_DIRECTORY | O_NOFOLLOW gives ENOTDIR), as a symlink on a path is named. */
static int open_level(int dfd, const char *comp, int create)
{
	const int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dfd, comp, flags);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dfd, comp, 0777) && errno != EEXIST)
			return -1;
		fd = openat(dfd, comp, flags);
	}
	struct stat st;
	if (fd < 0 && errno == ENOTDIR && !fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		errno = ELOOP;
	return fd;
}

/* Levels [from, c->depth) of the chain opened (levels below `from` are held or the target), as
 * the top of this section says. 0, or -1 with errno, the chain then cut below the level that
 * failed. */
static int dircache_open(const struct zn_target *t, struct zn_dircache *c, size_t from)
{
	size_t a = from;
	while (a > 0 && c->fds[a - 1] < 0)
		a--;
	int fd = a ? c->fds[a - 1] : t->rootfd;
	const size_t x = c->depth;
	for (size_t k = a; k < x; k++) { /* level k + 1 */
		size_t start = k ? c->ends[k - 1] + 1 : 0, len = c->ends[k] - start;
		char comp[256];
		if (len >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, c->path + start, len);
		comp[len] = 0;
		int nfd = open_level(fd, comp, 1);
		if (nfd < 0 && (errno == EMFILE || errno == ENFILE) && c->held) {
			dircache_release(c, k ? k - 1 : SIZE_MAX); /* fd stays: its level is kept */
			nfd = open_level(fd, comp, 1);
		}
		if (nfd < 0)
			goto fail;
		if (k && c->fds[k - 1] < 0)
			close(fd);                  /* a level passed through, not held */
		size_t up = x - (k + 1);            /* levels above the target */
		int hold = !up || !(up & (up - 1)); /* the target, or 1, 2, 4, ... above it */
		if (hold && c->held >= t->dir_fds)
			dircache_thin(c);
		c->fds[k] = hold ? nfd : -1;
		c->held += hold;
		fd = nfd;
		continue;
	fail:;
		int err = errno;
		if (k && c->fds[k - 1] < 0)
			close(fd);
		size_t keep = k;
		while (keep > 0 && c->fds[keep - 1] < 0)
			keep--;
		c->depth = k; /* levels k.. have no descriptor yet */
		dircache_cut(c, keep);
		errno = err;
		return -1;
	}
	return 0;
}

int zn_fs_parent(const struct zn_target *t, struct zn_dircache *c, const char *path, size_t len,
                 char *base, size_t base_cap)
{
	size_t cut = len;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	size_t blen = len - cut;
	if (blen >= base_cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(base, path + cut, blen);
	base[blen] = 0;
	const size_t plen = cut ? cut - 1 : 0;
	/* The levels shared with the last parent: those ending within the common prefix, at a
	 * component boundary of both. */
	size_t m = 0, lim = ZN_MIN(c->len, plen), keep = 0;
	while (m < lim && c->path[m] == path[m])
		m++;
	while (keep < c->depth && c->ends[keep] <= m &&
	       (c->ends[keep] == plen || path[c->ends[keep]] == '/'))
		keep++;
	if (keep == c->depth && c->len == plen)
		return plen ? c->fds[keep - 1] : t->rootfd; /* the deepest level is always held */
	dircache_cut(c, keep);
	size_t depth = keep;
	for (size_t i = c->len + (keep > 0); i < plen; i++)
		depth += path[i] == '/';
	depth += plen > c->len;
	if (dircache_reserve(c, depth, plen)) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(c->path + c->len, path + c->len, plen - c->len);
	for (size_t i = c->len + (keep > 0); i <= plen && c->depth < depth; i++)
		if (i == plen || path[i] == '/') {
			c->fds[c->depth] = -1;
			c->ends[c->depth++] = i;
		}
	c->len = plen;
	if (dircache_open(t, c, keep))
		return -1;
	return plen ? c->fds[c->depth - 1] : t->rootfd;
}

int zn_fs_mkdir(struct zn_target *t, struct zn_dircache *c, const char *path, size_t len, int keep,
                uint64_t who)
{
	char base[256];
	int dfd = zn_fs_parent(t, c, path, len, base, sizeof(base));
	if (dfd < 0)
		return -1;
	if (!mkdirat(dfd, base, 0777))
		return 0;
	if (errno != EEXIST)
		return -1;
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return -1;
	if (S_ISDIR(st.st_mode))
		zn_fs_clean_stale(t, dfd, base); /* a killed extraction's, in a rerun */
	if (S_ISDIR(st.st_mode) && t->euid && st.st_uid == t->euid && (st.st_mode & 0300) != 0300) {
		/* Ours but closed to us (extracted before from a read-only directory): opened up
		 * while its files are written, as tar does. Its mode from the archive is set at the
		 * end (apply_meta_dir); with keep, its own mode is given back. */
		if (keep && t->nreopened == t->reopened_cap) {
			size_t cap = t->reopened_cap * 2 + 8;
			struct zn_reopened *np = realloc(t->reopened, cap * sizeof(*np));
			if (!np)
				return 1; /* not opened up: its missing files are named as not
				             created */
			t->reopened = np;
			t->reopened_cap = cap;
		}
		if (!zn_fs_chmod_dir(dfd, base, (st.st_mode & 07777) | 0700) && keep)
			t->reopened[t->nreopened++] = (struct zn_reopened){who, st.st_mode & 07777};
	}
	if (S_ISDIR(st.st_mode) && keep)
		return 1; /* kept as it is, and not given the archive's mode */
	if (S_ISDIR(st.st_mode))
		return 0;
	if (!t->overwrite) {
		errno = EEXIST;
		return -1;
	}
	if (unlinkat(dfd, base, 0))
		return -1;
	return mkdirat(dfd, base, 0777);
}

/* ------------------------------------------------------------------------------------------------
 * Files and links
 * ---------------------------------------------------------------------------------------------- */

/* What --overwrite may remove where the archive has a file or link: anything but a directory
 * that holds something (an empty one goes, as with tar). 0, or -1 with errno set. */
static int remove_old(int dfd, const char *base)
{
	if (!unlinkat(dfd, base, 0) || errno == ENOENT)
		return 0;
	return errno == EISDIR && !unlinkat(dfd, base, AT_REMOVEDIR) ? 0 : -1;
}

void zn_fs_temp_name(const struct zn_target *t, uint64_t who, int k, char out[64])
{
	snprintf(out, 64, k ? ".znippy-%ld-%u-%llu-%d.part" : ".znippy-%ld-%u-%llu.part",
	         (long)getpid(), t->seq, (unsigned long long)who, k);
}

/* A link l at name in dfd: a symlink, a hardlink, or the unnamed file's first name. The file
 * is named from its descriptor where this process may (AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH:
 * root), else through its /proc/self/fd entry (linkat with AT_SYMLINK_FOLLOW links what the magic
 * link points at, which needs no privilege); the first takes a tenth less time (a path walk
 * through /proc less: 0.67 against 0.74 s of system time for 30,000 files of 4 KiB, tmpfs). */
static int make_link(const struct zn_target *t, const struct zn_linkspec *l, int dfd,
                     const char *name)
{
	if (l->target)
		return symlinkat(l->target, dfd, name);
	if (l->tbase)
		return linkat(l->tfd, l->tbase, dfd, name, 0);
	if (atomic_load_explicit(&t->empty_path, memory_order_relaxed)) {
		if (!linkat(l->fd, "", dfd, name, AT_EMPTY_PATH))
			return 0;
		if (errno != ENOENT && errno != EPERM)
			return -1;
		/* Without the capability AT_EMPTY_PATH fails with ENOENT: by /proc from now on (a
		 * name's directory that is gone fails there again). */
		atomic_store_explicit(&((struct zn_target *)t)->empty_path, 0,
		                      memory_order_relaxed);
	}
	char self[32];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", l->fd);
	return linkat(AT_FDCWD, self, dfd, name, AT_SYMLINK_FOLLOW);
}

/* zn_fs_place_link, saying in *beside (1) when the name beside the old one could not be made,
 * or (2) could not replace it. */
static int place(const struct zn_target *t, const struct zn_linkspec *l, int dfd, const char *base,
                 uint64_t who, int *beside)
{
	*beside = 0;
	int rc = make_link(t, l, dfd, base);
	if (!rc || errno != EEXIST || !t->overwrite)
		return rc;
	struct stat st;
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
		return remove_old(dfd, base) ? -1 : make_link(t, l, dfd, base);
	for (int k = 0; k < ZN_TEMP_TRIES; k++) {
		char tmp[64];
		zn_fs_temp_name(t, who, k, tmp);
		if (make_link(t, l, dfd, tmp)) {
			if (errno == EEXIST)
				continue;
			*beside = 1;
			return -1;
		}
		rc = renameat(dfd, tmp, dfd, base);
		int err = errno;
		unlinkat(dfd, tmp, 0); /* left by a rename onto a hardlink of the same file */
		errno = err;
		*beside = rc ? 2 : 0;
		return rc;
	}
	*beside = 1;
	errno = EEXIST;
	return -1;
}

int zn_fs_place_link(const struct zn_target *t, const struct zn_linkspec *l, int dfd,
                     const char *base, uint64_t who)
{
	int beside;
	return place(t, l, dfd, base, who, &beside);
}

int zn_fs_open_new(struct zn_target *t, int dfd, uint32_t mode, uint64_t who, struct zn_outfile *f)
{
	if (atomic_load_explicit(&t->tmpfile, memory_order_relaxed)) {
		int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode & 0777);
		if (fd >= 0) {
			*f = (struct zn_outfile){fd, -1};
			return 0;
		}
		/* The file system has none (EOPNOTSUPP), or the kernel (EISDIR, EINVAL): named
		 * temporary files from here on. Anything else is this file's failure. */
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -1;
		atomic_store(&t->tmpfile, 0);
	}
	for (int k = 0; k < ZN_TEMP_TRIES; k++) {
		char tmp[64];
		zn_fs_temp_name(t, who, k, tmp);
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                mode & 0777);
		if (fd >= 0) {
			*f = (struct zn_outfile){fd, k};
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST; /* every name taken */
	return -1;
}

/* A file under a temporary name takes base's: without replacing anything (renameat2's
 * RENAME_NOREPLACE, or where the file system lacks it a check first), or with t->overwrite over
 * a file or link, or an empty directory. */
static int publish_named(const struct zn_target *t, const struct zn_outfile *f, int dfd,
                         const char *base, uint64_t who, int *beside)
{
	char tmp[64];
	struct stat st;
	zn_fs_temp_name(t, who, f->tmpk, tmp);
	const int exists = !fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW);
	const int dir = exists && S_ISDIR(st.st_mode);
	if (!t->overwrite) {
		int rc = exists ? -1 : renameat2(dfd, tmp, dfd, base, RENAME_NOREPLACE);
		if (rc && !exists && (errno == EINVAL || errno == ENOSYS))
			rc = renameat(dfd, tmp, dfd, base); /* checked just above */
		if (rc && (exists || errno == EEXIST))
			errno = dir ? EISDIR : EEXIST;
		return rc;
	}
	if (dir && remove_old(dfd, base)) {
		if (errno == ENOTEMPTY || errno == EEXIST)
			errno = EISDIR; /* a directory that holds something is never removed */
		return -1;
	}
	if (renameat(dfd, tmp, dfd, base)) {
		*beside = exists ? 2 : 0;
		return -1;
	}
	return 0;
}

int zn_fs_publish(const struct zn_target *t, const struct zn_outfile *f, int dfd, const char *base,
                  uint64_t who, int *beside)
{
	*beside = 0;
	if (f->tmpk >= 0)
		return publish_named(t, f, dfd, base, who, beside);
	struct zn_linkspec l = {NULL, -1, NULL, f->fd};
	int rc = place(t, &l, dfd, base, who, beside);
	if (rc && !*beside && (errno == ENOTEMPTY || errno == EEXIST)) {
		/* The name is taken (no overwrite), or by a directory that holds something: say
		 * which, as a directory is never replaced by a file. */
		struct stat st;
		int dir = !fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
		errno = dir ? EISDIR : EEXIST;
	}
	return rc;
}

void zn_fs_discard(const struct zn_target *t, struct zn_outfile *f, int dfd, uint64_t who)
{
	if (f->tmpk >= 0 && dfd >= 0) {
		char tmp[64];
		zn_fs_temp_name(t, who, f->tmpk, tmp);
		unlinkat(dfd, tmp, 0); /* gone already once published */
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* Whether name is one zn_fs_temp_name makes, and of which process. */
static int temp_name_pid(const char *name, long *pid)
{
	unsigned seq;
	unsigned long long who;
	int k, end = 0;
	if (sscanf(name, ".znippy-%ld-%u-%llu.part%n", pid, &seq, &who, &end) == 3 && end &&
	    !name[end])
		return 1;
	end = 0;
	return sscanf(name, ".znippy-%ld-%u-%llu-%d.part%n", pid, &seq, &who, &k, &end) == 4 &&
	       end && !name[end];
}

void zn_fs_clean_stale(const struct zn_target *t, int dfd, const char *base)
{
	int fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	const long self = (long)getpid();
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid;
		struct stat st;
		if (de->d_name[0] != '.' || !temp_name_pid(de->d_name, &pid) || pid <= 0 ||
		    pid == self)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != t->euid)
			continue;
		if (pid == (pid_t)pid && kill((pid_t)pid, 0) && errno == ESRCH)
			unlinkat(dirfd(d), de->d_name, 0); /* its process is gone */
	}
	closedir(d);
}

int zn_fs_place_hardlink(const struct zn_target *t, struct zn_dircache *tc, const char *path,
                         size_t len, int dfd, const char *base, uint64_t who)
{
	char tbase[256];
	int tfd = zn_fs_parent(t, tc, path, len, tbase, sizeof(tbase));
	if (tfd < 0)
		return -1;
	struct zn_linkspec l = {NULL, tfd, tbase, -1};
	return zn_fs_place_link(t, &l, dfd, base, who);
}

/* ------------------------------------------------------------------------------------------------
 * Metadata
 * ---------------------------------------------------------------------------------------------- */

/* Access and modification time for an entry: its mtime (floor division for times before 1970). */
static void entry_times(const struct zn_target *t, const struct zn_meta *m, struct timespec ts[2])
{
	if (t->touch || (m->lost & ZN_LOST_MTIME)) { /* as tar -m: as the extraction made them */
		ts[0].tv_sec = ts[1].tv_sec = 0;
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
		return;
	}
	ts[0].tv_sec = m->mtime_ns / 1000000000;
	ts[0].tv_nsec = m->mtime_ns % 1000000000;
	if (ts[0].tv_nsec < 0) {
		ts[0].tv_nsec += 1000000000;
		ts[0].tv_sec--;
	}
	ts[1] = ts[0];
}

/* The id on this system of the user (group: of the group) stored as name with id stored: the
 * name's, when this system knows it (tar's default), else the stored one. */
static uint32_t local_id(struct zn_target *t, const char *name, size_t len, int group,
                         uint32_t stored)
{
	if (!t->by_name || !name || !len || len > 255)
		return stored;
	pthread_mutex_lock(&t->names_mu);
	const struct zn_owner_name *k = NULL;
	for (unsigned i = 0; i < t->nnames && !k; i++)
		if (t->names[i].len == len && t->names[i].group == group &&
		    !memcmp(t->names[i].name, name, len))
			k = &t->names[i];
	if (!k) {
		struct zn_owner_name *n = &t->names[t->next_name];
		t->next_name = (t->next_name + 1) % 16;
		t->nnames += t->nnames < 16;
		memcpy(n->name, name, len);
		n->name[len] = 0;
		n->len = (uint8_t)len;
		n->group = (uint8_t)group;
		n->found = 0;
		/* A group's entry lists its members: as large as it takes, as glibc's getgrnam. */
		for (size_t size = 16384; size <= (64u << 20); size *= 4) {
			char *buf = malloc(size);
			int e = ENOMEM;
			if (buf && !group) {
				struct passwd pw, *res = NULL;
				e = getpwnam_r(n->name, &pw, buf, size, &res);
				if (!e && res)
					n->found = 1, n->id = (uint32_t)pw.pw_uid;
			} else if (buf) {
				struct group gr, *res = NULL;
				e = getgrnam_r(n->name, &gr, buf, size, &res);
				if (!e && res)
					n->found = 1, n->id = (uint32_t)gr.gr_gid;
			}
			free(buf);
			if (e != ERANGE)
				break;
		}
		k = n;
	}
	uint32_t id = k->found ? k->id : stored;
	pthread_mutex_unlock(&t->names_mu);
	return id;
}

/* Entry `who` could not be given owner uid:gid (errno says why): named, and counted, which fails
 * the extraction, as tar's fails (the files are there, not as asked). */
static void owner_failed(struct zn_target *t, uint64_t who, uint32_t uid, uint32_t gid)
{
	char msg[96];
	snprintf(msg, sizeof(msg), "cannot give it its stored owner %u:%u: %s", uid, gid,
	         strerror(errno));
	atomic_fetch_add_explicit(&t->owners_failed, 1, memory_order_relaxed);
	if (t->warn)
		t->warn(t->warn_ctx, who, ZN_ERR_IO, msg);
}

/* Owner, mode and times of a file just written. Files are created with their permission bits,
 * so the chown and chmod calls are made only when they change something: per small file that
 * is two system calls fewer, which shows when extracting 100,000 files. */
/* Gives fd the entry's owner when that is asked for, and returns the mode to set: setuid and
 * setgid are dropped unless the file ended up with the entry's owner and group (as libarchive
 * does), so a non-root extraction never makes a set-id program owned by the wrong user. */
static uint32_t apply_owner(struct zn_target *t, int fd, const struct zn_meta *m, uid_t cur_uid,
                            gid_t cur_gid, int *chowned, uint64_t who)
{
	*chowned = 0;
	/* A lost owner is left to whoever owns it now, and so without set-id bits (a directory's
	 * setgid bit grants nothing: it stays); so are the bits of a file whose owner was to be
	 * found by names that were lost, as the stored ids may be someone else here. */
	const uint32_t kept = m->type == ZN_TYPE_DIR ? 03777 : 01777;
	if (m->lost & ZN_LOST_OWNER)
		return m->mode & kept & t->perm_mask;
	const uint32_t setid_ok = t->by_name && (m->lost & ZN_LOST_NAMES) ? kept : 07777;
	/* Who owns it matters when owners are applied, and otherwise only for set-id bits. */
	int need = t->same_owner || (m->mode & 06000);
	uint32_t uid = need ? local_id(t, m->uname, m->uname_len, 0, m->uid) : m->uid;
	uint32_t gid = need ? local_id(t, m->gname, m->gname_len, 1, m->gid) : m->gid;
	int owned = uid == cur_uid && gid == cur_gid;
	if (!owned && t->same_owner) {
		*chowned = 1;
		/* AT_EMPTY_PATH: fd may be an O_PATH descriptor (see apply_meta_dir). A failure is
		 * not fatal, as with tar, and named, as tar names it. */
		owned = fchownat(fd, "", uid, gid, AT_EMPTY_PATH) == 0;
		if (!owned)
			owner_failed(t, who, uid, gid);
	}
	return (owned ? m->mode & setid_ok : m->mode & 01777) & t->perm_mask;
}

void zn_fs_apply_meta_fd(struct zn_target *t, int fd, const struct zn_meta *m, uint64_t who)
{
	int chowned;
	uint32_t mode = apply_owner(t, fd, m, t->euid, t->egid, &chowned, who); /* a file it made */
	/* The file was created with mode & 0777, less the umask: the chmod is needed only where
	 * that is not the mode wanted. With the umask unknown (no /proc), only as stored: a mode
	 * the umask is to cut is left as the kernel cut it. */
	if (chowned || (mode & 07000) ||
	    (t->umask < 0 ? t->perm_mask == 07777 : (mode & (uint32_t)t->umask) != 0))
		fchmod(fd, mode);
	struct timespec ts[2];
	entry_times(t, m, ts);
	futimens(fd, ts);
}

/* The entry's times on base in dfd, never through a symlink. */
void zn_fs_apply_times_at(struct zn_target *t, int dfd, const char *base, const struct zn_meta *m)
{
	struct timespec ts[2];
	entry_times(t, m, ts);
	utimensat(dfd, base, ts, AT_SYMLINK_NOFOLLOW);
}

/* Owner and times of a symlink just created (a symlink has no mode of its own). */
void zn_fs_apply_meta_link(struct zn_target *t, int dfd, const char *base, const struct zn_meta *m,
                           uint64_t who)
{
	if (t->same_owner && !(m->lost & ZN_LOST_OWNER)) {
		uint32_t uid = local_id(t, m->uname, m->uname_len, 0, m->uid);
		uint32_t gid = local_id(t, m->gname, m->gname_len, 1, m->gid);
		struct stat st;
		/* A symlink made by this user is this user's: a chown only where that changes it.
		 */
		if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) || st.st_uid != uid ||
		    st.st_gid != gid)
			if (fchownat(dfd, base, uid, gid, AT_SYMLINK_NOFOLLOW))
				owner_failed(t, who, uid, gid);
	}
	zn_fs_apply_times_at(t, dfd, base, m);
}

/* Owner, mode and times of a directory, through a descriptor opened with O_NOFOLLOW: if the
 * directory was replaced by a symlink meanwhile, nothing is changed (fchmodat has no
 * AT_SYMLINK_NOFOLLOW, so a name-based chmod would follow it). */
void zn_fs_apply_meta_dir(struct zn_target *t, int dfd, const char *base, const struct zn_meta *m,
                          uint64_t who)
{
	struct timespec ts[2];
	entry_times(t, m, ts);
	/* A directory this user may not read (an existing one, with --overwrite) is pinned by an
	 * O_PATH descriptor instead, also without following a symlink; its /proc/self/fd name
	 * reaches exactly that directory. Failures are not fatal, as with tar. */
	int fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int path_only = fd < 0;
	if (path_only)
		fd = openat(dfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	int chowned, err = 0;
	struct stat st;
	if (fstat(fd, &st)) { /* O_PATH descriptors have fstat */
		close(fd);
		return;
	}
	/* Its owner now: another user's, for a directory that was there before. */
	uint32_t mode = apply_owner(t, fd, m, st.st_uid, st.st_gid, &chowned, who);
	if (chowned && fstat(fd, &st)) {
		close(fd);
		return;
	}
	uint32_t cur = st.st_mode & 07777;
	if (t->perm_mask != 07777) {
		/* As tar without -p: the permission bits, less the umask (never more open than
		 * mkdir made the directory, when the umask is unknown); the set-id and sticky bits
		 * the directory has stay (a setgid one inherited from its parent keeps the group
		 * going), and the archive's are not added. */
		uint32_t rwx = t->umask < 0 ? mode & cur & 0777 : mode & 0777;
		mode = (cur & ~0777u) | rwx;
	}
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int mode_bad = 0, time_bad = 0;
	if (mode != cur && (mode_bad = path_only ? chmod(self, mode) : fchmod(fd, mode)))
		err = errno;
	if ((st.st_mtim.tv_sec != ts[1].tv_sec || st.st_mtim.tv_nsec != ts[1].tv_nsec ||
	     st.st_atim.tv_sec != ts[0].tv_sec || st.st_atim.tv_nsec != ts[0].tv_nsec) &&
	    (time_bad = path_only ? utimensat(AT_FDCWD, self, ts, 0) : futimens(fd, ts)))
		err = errno;
	close(fd);
	/* Another user's directory that was there before (extracting into /usr/local as its
	 * user): the files are written, and this is said, as a warning. */
	if (mode_bad || time_bad) {
		char msg[160];
		snprintf(msg, sizeof(msg), "directory kept its %s: %s",
		         mode_bad && time_bad ? "mode and time"
		         : mode_bad           ? "mode"
		                              : "time",
		         strerror(err));
		if (t->warn)
			t->warn(t->warn_ctx, who, ZN_OK, msg);
	}
}

/* chmod of directory `base` in dfd, without following a symlink put there: through an O_PATH
 * descriptor's /proc/self/fd name (Linux has no fchmodat(AT_SYMLINK_NOFOLLOW) before 6.6). */
int zn_fs_chmod_dir(int dfd, const char *base, uint32_t mode)
{
	int fd = openat(dfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int rc = chmod(self, mode);
	close(fd);
	return rc;
}
