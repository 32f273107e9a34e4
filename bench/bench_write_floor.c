/* SPDX-License-Identifier: MIT */
/* bench_write_floor.c - the floor of extraction: recreate a tree from memory with N threads.
 *
 * Usage: bench_write_floor [-T THREADS] [-n REPS] SRC DST
 *
 * Loads every file of SRC into memory (not timed), then, REPS times: removes DST (not timed), and
 * times creating DST with the same directories, files (same bytes, same modes) and symlinks, using
 * THREADS threads (default 2) that take runs of up to 64 consecutive files (mostly one directory)
 * from a shared atomic counter and do openat/write/close relative to the directory's descriptor,
 * opened once per run: no path walk per file, and threads seldom create in the same directory at
 * the same moment (its lock serialises them). Directories are created first, by the main thread,
 * in pre-order. No fsync, like tar, unzip and
 * unsquashfs. It has no decompression, no parsing and no reads, so it is a reference for the
 * kernel's share of extraction, not a strict lower bound: it creates the directories on one thread
 * and sets no times, and znippy has beaten it (0.9x) on the small-files corpus. The harness
 * reports tools against it.
 *
 * Prints one JSON line: {"tool":"floor","threads":T,"files":F,"dirs":D,"bytes":B,"best_s":S,
 * "runs_s":[...]}. DST is left in place after the last run (the caller compares and removes it).
 * Self-contained (POSIX + C11 atomics) so the harness can also build it with plain `cc` when the
 * CMake build is unavailable.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
	char *rel;  /* path relative to SRC/DST, "" for the root */
	char *data; /* file contents, or the symlink target */
	size_t len;
	mode_t mode;
	int type; /* 'd', 'f', 'l' */
};

static struct entry *entries;
static size_t n_entries, cap_entries;
static size_t src_len;
static uint64_t total_bytes;

static const char *dst_root;
static struct entry **files;
static size_t n_files;
static atomic_size_t next_file; /* written by the workers (fetch_add), read by the workers */
static atomic_int failed;       /* first error stops the others */

static void fail(const char *what, const char *path)
{
	fprintf(stderr, "bench_write_floor: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static int load_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (n_entries == cap_entries) {
		cap_entries = cap_entries ? cap_entries * 2 : 4096;
		entries = realloc(entries, cap_entries * sizeof *entries);
		if (!entries)
			fail("realloc", path);
	}
	struct entry *e = &entries[n_entries];
	memset(e, 0, sizeof *e);
	e->rel = strdup(path[src_len] == '/' ? path + src_len + 1 : path + src_len);
	e->mode = st->st_mode & 07777;
	if (flag == FTW_D) {
		e->type = 'd';
	} else if (flag == FTW_SL) {
		char buf[4096];
		ssize_t n = readlink(path, buf, sizeof buf - 1);
		if (n < 0)
			fail("readlink", path);
		buf[n] = 0;
		e->type = 'l';
		e->data = strdup(buf);
	} else if (flag == FTW_F && S_ISREG(st->st_mode)) {
		e->type = 'f';
		e->len = (size_t)st->st_size;
		e->data = malloc(e->len ? e->len : 1);
		int fd = open(path, O_RDONLY);
		if (fd < 0 || !e->data)
			fail("open", path);
		size_t got = 0;
		while (got < e->len) {
			ssize_t r = read(fd, e->data + got, e->len - got);
			if (r <= 0)
				fail("read", path);
			got += (size_t)r;
		}
		close(fd);
		total_bytes += e->len;
	} else {
		return 0; /* sockets, fifos, devices: not part of any corpus */
	}
	n_entries++;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path))
		fail("remove", path);
	return 0;
}

static void rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0)
		nftw(path, remove_one, 64, FTW_DEPTH | FTW_PHYS);
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	if (!lb)
		p[la] = 0;
	return p;
}

#define RUN 64

static void *worker(void *arg)
{
	char path[8192], dir[8192] = "";
	size_t dlen = strlen(dst_root);
	int dfd = -1;
	memcpy(path, dst_root, dlen);
	path[dlen] = '/';
	for (;;) {
		size_t first = atomic_fetch_add(&next_file, RUN);
		if (first >= n_files || atomic_load(&failed))
			break;
		for (size_t i = first; i < first + RUN && i < n_files; i++) {
			struct entry *e = files[i];
			snprintf(path + dlen + 1, sizeof path - dlen - 1, "%s", e->rel);
			char *slash = strrchr(path, '/');
			*slash = 0;
			if (dfd < 0 || strcmp(dir, path)) {
				if (dfd >= 0)
					close(dfd);
				snprintf(dir, sizeof dir, "%s", path);
				dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (dfd < 0)
					goto err;
			}
			*slash = '/';
			const char *base = slash + 1;
			if (e->type == 'l') {
				if (symlinkat(e->data, dfd, base))
					goto err;
				continue;
			}
			int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			                e->mode);
			if (fd < 0)
				goto err;
			size_t done = 0;
			while (done < e->len) {
				ssize_t w = write(fd, e->data + done, e->len - done);
				if (w < 0) {
					close(fd);
					goto err;
				}
				done += (size_t)w;
			}
			if (close(fd))
				goto err;
		}
	}
	if (dfd >= 0)
		close(dfd);
	return NULL;
err:
	atomic_store(&failed, errno ? errno : EIO);
	fprintf(stderr, "bench_write_floor: %s: %s\n", path, strerror(errno));
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int threads = 2, reps = 1, opt;
	while ((opt = getopt(argc, argv, "T:n:")) != -1) {
		if (opt == 'T')
			threads = atoi(optarg);
		else if (opt == 'n')
			reps = atoi(optarg);
		else
			goto usage;
	}
	if (argc - optind != 2 || threads < 1 || threads > 256 || reps < 1)
		goto usage;
	const char *src = argv[optind];
	dst_root = argv[optind + 1];
	src_len = strlen(src);
	while (src_len > 1 && src[src_len - 1] == '/')
		src_len--;
	if (nftw(src, load_one, 64, FTW_PHYS))
		fail("walk", src);
	files = malloc((n_entries + 1) * sizeof *files);
	size_t n_dirs = 0;
	for (size_t i = 0; i < n_entries; i++) {
		if (entries[i].type == 'd')
			n_dirs++;
		else
			files[n_files++] = &entries[i];
	}
	double best = 1e30, runs[256];
	if (reps > 256)
		reps = 256;
	pthread_t tid[256];
	for (int r = 0; r < reps; r++) {
		rmtree(dst_root);
		sync(); /* do not bill this run for the previous run's dirty pages */
		atomic_store(&next_file, 0);
		double t0 = now();
		/* nftw visits a directory before its contents (no FTW_DEPTH): pre-order */
		for (size_t i = 0; i < n_entries; i++) {
			if (entries[i].type != 'd')
				continue;
			char *p = join(dst_root, entries[i].rel);
			if (mkdir(p, entries[i].mode | 0700))
				fail("mkdir", p);
			free(p);
		}
		for (int t = 0; t < threads; t++)
			if (pthread_create(&tid[t], NULL, worker, NULL))
				fail("pthread_create", "");
		for (int t = 0; t < threads; t++)
			pthread_join(tid[t], NULL);
		double dt = now() - t0;
		if (atomic_load(&failed))
			return 1;
		runs[r] = dt;
		if (dt < best)
			best = dt;
	}
	printf("{\"tool\":\"floor\",\"threads\":%d,\"files\":%zu,\"dirs\":%zu,\"bytes\":%llu,"
	       "\"best_s\":%.6f,\"runs_s\":[",
	       threads, n_files, n_dirs, (unsigned long long)total_bytes, best);
	for (int r = 0; r < reps; r++)
		printf("%s%.6f", r ? "," : "", runs[r]);
	printf("]}\n");
	return 0;
usage:
	fprintf(stderr, "usage: bench_write_floor [-T THREADS] [-n REPS] SRC DST\n");
	return 2;
}
