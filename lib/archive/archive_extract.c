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

#include "archive_block.h"
#include "common/xxh3.h"
#include "common/cpu_features.h"

struct xseg {
	uint64_t entry, boff, len, foff;
	uint8_t first, last;
};

/* ST_KEPT: a directory that existed, kept with its own mode and owner (keep_dirs, or its mode
 * lost to index damage: mkdir_beneath). */
enum { ST_OK = 0, ST_DAMAGED = 1, ST_FAILED = 2, ST_SKIPPED = 3, ST_KEPT = 4 };

/* An entry as the extractor keeps it, one per row: its strings and digest point into the
 * reader's index (zn_entry copies the digest and has room for more; 96 bytes a row instead of
 * 160, for an archive of a million files). */
struct xent {
	const char *path, *link, *uname, *gname;
	const uint8_t *sha256; /* 32 bytes, when has_digest */
	int64_t mtime_ns;
	uint64_t size, block_offset;
	uint32_t path_len, link_len, mode, uid, gid, first_block;
	uint8_t type, uname_len, gname_len;
	uint8_t has_digest : 1;
	uint8_t lost : 5; /* ZN_LOST_*: fields of the row that could not be read (read_entry) */
	uint32_t strip;   /* bytes of the stored path before `path` (strip_components) */
};

struct xjob {
	struct zn_reader *r;
	const struct zn_extract_options *opt;
	int verify;     /* 1: hash instead of write */
	int sparse;     /* leave zero runs as holes (write_at) */
	unsigned strip; /* leading path components left off (strip_components) */
	int skip_old;   /* existing names are passed over (skip_existing, and not overwrite) */
	int keep_dirs;  /* existing directories keep their mode (skip_old or no_overwrite_dir) */
	int rootfd;
	zn_problem_fn problem;
	zn_progress_fn progress;
	void *ctx;

	uint64_t n;
	struct xent *ents; /* all entries (only selected ones are filled) */
	const uint8_t *select;
	uint8_t *status;  /* ST_* per entry; written by workers with atomic byte stores */
	int lost_any;     /* entries named for fields lost to index damage (report_lost) */
	uint8_t *created; /* 1 once this job created the file (only such files are removed), 2 + k
	                   * while it is written under its temporary name number k (temp_name) */
	unsigned seq;     /* this job's number in the process, for temporary names */
	uint64_t *pieces; /* pieces per file */
	/* Files spanning blocks with the very same extent (identical large files stored once):
	 * the first one met takes the pieces, and the others are written from the same decoded
	 * bytes. NULL when there are none. */
	uint64_t *copy_next;  /* per file: the next file of its extent + 1, 0 none */
	uint64_t *primary_of; /* per copy: the file whose pieces it takes + 1; 0 for others */
	uint8_t *bytes_bad;   /* per file holding pieces: a block of its failed to load */
	char *paths;          /* copies of the paths that lay in the mapped archive (own_paths) */

	uint64_t *bstart; /* segments of block b: segs[bstart[b] .. bstart[b+1]) */
	struct xseg *segs;
	uint64_t *work; /* blocks that hold selected pieces, in order */
	uint64_t nwork;
	int64_t *span_idx; /* verify: order of blocks that hold multi-block pieces; -1 none */
	atomic_uint_fast64_t cursor;

	/* Files spanning blocks: fd opened once under a striped lock, closed by the last piece. */
	int *fds;
	atomic_uint_fast64_t *left;
	pthread_mutex_t stripes[64];
	pthread_mutex_t report_mu; /* the problem hook is called one at a time */

	/* Verify's in-order hashing of multi-block files. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t span_turn;
	SHA256_CTX span_ctx;
	uint64_t span_entry;
	int span_missing; /* a piece of span_entry was not hashed (its block failed) */

	atomic_uint_fast64_t done_bytes;
	/* Blocks that failed their checksums, and of them those whose files were judged one by
	 * one by their SHA-256 (salvage_block). */
	atomic_uint_fast64_t blocks_bad, blocks_salvaged;
	atomic_int cancel;
	/* A write from the archive's mapping failed with EFAULT: the archive shrank. */
	atomic_int unreadable;
	zn_result err; /* first system error, under mu */
	int same_owner;
	int umask; /* -1 unknown */
	uint32_t
	        perm_mask; /* mode bits kept: all with same_permissions, else 0777 less the umask */
	uid_t euid;
	gid_t egid;
	/* Owner names looked up on this system (local_id), under names_mu: few in any archive. */
	int by_name;
	pthread_mutex_t names_mu;
	struct known_name {
		char name[256];
		uint8_t len, group, found;
		uint32_t id;
	} names[16];
	unsigned nnames, next_name;
	/* keep_dirs: existing directories of ours, closed to us, opened up while missing files
	 * are written in them, then given back their own mode (restore_dirs). Phase 1. */
	struct reopened {
		uint64_t i;
		uint32_t mode;
	} * reopened;
	size_t nreopened, reopened_cap;
};

static void xreport(struct xjob *j, const struct xent *e, zn_result r, const char *what)
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

static void set_status(struct xjob *j, uint64_t i, uint8_t st)
{
	/* Byte stores from several workers: use an atomic to keep the sanitizer (and C11) happy. */
	__atomic_store_n(&j->status[i], st, __ATOMIC_RELAXED);
}

static uint8_t get_status(struct xjob *j, uint64_t i)
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

/* ------------------------------------------------------------------------------------------------
 * Safe path resolution below the target directory
 * ---------------------------------------------------------------------------------------------- */

static atomic_int have_openat2 = 1;

/* Open directory `rel` (NUL-terminated, relative, already checked safe) below rootfd, never
 * following a symlink; with `create`, missing components are made. The descriptors are O_PATH:
 * they only anchor *at() calls, which need search permission, not read (tar writes into an
 * existing 0300 directory too). */
static int open_dir_beneath(int rootfd, const char *rel, int create)
{
	if (!*rel)
		return dup(rootfd);
	if (atomic_load_explicit(&have_openat2, memory_order_relaxed)) {
		struct open_how how = {
		        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS || errno == EPERM)
			atomic_store(&have_openat2, 0);
		else if (errno != ENAMETOOLONG && (errno != ENOENT || !create))
			return -1; /* a path over PATH_MAX is walked component by component below */
	}
	/* Component by component. */
	int fd = dup(rootfd);
	const char *p = rel;
	char comp[256 + 1];
	while (fd >= 0 && *p) {
		const char *q = strchr(p, '/');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len >= sizeof(comp)) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0777) && errno != EEXIST) {
				int e = errno;
				close(fd);
				errno = e;
				return -1;
			}
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		int e = errno;
		close(fd);
		errno = e;
		fd = nfd;
		p = q ? q + 1 : p + len;
	}
	return fd;
}

/* A per-thread cache of the last parent directory opened. */
struct dircache {
	char *path;
	size_t len, cap;
	int fd;
};

static void dircache_drop(struct dircache *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = (size_t)-1;
}

/* The parent directory of entry path p (creating missing parents); *base gets the last name. */
static int parent_fd(struct xjob *j, struct dircache *c, const struct xent *e, char *base,
                     size_t base_cap)
{
	size_t cut = e->path_len;
	while (cut > 0 && e->path[cut - 1] != '/')
		cut--;
	size_t blen = e->path_len - cut;
	if (blen >= base_cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(base, e->path + cut, blen);
	base[blen] = 0;
	size_t plen = cut ? cut - 1 : 0;
	if (c->fd >= 0 && c->len == plen && !memcmp(c->path, e->path, plen))
		return c->fd;
	dircache_drop(c);
	if (plen + 1 > c->cap) {
		char *np = realloc(c->path, plen + 1);
		if (!np) {
			errno = ENOMEM;
			return -1;
		}
		c->path = np;
		c->cap = plen + 1;
	}
	memcpy(c->path, e->path, plen);
	c->path[plen] = 0;
	c->fd = open_dir_beneath(j->rootfd, c->path, 1);
	if (c->fd >= 0)
		c->len = plen;
	return c->fd;
}

/* What --overwrite may remove where the archive has a file or link: anything but a directory
 * that holds something (an empty one goes, as with tar). 0, or -1 with errno set. */
static int remove_old(int dfd, const char *base)
{
	if (!unlinkat(dfd, base, 0) || errno == ENOENT)
		return 0;
	return errno == EISDIR && !unlinkat(dfd, base, AT_REMOVEDIR) ? 0 : -1;
}

/* Temporary names tried for one file before giving up (another file may have the name). */
#define TEMP_TRIES 8

/* The name entry i is written under while an older file keeps its own name (--overwrite):
 * hidden, beside it, unique to the process and the job; try k < TEMP_TRIES if others exist. */
static void temp_name(const struct xjob *j, uint64_t i, int k, char out[64])
{
	snprintf(out, 64, k ? ".znippy-%ld-%u-%llu-%d.part" : ".znippy-%ld-%u-%llu.part",
	         (long)getpid(), j->seq, (unsigned long long)i, k);
}

/* Create the file for writing: never through a symlink, never over an existing file unless
 * overwrite. Then an existing file or link keeps its name until the new content is complete
 * and checked: the new file is made under temp_name (*temp set to 1 + the try) and renamed over
 * it by finish_temp, so a damaged entry, a failed write or a stop costs nothing that was there;
 * where no temporary file can be made (a full disk, a quota) the entry fails and the old file
 * stays. Only an empty directory in the way (which a rename cannot replace) is removed first. */
static int create_file(struct xjob *j, int dfd, const char *base, uint32_t mode, uint64_t i,
                       int *temp)
{
	*temp = 0;
	for (int tries = 0; tries < 2; tries++) {
		int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                mode & 0777);
		if (fd >= 0 || errno != EEXIST)
			return fd;
		/* --overwrite never removes a directory that holds something: say which it is */
		struct stat st;
		int dir = !fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
		if (!j->opt->overwrite) {
			errno = dir ? EISDIR : EEXIST;
			return -1;
		}
		if (!dir) {
			for (int k = 0; k < TEMP_TRIES; k++) {
				char tmp[64];
				temp_name(j, i, k, tmp);
				fd = openat(dfd, tmp,
				            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				            mode & 0777);
				*temp = fd >= 0 ? 1 + k : -1;
				if (fd >= 0 || errno != EEXIST)
					return fd;
			}
			*temp = -1; /* EEXIST: every name taken */
			return -1;
		}
		if (remove_old(dfd, base)) { /* keeps why (EACCES, EROFS), but a full directory */
			if (dir && (errno == ENOTEMPTY || errno == EEXIST))
				errno = EISDIR;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* A symlink to `target`, or else a hardlink to tbase in directory tfd. */
struct linkspec {
	const char *target;
	int tfd;
	const char *tbase;
};

static int make_link(const struct linkspec *l, int dfd, const char *name)
{
	return l->target ? symlinkat(l->target, dfd, name) : linkat(l->tfd, l->tbase, dfd, name, 0);
}

/* Makes entry i's link at base. With --overwrite an existing file or link is replaced whole: the
 * link is made under a temporary name (temp_name) and renamed over it, so a failure leaves the
 * old one; an empty directory in the way is removed first. 0, or -1 with errno set. */
static int place_link(struct xjob *j, const struct linkspec *l, int dfd, const char *base,
                      uint64_t i)
{
	int rc = make_link(l, dfd, base);
	if (!rc || errno != EEXIST || !j->opt->overwrite)
		return rc;
	struct stat st;
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
		return remove_old(dfd, base) ? -1 : make_link(l, dfd, base);
	for (int k = 0; k < TEMP_TRIES; k++) {
		char tmp[64];
		temp_name(j, i, k, tmp);
		if (make_link(l, dfd, tmp)) {
			if (errno == EEXIST)
				continue;
			return -1;
		}
		rc = renameat(dfd, tmp, dfd, base);
		int err = errno;
		unlinkat(dfd, tmp, 0); /* left by a rename onto a hardlink of the same file */
		errno = err;
		return rc;
	}
	errno = EEXIST;
	return -1;
}

/* Makes entry i at base a hardlink to the file entry src was extracted as (place_link): 0, or
 * -1 with errno set. */
static int place_hardlink(struct xjob *j, uint64_t src, int dfd, const char *base, uint64_t i)
{
	struct dircache tdc = {.fd = -1, .len = (size_t)-1};
	char tbase[256];
	int rc = -1, tfd = parent_fd(j, &tdc, &j->ents[src], tbase, sizeof(tbase));
	if (tfd >= 0) {
		struct linkspec l = {NULL, tfd, tbase};
		rc = place_link(j, &l, dfd, base, i);
	}
	dircache_drop(&tdc);
	free(tdc.path);
	return rc;
}

/* Access and modification time for an entry: its mtime (floor division for times before 1970). */
static void entry_times(const struct xjob *j, const struct xent *e, struct timespec ts[2])
{
	if (j->opt->touch ||
	    (e->lost & ZN_LOST_MTIME)) { /* as tar -m: as the extraction made them */
		ts[0].tv_sec = ts[1].tv_sec = 0;
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
		return;
	}
	ts[0].tv_sec = e->mtime_ns / 1000000000;
	ts[0].tv_nsec = e->mtime_ns % 1000000000;
	if (ts[0].tv_nsec < 0) {
		ts[0].tv_nsec += 1000000000;
		ts[0].tv_sec--;
	}
	ts[1] = ts[0];
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

/* The id on this system of the user (group: of the group) stored as name with id stored: the
 * name's, when this system knows it (tar's default), else the stored one. */
static uint32_t local_id(struct xjob *j, const char *name, size_t len, int group, uint32_t stored)
{
	if (!j->by_name || !name || !len || len > 255)
		return stored;
	pthread_mutex_lock(&j->names_mu);
	const struct known_name *k = NULL;
	for (unsigned i = 0; i < j->nnames && !k; i++)
		if (j->names[i].len == len && j->names[i].group == group &&
		    !memcmp(j->names[i].name, name, len))
			k = &j->names[i];
	if (!k) {
		struct known_name *n = &j->names[j->next_name];
		j->next_name = (j->next_name + 1) % 16;
		j->nnames += j->nnames < 16;
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
	pthread_mutex_unlock(&j->names_mu);
	return id;
}

/* Owner, mode and times of a file just written. Files are created with their permission bits,
 * so the chown and chmod calls are made only when they change something: per small file that
 * is two system calls fewer, which shows when extracting 100,000 files. */
/* Gives fd the entry's owner when that is asked for, and returns the mode to set: setuid and
 * setgid are dropped unless the file ended up with the entry's owner and group (as libarchive
 * does), so a non-root extraction never makes a set-id program owned by the wrong user. */
static uint32_t apply_owner(struct xjob *j, int fd, const struct xent *e, uid_t cur_uid,
                            gid_t cur_gid, int *chowned)
{
	*chowned = 0;
	/* A lost owner is left to whoever owns it now, and so without set-id bits (a directory's
	 * setgid bit grants nothing: it stays); so are the bits of a file whose owner was to be
	 * found by names that were lost, as the stored ids may be someone else here. */
	const uint32_t kept = e->type == ZN_TYPE_DIR ? 03777 : 01777;
	if (e->lost & ZN_LOST_OWNER)
		return e->mode & kept & j->perm_mask;
	const uint32_t setid_ok = j->by_name && (e->lost & ZN_LOST_NAMES) ? kept : 07777;
	/* Who owns it matters when owners are applied, and otherwise only for set-id bits. */
	int need = j->same_owner || (e->mode & 06000);
	uint32_t uid = need ? local_id(j, e->uname, e->uname_len, 0, e->uid) : e->uid;
	uint32_t gid = need ? local_id(j, e->gname, e->gname_len, 1, e->gid) : e->gid;
	int owned = uid == cur_uid && gid == cur_gid;
	if (!owned && j->same_owner) {
		*chowned = 1;
		/* AT_EMPTY_PATH: fd may be an O_PATH descriptor (see apply_meta_dir). A failure is
		 * not fatal, as with tar, and named, as tar names it. */
		owned = fchownat(fd, "", uid, gid, AT_EMPTY_PATH) == 0;
		if (!owned) {
			char msg[96];
			snprintf(msg, sizeof(msg), "cannot give it its stored owner %u:%u: %s", uid,
			         gid, strerror(errno));
			xreport(j, e, ZN_OK, msg);
		}
	}
	return (owned ? e->mode & setid_ok : e->mode & 01777) & j->perm_mask;
}

static void apply_meta_fd(struct xjob *j, int fd, const struct xent *e)
{
	int chowned;
	uint32_t mode = apply_owner(j, fd, e, j->euid, j->egid, &chowned); /* a file it made */
	/* The file was created with mode & 0777, less the umask: the chmod is needed only where
	 * that is not the mode wanted. With the umask unknown (no /proc), only as stored: a mode
	 * the umask is to cut is left as the kernel cut it. */
	if (chowned || (mode & 07000) ||
	    (j->umask < 0 ? j->perm_mask == 07777 : (mode & (uint32_t)j->umask) != 0))
		fchmod(fd, mode);
	struct timespec ts[2];
	entry_times(j, e, ts);
	futimens(fd, ts);
}

/* The entry's times on base in dfd, never through a symlink. */
static void apply_times_at(struct xjob *j, int dfd, const char *base, const struct xent *e)
{
	struct timespec ts[2];
	entry_times(j, e, ts);
	utimensat(dfd, base, ts, AT_SYMLINK_NOFOLLOW);
}

/* Owner and times of a symlink just created (a symlink has no mode of its own). */
static void apply_meta_link(struct xjob *j, int dfd, const char *base, const struct xent *e)
{
	if (j->same_owner && !(e->lost & ZN_LOST_OWNER))
		(void)!fchownat(dfd, base, local_id(j, e->uname, e->uname_len, 0, e->uid),
		                local_id(j, e->gname, e->gname_len, 1, e->gid),
		                AT_SYMLINK_NOFOLLOW);
	apply_times_at(j, dfd, base, e);
}

/* Owner, mode and times of a directory, through a descriptor opened with O_NOFOLLOW: if the
 * directory was replaced by a symlink meanwhile, nothing is changed (fchmodat has no
 * AT_SYMLINK_NOFOLLOW, so a name-based chmod would follow it). */
static void apply_meta_dir(struct xjob *j, int dfd, const char *base, const struct xent *e)
{
	struct timespec ts[2];
	entry_times(j, e, ts);
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
	uint32_t mode = apply_owner(j, fd, e, st.st_uid, st.st_gid, &chowned);
	if (chowned && fstat(fd, &st)) {
		close(fd);
		return;
	}
	uint32_t cur = st.st_mode & 07777;
	if (j->perm_mask != 07777) {
		/* As tar without -p: the permission bits, less the umask (never more open than
		 * mkdir made the directory, when the umask is unknown); the set-id and sticky bits
		 * the directory has stay (a setgid one inherited from its parent keeps the group
		 * going), and the archive's are not added. */
		uint32_t rwx = j->umask < 0 ? mode & cur & 0777 : mode & 0777;
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
		xreport(j, e, ZN_OK, msg);
	}
}

/* ------------------------------------------------------------------------------------------------
 * The plan: segments per block
 * ---------------------------------------------------------------------------------------------- */

/* Pieces of one block by offset, then length; pieces of spanning files first among equals. */
static int cmp_pieces(const void *a, const void *b, void *ctx)
{
	const struct xseg *x = a, *y = b;
	const uint64_t *pieces = ctx;
	if (x->boff != y->boff)
		return x->boff < y->boff ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if ((pieces[x->entry] > 1) != (pieces[y->entry] > 1))
		return pieces[x->entry] > 1 ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static zn_result overlap(struct xjob *j)
{
	if (j->problem)
		j->problem(j->ctx, "(index)", ZN_ERR_CORRUPT,
		           "index damaged: files overlap in the data blocks");
	return ZN_ERR_CORRUPT;
}

static int same_extent(const struct xent *a, const struct xent *b)
{
	return a->first_block == b->first_block && a->block_offset == b->block_offset &&
	       a->size == b->size;
}

/* Entry i shares the extent of p, a file spanning blocks that holds the pieces. */
static zn_result add_copy(struct xjob *j, uint64_t i, uint64_t p)
{
	if (!j->copy_next) {
		j->copy_next = calloc(j->n, sizeof(uint64_t));
		j->primary_of = calloc(j->n, sizeof(uint64_t));
		j->bytes_bad = calloc(j->n, 1);
		if (!j->copy_next || !j->primary_of || !j->bytes_bad)
			return ZN_ERR_NOMEM;
	}
	j->copy_next[i] = j->copy_next[p];
	j->copy_next[p] = i + 1;
	j->primary_of[i] = p + 1;
	j->pieces[i] = j->pieces[p];
	return ZN_OK;
}

/* The last block of a file's extent, by binary search in the prefix sums of the blocks' sizes
 * (cum[b]: bytes before block b; zeros[b]: empty blocks before b); -1 if the extent leaves the
 * blocks or crosses an empty one. */
static int extent_end(const uint64_t *cum, const uint64_t *zeros, uint64_t nb, const struct xent *e,
                      uint64_t *last)
{
	uint64_t fb = e->first_block;
	if (fb >= nb || e->block_offset >= cum[fb + 1] - cum[fb])
		return -1;
	uint64_t start = cum[fb] + e->block_offset;
	if (e->size > cum[nb] - start)
		return -1;
	uint64_t end = start + e->size, lo = fb, hi = nb - 1; /* first b with cum[b + 1] >= end */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (cum[mid + 1] >= end)
			hi = mid;
		else
			lo = mid + 1;
	}
	*last = lo;
	return zeros[lo + 1] - zeros[fb] ? -1 : 0;
}

static zn_result build_plan(struct xjob *j)
{
	struct zn_reader *r = j->r;
	uint64_t nb = r->nblocks;
	uint64_t *usize = malloc((nb ? nb : 1) * sizeof(uint64_t));
	j->bstart = calloc(nb + 2, sizeof(uint64_t));
	if (!usize || !j->bstart) {
		free(usize);
		return ZN_ERR_NOMEM;
	}
	uint64_t *cum = calloc(nb + 1, sizeof(uint64_t)), *zeros = calloc(nb + 1, sizeof(uint64_t));
	uint64_t *span_at = calloc(nb ? nb : 1, sizeof(uint64_t)); /* spanning file from b + 1 */
	zn_result res = cum && zeros && span_at ? ZN_OK : ZN_ERR_NOMEM;
	for (uint64_t b = 0; res == ZN_OK && b <= nb; b++) {
		struct zn_blockinfo bi;
		if (b < nb)
			usize[b] = zn_block_info(r, b, &bi) == ZN_OK ? bi.usize : 0;
		cum[b] = b ? cum[b - 1] + usize[b - 1] : 0;
		zeros[b] = b ? zeros[b - 1] + !usize[b - 1] : 0;
	}
	/* Pass 1: check every file's extent and count pieces per block. A file with the extent
	 * of a spanning file met before is a copy of it (two different spanning files starting in
	 * the same block overlap, which is refused below). */
	uint64_t total = 0;
	for (uint64_t i = 0; res == ZN_OK && i < j->n; i++) {
		struct xent *e = &j->ents[i];
		if (get_status(j, i) != ST_OK || e->type != ZN_TYPE_FILE || !e->size)
			continue;
		uint64_t fb = e->first_block, last;
		if (fb < nb && span_at[fb] && same_extent(&j->ents[span_at[fb] - 1], e)) {
			res = add_copy(j, i, span_at[fb] - 1);
			continue;
		}
		if (extent_end(cum, zeros, nb, e, &last)) {
			set_status(j, i, ST_DAMAGED);
			xreport(j, e, ZN_ERR_CORRUPT,
			        "index describes content outside the data blocks");
			continue;
		}
		j->pieces[i] = last - fb + 1;
		if (last > fb && !span_at[fb])
			span_at[fb] = i + 1;
		for (uint64_t x = fb; x <= last; x++)
			j->bstart[x + 1]++;
		total += j->pieces[i];
		/* Distinct files spanning blocks share no bytes (files of the same extent are
		 * one set of pieces), so pieces number at most files + blocks (files within one
		 * block, which may share bytes, are one piece each). A crafted index whose extents
		 * overlap would otherwise make the plan grow as files x blocks; any overlap left
		 * is refused once the pieces are in order, below. */
		if (total > j->n + nb)
			res = overlap(j);
	}
	free(cum);
	free(zeros);
	free(span_at);
	if (res != ZN_OK) {
		free(usize);
		return res;
	}
	for (uint64_t b = 0; b < nb; b++)
		j->bstart[b + 1] += j->bstart[b];
	j->segs = malloc((total ? total : 1) * sizeof(*j->segs));
	uint64_t *fill = malloc((nb ? nb : 1) * sizeof(uint64_t));
	j->work = malloc((nb ? nb : 1) * sizeof(uint64_t));
	j->span_idx = malloc((nb ? nb : 1) * sizeof(int64_t));
	if (!j->segs || !fill || !j->work || !j->span_idx) {
		free(fill);
		free(usize);
		return ZN_ERR_NOMEM;
	}
	memcpy(fill, j->bstart, nb * sizeof(uint64_t));
	/* Pass 2: fill, in entry order within each block. */
	for (uint64_t i = 0; i < j->n; i++) {
		struct xent *e = &j->ents[i];
		if (get_status(j, i) != ST_OK || e->type != ZN_TYPE_FILE || !e->size ||
		    (j->primary_of && j->primary_of[i]))
			continue;
		uint64_t left = e->size, off = e->block_offset, b = e->first_block, foff = 0;
		while (left) {
			uint64_t take = ZN_MIN(left, usize[b] - off);
			struct xseg *s = &j->segs[fill[b]++];
			s->entry = i;
			s->boff = off;
			s->len = take;
			s->foff = foff;
			s->first = foff == 0;
			s->last = take == left;
			foff += take;
			left -= take;
			off = 0;
			b++;
		}
	}
	free(fill);
	free(usize);
	/* Within each block, pieces in offset order; they must be disjoint, but for files within
	 * one block with the very same extent (identical files stored once). Then a block's
	 * distinct bytes are hashed once however many rows share them (see hash_piece), and a
	 * crafted index cannot make verification hash more than the blocks hold. */
	for (uint64_t b = 0; b < nb; b++) {
		struct xseg *g = j->segs + j->bstart[b];
		uint64_t m = j->bstart[b + 1] - j->bstart[b], end = 0;
		qsort_r(g, m, sizeof(*g), cmp_pieces, j->pieces);
		for (uint64_t k = 0; k < m; k++) {
			int same = k && g[k].boff == g[k - 1].boff && g[k].len == g[k - 1].len &&
			           j->pieces[g[k].entry] == 1 && j->pieces[g[k - 1].entry] == 1;
			if (g[k].boff < end && !same)
				return overlap(j);
			end = ZN_MAX(end, g[k].boff + g[k].len);
		}
	}
	int64_t span = 0;
	for (uint64_t b = 0; b < nb; b++) {
		j->span_idx[b] = -1;
		if (j->bstart[b + 1] == j->bstart[b])
			continue;
		j->work[j->nwork++] = b;
		for (uint64_t s = j->bstart[b]; s < j->bstart[b + 1]; s++)
			if (j->pieces[j->segs[s].entry] > 1) {
				j->span_idx[b] = span++;
				break;
			}
	}
	return ZN_OK;
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
static void settle_copies(struct xjob *j)
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
static const uint8_t *salvage_block(struct xjob *j, uint64_t b, ZSTD_DCtx *dctx, uint8_t *buf)
{
	struct zn_reader *r = j->r;
	const uint8_t *data = NULL;
	atomic_fetch_add(&j->blocks_bad, 1);
	if (r->digest != ZN_DIGEST_SHA256 || zn_block_salvage(r, b, dctx, buf, &data) != ZN_OK)
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

static void *xworker(void *arg)
{
	struct xjob *j = arg;
	struct zn_reader *r = j->r;
	ZSTD_DCtx *dctx = zn_dctx_new();
	uint8_t *buf = malloc(r->chunk_size);
	struct dircache dc = {.fd = -1, .len = (size_t)-1};
	const int hashing = j->verify || (j->opt && j->opt->check_digest);
	if (!dctx || !buf)
		system_error(j, ZN_ERR_NOMEM);
	for (;;) {
		uint64_t w = atomic_fetch_add(&j->cursor, 1);
		if (w >= j->nwork)
			break;
		halted(j); /* a stop: the remaining pieces are skipped, the clean-up removes them */
		uint64_t b = j->work[w];
		int64_t span = j->span_idx[b];
		const uint8_t *data = NULL;
		uint64_t len = 0;
		int cancel = atomic_load(&j->cancel);
		if (!cancel && dctx && buf && zn_block_load(r, b, dctx, buf, &data, &len) != ZN_OK)
			data = salvage_block(j, b, dctx, buf);
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
	free(buf);
	ZSTD_freeDCtx(dctx);
	return NULL;
}

static unsigned resolve_threads(unsigned threads)
{
	return threads ? threads : zn_cpu_count();
}

static zn_result run_workers(struct xjob *j, unsigned threads)
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

static zn_result job_init(struct xjob *j, struct zn_reader *r, const uint8_t *select,
                          unsigned threads)
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

static void job_free(struct xjob *j)
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
static int report_bad_blocks(struct xjob *j)
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

zn_result zn_verify(struct zn_reader *r, unsigned threads, zn_problem_fn problem,
                    zn_progress_fn progress, void *ctx)
{
	if (!r)
		return ZN_ERR_INVALID_ARG;
	struct xjob j;
	memset(&j, 0, sizeof(j));
	j.verify = 1;
	j.problem = problem;
	j.progress = progress;
	j.ctx = ctx;
	/* Every page of the index, used or not, must match its checksum. A damaged page is named
	 * and costs the entries (and blocks) whose rows it holds; everything else is still
	 * verified, as extraction would still extract it. */
	int structure_damaged = 0; /* the index or the layout of the data area */
	for (uint64_t p = 0; p * ZN_IX_PAGE < r->index_size; p++) {
		uint64_t len = ZN_MIN((uint64_t)ZN_IX_PAGE, r->index_size - p * ZN_IX_PAGE);
		if (zn_ix_ensure(r, p * ZN_IX_PAGE, len))
			continue;
		structure_damaged = 1;
		if (problem) {
			char msg[128];
			snprintf(msg, sizeof(msg),
			         "index damaged: page %llu (index bytes %llu-%llu) does not match "
			         "its checksum",
			         (unsigned long long)p, (unsigned long long)(p * ZN_IX_PAGE),
			         (unsigned long long)(p * ZN_IX_PAGE + len - 1));
			problem(ctx, "(index)", ZN_ERR_CHECKSUM, msg);
		}
	}
	/* The blocks tile the data area, each where the one before it ends or at the next
	 * multiple of ZN_BLOCK_ALIGN after zero bytes, and nothing but padding (zero bytes, fewer
	 * than ZN_INDEX_ALIGN) lies between the last one and the index: no byte of the file
	 * escapes a check. */
	uint64_t data_end = ZN_HEADER_SIZE;
	int layout_ok = !structure_damaged;
	for (uint64_t b = 0; layout_ok && b < r->nblocks; b++) {
		struct zn_blockinfo bi;
		uint64_t gap = (ZN_BLOCK_ALIGN - data_end % ZN_BLOCK_ALIGN) % ZN_BLOCK_ALIGN;
		if (zn_block_info(r, b, &bi) != ZN_OK ||
		    (bi.offset != data_end && bi.offset != data_end + gap)) {
			layout_ok = 0;
			break;
		}
		for (uint64_t k = data_end; layout_ok && k < bi.offset; k++)
			layout_ok = !r->map[k];
		data_end = bi.offset + bi.csize;
	}
	if (layout_ok) {
		uint64_t gap = r->index_offset - data_end; /* blocks end at or before the index */
		layout_ok = gap < ZN_INDEX_ALIGN;
		for (uint64_t k = 0; layout_ok && k < gap; k++)
			layout_ok = !r->map[data_end + k];
	}
	if (!layout_ok && !structure_damaged) {
		structure_damaged = 1;
		if (problem)
			problem(ctx, "(data)", ZN_ERR_CORRUPT,
			        "the blocks do not tile the data area (gaps, overlaps or stray "
			        "bytes before the index)");
	}
	uint64_t bad_row;
	if (!structure_damaged && zn_fence_check(r, &bad_row) != ZN_OK) {
		structure_damaged = 1;
		if (problem) {
			char msg[128];
			snprintf(
			        msg, sizeof(msg),
			        "index damaged: its path fence disagrees with the path of row %llu",
			        (unsigned long long)bad_row);
			problem(ctx, "(index)", ZN_ERR_CORRUPT, msg);
		}
	}
	zn_result res = job_init(&j, r, NULL, threads);
	if (res == ZN_OK)
		res = build_plan(&j);
	if (res == ZN_OK)
		res = run_workers(&j, threads);
	settle_copies(&j);
	if (res == ZN_OK)
		res = j.err;
	int damaged = 0;
	for (uint64_t i = 0; res == ZN_OK && i < j.n; i++) {
		struct xent *e = &j.ents[i];
		uint8_t st = j.status[i];
		if (st == ST_OK && e->type == ZN_TYPE_HARDLINK) {
			uint64_t t;
			if (!e->link || zn_reader_find(r, e->link, e->link_len, &t) != ZN_OK ||
			    j.ents[t].type != ZN_TYPE_FILE) {
				xreport(&j, e, ZN_ERR_CORRUPT,
				        "hardlink target missing in the archive");
				st = ST_DAMAGED;
			} else if (j.status[t] != ST_OK) {
				xreport(&j, e, ZN_ERR_DAMAGED, "hardlink to a damaged file");
				st = ST_DAMAGED;
			}
		} else if (st == ST_DAMAGED && e->type == ZN_TYPE_FILE && e->path) {
			xreport(&j, e, ZN_ERR_CHECKSUM,
			        "damaged: content does not match its checksum");
		}
		if (st == ST_OK && !zn_path_is_safe(e->path, e->path_len)) {
			xreport(&j, e, ZN_ERR_UNSAFE_PATH, "unsafe path (absolute or with '..')");
			st = ST_DAMAGED;
		}
		damaged |= st == ST_DAMAGED;
	}
	damaged |= j.lost_any;
	damaged |= report_bad_blocks(&j);
	job_free(&j);
	if (res != ZN_OK)
		return structure_damaged ? ZN_ERR_DAMAGED : res;
	return damaged || structure_damaged ? ZN_ERR_DAMAGED : ZN_OK;
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

/* chmod of directory `base` in dfd, without following a symlink put there: through an O_PATH
 * descriptor's /proc/self/fd name (Linux has no fchmodat(AT_SYMLINK_NOFOLLOW) before 6.6). */
static int chmod_dir(int dfd, const char *base, uint32_t mode)
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

static int mkdir_beneath(struct xjob *j, struct dircache *dc, const struct xent *e)
{
	char base[256];
	int dfd = parent_fd(j, dc, e, base, sizeof(base));
	if (dfd < 0)
		return -1;
	if (!mkdirat(dfd, base, 0777))
		return 0;
	if (errno != EEXIST)
		return -1;
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return -1;
	/* An existing directory whose mode the damaged index lost keeps its own, and its owner. */
	const int keep = j->keep_dirs || (e->lost & ZN_LOST_MODE);
	if (S_ISDIR(st.st_mode) && j->euid && st.st_uid == j->euid && (st.st_mode & 0300) != 0300) {
		/* Ours but closed to us (extracted before from a read-only directory): opened up
		 * while its files are written, as tar does. Its mode from the archive is set at the
		 * end (apply_meta_dir); with keep_dirs, its own mode is given back. */
		if (keep && j->nreopened == j->reopened_cap) {
			size_t cap = j->reopened_cap * 2 + 8;
			struct reopened *np = realloc(j->reopened, cap * sizeof(*np));
			if (!np)
				return 1; /* not opened up: its missing files are named as not
				             created */
			j->reopened = np;
			j->reopened_cap = cap;
		}
		if (!chmod_dir(dfd, base, (st.st_mode & 07777) | 0700) && keep)
			j->reopened[j->nreopened++] =
			        (struct reopened){(uint64_t)(e - j->ents), st.st_mode & 07777};
	}
	if (S_ISDIR(st.st_mode) && keep)
		return 1; /* kept as it is, and not given the archive's mode */
	if (S_ISDIR(st.st_mode))
		return 0;
	if (!j->opt->overwrite) {
		errno = EEXIST;
		return -1;
	}
	if (unlinkat(dfd, base, 0))
		return -1;
	return mkdirat(dfd, base, 0777);
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
