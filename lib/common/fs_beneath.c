/* SPDX-License-Identifier: MIT */
/* fs_beneath.c - symlink-proof directory opening below a root (see fs_beneath.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fs_beneath.h"

static atomic_int have_openat2 = 1;

/* The directory `comp` in fd, not through a symlink. */
static int open_child(int fd, const char *comp)
{
	return openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The directory `rel` beneath rootfd, with no symlink on the way (openat2). */
static int open_beneath(int rootfd, const char *rel)
{
	struct open_how how = {
	        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
}

/* One component below fd, made first when missing and create is set; fd is closed. */
static int step(int fd, const char *comp, int create)
{
	int nfd = open_child(fd, comp);
	if (nfd < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, comp, 0777) == 0 || errno == EEXIST)
			nfd = open_child(fd, comp);
	}
	int e = errno;
	close(fd);
	errno = e;
	return nfd;
}

/* Where openat2 found `rel` missing, most often only its last component is (an extractor makes
 * directories parents first): the parent beneath rootfd, then that one made and opened. Four
 * system calls where the walk from the root below takes two or three per component (a jar's
 * package directories are five or six deep). -1 where it is not so, for the walk to decide. */
static int last_missing(int rootfd, const char *rel)
{
	const char *last = strrchr(rel, '/');
	if (!last || !last[1] || strlen(last + 1) >= 256 || (size_t)(last - rel) >= 4096)
		return -1;
	char parent[4096];
	memcpy(parent, rel, (size_t)(last - rel));
	parent[last - rel] = 0;
	int pfd = open_beneath(rootfd, parent);
	if (pfd < 0)
		return -1;
	/* Made straight away (openat2 said it was missing; EEXIST if it came meanwhile), then
	 * opened as step() opens: no symlink followed, a directory or nothing. */
	int fd = -1;
	if (mkdirat(pfd, last + 1, 0777) == 0 || errno == EEXIST)
		fd = open_child(pfd, last + 1);
	int e = errno;
	close(pfd);
	errno = e;
	return fd;
}

int zn_open_dir_beneath(int rootfd, const char *rel, int create)
{
	if (!*rel)
		return fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (atomic_load_explicit(&have_openat2, memory_order_relaxed)) {
		int fd = open_beneath(rootfd, rel);
		if (fd >= 0)
			return fd;
		if (errno == ENOSYS || errno == EPERM)
			atomic_store(&have_openat2, 0);
		else if (errno != ENAMETOOLONG && (errno != ENOENT || !create))
			return -1;
		else if (errno == ENOENT && (fd = last_missing(rootfd, rel)) >= 0)
			return fd;
	}
	int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	char comp[256];
	for (const char *p = rel; fd >= 0 && *p;) {
		size_t len = strcspn(p, "/");
		if (len >= sizeof(comp)) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		fd = step(fd, comp, create);
		p += len + (p[len] == '/');
	}
	return fd;
}
