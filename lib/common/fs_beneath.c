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

/* One component below fd, made first when missing and create is set; fd is closed. */
static int step(int fd, const char *comp, int create)
{
	int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, comp, 0777) == 0 || errno == EEXIST)
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	int e = errno;
	close(fd);
	errno = e;
	return nfd;
}

int zn_open_dir_beneath(int rootfd, const char *rel, int create)
{
	if (!*rel)
		return fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
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
			return -1;
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
