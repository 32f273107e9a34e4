/* SPDX-License-Identifier: MIT */
/* cmd_diff.c - `znippy diff`: the archive against the files under a directory, as tar -d. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* clang-format off */
static const char diff_help[] =
	"Usage: znippy diff ARCHIVE [-C DIR] [PATTERN...]\n"
	"Compare the archive with the files under DIR (default: the current directory), as tar -d\n"
	"does: for each entry (or each PATTERN selects), the file's type, size, contents, mode,\n"
	"owner ids, modification time (of regular files), symlink target and hardlink, each\n"
	"difference named on standard output (\"PATH: Size differs\"). Contents are compared\n"
	"byte for byte with the archive's, which is checked on the way; a symlink's target and a\n"
	"hardlink's link only are compared, as tar does. A file that cannot be read is an error,\n"
	"not a difference.\n"
	"\n"
	"  -C, --directory DIR   compare with the files under DIR (a second -C is relative to\n"
	"                        the one before, as tar's)\n"
	"  -h, --help            this help\n"
	"\n" STDIN_HELP
	"Exit status: 0 no difference, 1 differences (as diff(1); or damaged or invalid input),\n"
	"2 usage error, 3 I/O or system error.\n";
/* clang-format on */

/* Compares an entry's bytes, as the reader hands them over, with a file's. */
struct cmp_sink {
	int fd;
	int differ; /* the file's bytes are not the archive's (or it ended earlier) */
	uint8_t buf[1 << 16];
};

static zn_result cmp_file(void *ctx, const void *data, size_t len)
{
	struct cmp_sink *c = ctx;
	const uint8_t *p = data;
	while (len) {
		size_t want = len < sizeof(c->buf) ? len : sizeof(c->buf);
		ssize_t n = read(c->fd, c->buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || memcmp(c->buf, p, (size_t)n)) {
			c->differ = 1;
			return ZN_ERR_CANCELED; /* no need to read on */
		}
		p += n;
		len -= (size_t)n;
	}
	return ZN_OK;
}

static void say_differs(const struct zn_entry *e, const char *what)
{
	cli_put_escaped(stdout, e->path, e->path_len);
	printf(": %s\n", what);
}

/* The directory that holds a stored path, below DIR, each component opened without following
 * a symlink (paths of any length; nothing outside DIR). The last one is kept for the next
 * entry, which is mostly its sibling. */
struct diff_dirs {
	int root, fd; /* fd: the directory of path[0..len), -1 none */
	char *path;
	size_t len;
};

static int parent_dir(struct diff_dirs *d, const char *p, size_t n, const char **base, char *buf)
{
	size_t slash = n;
	while (slash && p[slash - 1] != '/')
		slash--;
	size_t plen = slash ? slash - 1 : 0;
	if (n - slash >= 256) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, p + slash, n - slash); /* buf: 256 bytes */
	buf[n - slash] = 0;
	*base = buf;
	if (d->fd >= 0 && d->len == plen && !memcmp(d->path, p, plen))
		return d->fd;
	if (d->fd >= 0 && d->fd != d->root)
		close(d->fd);
	d->fd = -1;
	char *np = realloc(d->path, plen + 1);
	if (!np)
		return -1;
	d->path = np;
	memcpy(d->path, p, plen);
	d->len = plen;
	int fd = d->root;
	for (size_t at = 0; at < plen;) {
		size_t end = at;
		while (end < plen && p[end] != '/')
			end++;
		char comp[256];
		if (end - at >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			fd = -1;
		} else {
			memcpy(comp, p + at, end - at);
			comp[end - at] = 0;
			int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int err = errno;
			if (fd != d->root)
				close(fd);
			errno = err;
			fd = nfd;
		}
		if (fd < 0)
			return -1;
		at = end + 1;
	}
	return d->fd = fd;
}

/* The lookups that found nothing there (what is missing, or a file or symlink where the archive
 * has a directory) are differences; others (no permission, I/O) are errors. */
static int missing_errno(int e)
{
	return e == ENOENT || e == ENOTDIR || e == ELOOP;
}

static void diff_error(const struct zn_entry *e, const char *what, int err)
{
	char msg[160];
	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	cli_name_entry(e, msg);
}

/* One entry against what is at its path below DIR. Returns 1 if they differ, 0 if not, or a
 * negative exit status for an error (named). */
static int diff_entry(struct zn_reader *r, uint64_t i, const struct zn_entry *e, unsigned lost,
                      struct diff_dirs *dirs, struct diff_dirs *tdirs, char *target)
{
	struct stat st;
	char base[256], tbase_buf[256];
	const char *name, *tname;
	int pfd = parent_dir(dirs, e->path, e->path_len, &name, base);
	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!missing_errno(errno)) {
			diff_error(e, "cannot stat", errno);
			return -EXIT_SYSTEM;
		}
		char msg[160];
		snprintf(msg, sizeof(msg), "Warning: Cannot stat: %s",
		         strerror(errno == ENOENT ? ENOENT : ENOTDIR));
		say_differs(e, msg);
		return 1;
	}
	int want = e->type == ZN_TYPE_DIR       ? S_IFDIR
	           : e->type == ZN_TYPE_SYMLINK ? S_IFLNK
	                                        : S_IFREG;
	if ((st.st_mode & S_IFMT) != (mode_t)want) {
		say_differs(e, "File type differs");
		return 1;
	}
	if (e->type == ZN_TYPE_HARDLINK) { /* as tar: the link only (its content is its target's) */
		struct stat ts;
		int tfd = parent_dir(tdirs, e->link, e->link_len, &tname, tbase_buf);
		if (tfd < 0 || fstatat(tfd, tname, &ts, AT_SYMLINK_NOFOLLOW) ||
		    ts.st_ino != st.st_ino || ts.st_dev != st.st_dev) {
			cli_put_escaped(stdout, e->path, e->path_len);
			fputs(": Not linked to ", stdout);
			cli_put_escaped(stdout, e->link, e->link_len);
			putchar('\n');
			return 1;
		}
		return 0;
	}
	int differ = 0;
	if (e->type ==
	    ZN_TYPE_SYMLINK) { /* its target; a symlink's owner and time are not compared */
		ssize_t n = readlinkat(pfd, name, target, 4096);
		if (n < 0 || (size_t)n != e->link_len || memcmp(target, e->link, e->link_len)) {
			say_differs(e, "Symlink differs");
			differ = 1;
		}
		return differ;
	}
	if (!(lost & ZN_LOST_MODE) && (st.st_mode & 07777) != (e->mode & 07777)) {
		say_differs(e, "Mode differs");
		differ = 1;
	}
	if (!(lost & ZN_LOST_OWNER) && st.st_uid != e->uid) {
		say_differs(e, "Uid differs");
		differ = 1;
	}
	if (!(lost & ZN_LOST_OWNER) && st.st_gid != e->gid) {
		say_differs(e, "Gid differs");
		differ = 1;
	}
	int64_t ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (e->type == ZN_TYPE_FILE && !(lost & ZN_LOST_MTIME) && ns != e->mtime_ns) {
		say_differs(e, "Mod time differs");
		differ = 1;
	}
	if (e->type != ZN_TYPE_FILE)
		return differ;
	if ((uint64_t)st.st_size != e->size) {
		say_differs(e, "Size differs");
		return 1;
	}
	static struct cmp_sink c;
	c.differ = 0;
	c.fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (c.fd < 0) {
		diff_error(e, "cannot open", errno);
		return -EXIT_SYSTEM;
	}
	zn_result res = zn_reader_read_entry(r, i, cmp_file, &c);
	close(c.fd);
	if (c.differ) {
		say_differs(e, "Contents differ");
		return 1;
	}
	if (res != ZN_OK) { /* the archive's side: damaged */
		cli_name_entry(e, zn_result_message(res));
		return -cli_exit_code(res);
	}
	return differ;
}

static const char diff_shortopts[] = ":C:h";
static const struct option diff_options[] = {
        {"directory", required_argument, 0, 'C'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
};

static int cmd_diff(int argc, char **argv)
{
	const char *dir = ".";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, diff_shortopts, diff_options, NULL)) != -1) {
		switch (c) {
		case 'C': {
			int rc = cli_take_dir("diff", &dir, optarg);
			if (rc)
				return rc;
			break;
		}
		case 'h':
			fputs(diff_help, stdout);
			return EXIT_OK;
		default:
			return cli_option_error("diff", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("diff", "missing ARCHIVE");
	const char *path = argv[optind++];
	int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		cli_error("%s: %s", dir, strerror(errno));
		return EXIT_SYSTEM;
	}
	struct zn_reader *r;
	zn_result res = cli_open_archive(path, &r);
	if (res != ZN_OK) {
		close(dirfd);
		return cli_exit_code(res);
	}
	uint64_t n = zn_reader_count(r);
	uint8_t *sel = NULL;
	int missing = 0, rc = EXIT_OK;
	if (optind < argc) {
		sel = calloc(n + 1, 1);
		missing = cli_select_entries(r, argv + optind, argc - optind, sel, NULL);
	}
	struct diff_dirs dirs = {dirfd, -1, NULL, 0}, tdirs = {dirfd, -1, NULL, 0};
	static char target[4097];
	for (uint64_t i = 0; missing >= 0 && i < n; i++) {
		struct zn_entry e;
		if (sel && !sel[i])
			continue;
		unsigned lost; /* what the damaged index lost is not compared */
		if ((res = zn_reader_entry_lost(r, i, &e, &lost)) != ZN_OK) {
			cli_error("%s: entry %llu: %s", path, (unsigned long long)i,
			          zn_result_message(res));
			rc = cli_worse(rc, EXIT_DAMAGED);
			continue;
		}
		if (lost) {
			cli_name_lost(&e, lost, ", so it is not compared");
			rc = cli_worse(rc, EXIT_DAMAGED);
		}
		/* Nothing outside DIR is looked at: what the extractor would refuse is named. */
		if (!zn_path_is_safe(e.path, e.path_len) ||
		    (e.type == ZN_TYPE_HARDLINK && !zn_path_is_safe(e.link, e.link_len))) {
			cli_name_entry(&e, "unsafe path in the archive; not compared");
			rc = cli_worse(rc, EXIT_DAMAGED);
			continue;
		}
		int d = diff_entry(r, i, &e, lost, &dirs, &tdirs, target);
		if (d < 0)
			rc = cli_worse(rc, -d);
		else if (d && rc == EXIT_OK)
			rc = EXIT_DAMAGED; /* 1: differences */
	}
	if (missing < 0)
		rc = EXIT_SYSTEM;
	else if (missing && rc == EXIT_OK)
		rc = EXIT_DAMAGED;
	for (struct diff_dirs *d = &dirs; d; d = d == &dirs ? &tdirs : NULL) {
		if (d->fd >= 0 && d->fd != dirfd)
			close(d->fd);
		free(d->path);
	}
	free(sel);
	zn_reader_free(r);
	close(dirfd);
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno));
		return EXIT_SYSTEM;
	}
	return rc;
}

const struct cli_command cli_cmd_diff = {"diff", "d compare", cmd_diff, diff_shortopts,
                                         diff_options};
