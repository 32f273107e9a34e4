/* SPDX-License-Identifier: MIT */
/* fs_beneath.h - symlink-proof file operations below a target directory, and metadata.
 *
 * Every name is resolved below the target's directory descriptor, component by component with
 * O_NOFOLLOW, from the deepest directory already held open (zn_dircache), so that neither a symlink
 * the archive made nor one already in the destination is ever followed. Paths handed in are the
 * archive's, already checked by zn_path_is_safe (relative, no "." or ".." component). Functions
 * return 0 or a descriptor, or -1 with errno set, as the system calls they wrap, so that callers
 * can word their messages from errno.
 */
#ifndef ZN_FS_BENEATH_H
#define ZN_FS_BENEATH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "common/common.h"

/* An entry's metadata as stored, to be given to what is made of it. */
struct zn_meta {
	uint32_t mode, uid, gid;
	const char *uname, *gname; /* may be NULL (lost) */
	uint8_t uname_len, gname_len;
	uint8_t type; /* ZN_TYPE_* */
	uint8_t lost; /* ZN_LOST_*: fields the damaged index lost, which are not applied */
	int64_t mtime_ns;
};

/* A user or group name looked up on this system (owners by name, as tar's default). */
struct zn_owner_name {
	char name[256];
	uint8_t len, group, found;
	uint32_t id;
};

/* An existing directory of this user that was closed to it (mode without u+wx), opened up while
 * missing files are written in it, to be given back its own mode at the end. */
struct zn_reopened {
	uint64_t who; /* the caller's number for the entry */
	uint32_t mode;
};

/* Where an extraction writes and how. The caller fills the settings, then zn_fs_target_start;
 * workers then share it. */
struct zn_target {
	/* Settings: written by the caller before zn_fs_target_start, read by every thread. */
	int rootfd;           /* O_PATH descriptor of the target directory */
	int overwrite;        /* replace existing files and links, each by a complete new one */
	int touch;            /* leave modification times as the extraction makes them (tar -m) */
	int same_owner;       /* give owners as stored (by name where this system knows it) */
	int by_name;          /* owners by stored name where this system has it, else by id */
	int same_permissions; /* modes as stored (tar -p), else less the umask, without set-id */
	/* Problems that do not fail an entry: an owner that cannot be given (ZN_ERR_IO, and
	 * counted in owners_failed), a directory that kept its mode (a warning, ZN_OK). `who` is
	 * the caller's number for the entry. Called from any thread, one at a
	 * time as far as this layer is concerned (the caller serialises its own reports). */
	void (*warn)(void *ctx, uint64_t who, zn_result r, const char *msg);
	void *warn_ctx;
	/* Set by zn_fs_target_start, then read-only. */
	int umask;          /* the process's, or -1 unknown (no /proc) */
	uint32_t perm_mask; /* mode bits kept: all (same_permissions), else 0777 less the umask */
	uid_t euid;
	gid_t egid;
	unsigned seq;     /* this target's number in the process, for temporary names */
	unsigned dir_fds; /* descriptors a zn_dircache may hold, from the limit on open files */
	/* Whether files are made unnamed (O_TMPFILE); set at start where /proc/self/fd can name
	 * them, cleared by the first file system that cannot make one. Any thread. */
	atomic_int tmpfile;
	/* Whether an unnamed file may be named from its descriptor (AT_EMPTY_PATH), which needs a
	 * capability; cleared by the first refusal. Any thread. */
	atomic_int empty_path;
	/* Entries that could not be given their stored owners (same_owner): any thread adds. */
	atomic_uint_fast64_t owners_failed;
	/* Owner names looked up (zn_fs_local_id), under names_mu: few in any archive. */
	pthread_mutex_t names_mu;
	struct zn_owner_name names[16];
	unsigned nnames, next_name;
	/* Directories opened up by zn_fs_mkdir (with keep): written and read by the caller's thread
	 * only (phase 1 writes, phase 4 reads). */
	struct zn_reopened *reopened;
	size_t nreopened, reopened_cap;
};

/* Finish setting t up (umask, ids, lock); zn_fs_target_end frees what it holds (and closes
 * rootfd when it is not negative). */
void zn_fs_target_start(struct zn_target *t);
void zn_fs_target_end(struct zn_target *t);

/* A thread's last parent directory, as a chain of its levels, some of them held open, so that
 * the next parent costs an open of each level it does not share with the last one (fs_beneath.c
 * says which are held, and why that makes a deep tree linear). Not shared between threads. */
struct zn_dircache {
	char *path; /* the last parent, relative to the target; len bytes, no trailing '/' */
	size_t len, cap;
	size_t *ends; /* ends[k]: where level k + 1's component ends in path */
	int *fds;     /* fds[k]: level k + 1's O_PATH descriptor, or -1 not held */
	size_t depth; /* levels in path; the deepest is always held */
	size_t levels_cap;
	unsigned held; /* descriptors in fds */
};
void zn_dircache_init(struct zn_dircache *c);
void zn_dircache_free(struct zn_dircache *c);

/* The directory holding `path` (len bytes), missing parents made (mode 0777 less the umask, as
 * mkdir -p), from c or opened into it; *base gets the last component (NUL-terminated, ENAMETOOLONG
 * if it does not fit in base_cap). The descriptor belongs to c. */
int zn_fs_parent(const struct zn_target *t, struct zn_dircache *c, const char *path, size_t len,
                 char *base, size_t base_cap);

/* Temporary names tried for one file before giving up (another file may have the name). */
#define ZN_TEMP_TRIES 8

/* The name a file or link is made under beside the one it replaces (overwrite), or while it is
 * written where there is no O_TMPFILE: hidden, unique to the process, the target and `who`
 * (".znippy-PID-SEQ-WHO[-K].part"); the k-th try (k < ZN_TEMP_TRIES). */
void zn_fs_temp_name(const struct zn_target *t, uint64_t who, int k, char out[64]);

/* A regular file being written: unnamed (O_TMPFILE) until zn_fs_publish gives it its name, so
 * that a name holds a complete file or nothing, whenever the extraction stops (kill -9 included);
 * where the file system has no O_TMPFILE, under a temporary name beside it (zn_fs_temp_name),
 * which zn_fs_clean_stale removes in a later extraction if its process is gone. */
struct zn_outfile {
	int fd;
	int tmpk; /* -1: unnamed; else its temporary name is zn_fs_temp_name(who, tmpk) */
};

/* A new file in directory dfd, open for writing with mode & 0777 (less the umask), not yet
 * named. `who` names its temporary name where one is needed. */
int zn_fs_open_new(struct zn_target *t, int dfd, uint32_t mode, uint64_t who, struct zn_outfile *f);
/* The file, complete (content, owner, mode and times given), takes name base in dfd (the
 * directory it was opened in): never over anything unless t->overwrite, and then over a file or
 * link (replaced whole, by a rename) or an empty directory, never one that holds something. 0,
 * or -1 with errno: EEXIST (the name is taken), EISDIR (by a directory), or why; *beside is 1
 * when the name beside the old file could not be made, 2 when it could not replace it. The file
 * stays open; zn_fs_discard closes it either way. */
int zn_fs_publish(const struct zn_target *t, const struct zn_outfile *f, int dfd, const char *base,
                  uint64_t who, int *beside);
/* Closes the file; one never published is gone (its temporary name removed). */
void zn_fs_discard(const struct zn_target *t, struct zn_outfile *f, int dfd, uint64_t who);
/* Temporary files left in directory base of dfd by extractions that were killed: named as
 * zn_fs_temp_name names them, regular files of this user, made by a process that no longer
 * runs (another process's, or this one's, are never touched). Called for each directory the
 * archive has that existed already. */
void zn_fs_clean_stale(const struct zn_target *t, int dfd, const char *base);

/* What a link is made of: a symlink to `target`, or else a hardlink to tbase in directory tfd,
 * or else a name for the unnamed file open on fd (zn_fs_publish). */
struct zn_linkspec {
	const char *target;
	int tfd;
	const char *tbase;
	int fd;
};
/* Link l at base in dfd. With t->overwrite an existing file or link is replaced whole (the link
 * is made under a temporary name and renamed over it, so a failure leaves the old one); an empty
 * directory in the way is removed first. */
int zn_fs_place_link(const struct zn_target *t, const struct zn_linkspec *l, int dfd,
                     const char *base, uint64_t who);
/* A hardlink at base in dfd to the file extracted as `path` (len bytes), as zn_fs_place_link;
 * the target's directory is found through tc (not the cache dfd came from). */
int zn_fs_place_hardlink(const struct zn_target *t, struct zn_dircache *tc, const char *path,
                         size_t len, int dfd, const char *base, uint64_t who);

/* Owner, mode and times of a file this extraction made, through its descriptor. */
void zn_fs_apply_meta_fd(struct zn_target *t, int fd, const struct zn_meta *m, uint64_t who);
/* The times alone of base in dfd, never through a symlink. */
void zn_fs_apply_times_at(struct zn_target *t, int dfd, const char *base, const struct zn_meta *m);
/* Owner and times of a symlink just made (a symlink has no mode of its own). */
void zn_fs_apply_meta_link(struct zn_target *t, int dfd, const char *base, const struct zn_meta *m,
                           uint64_t who);
/* Owner, mode and times of directory base in dfd, through a descriptor opened with O_NOFOLLOW. */
void zn_fs_apply_meta_dir(struct zn_target *t, int dfd, const char *base, const struct zn_meta *m,
                          uint64_t who);
/* chmod of directory base in dfd, never through a symlink put there. */
int zn_fs_chmod_dir(int dfd, const char *base, uint32_t mode);

/* Directory `path` (len bytes) made, or found: 0 made (or an existing one, to be given the
 * archive's mode at the end), 1 an existing one kept as it is (`keep`), -1 with errno (EEXIST:
 * something else stands there and t->overwrite is not set). An existing directory of this user
 * closed to it is opened up meanwhile, and with `keep` recorded in t->reopened. */
int zn_fs_mkdir(struct zn_target *t, struct zn_dircache *c, const char *path, size_t len, int keep,
                uint64_t who);

#endif
