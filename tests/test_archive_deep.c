/* SPDX-License-Identifier: MIT */
/* test_archive_deep.c - a tree 2,000 directories deep (a symlink and a file at the bottom) is
 * archived and extracted whole, also under a low limit on open files: the walk keeps its levels
 * on a stack of its own, not the C stack (the recursive walk crashed at about 1,800 levels), and
 * extraction holds a bounded chain of directories open (fs_beneath.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

enum { DEPTH = 2000 };

/* A chain of DEPTH directories "d" under root, a file "f" and a symlink "l" at the bottom.
 * Through descriptors: the path is longer than PATH_MAX. */
static void make_deep(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	for (int i = 0; i < DEPTH; i++) {
		CHECK(mkdirat(fd, "d", 0755) == 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		CHECK(next >= 0);
		close(fd);
		fd = next;
	}
	int f = openat(fd, "f", O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(f >= 0);
	CHECK(write(f, "bottom\n", 7) == 7);
	close(f);
	CHECK(symlinkat("f", fd, "l") == 0);
	close(fd);
}

/* The extracted chain is there, DEPTH deep, with the file's bytes and the symlink. */
static void check_deep(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	for (int i = 0; i < DEPTH; i++) {
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		CHECK(next >= 0);
		close(fd);
		fd = next;
	}
	char buf[16] = {0};
	int f = openat(fd, "f", O_RDONLY);
	CHECK(f >= 0);
	CHECK(read(f, buf, sizeof(buf)) == 7 && !memcmp(buf, "bottom\n", 7));
	close(f);
	CHECK(readlinkat(fd, "l", buf, sizeof(buf)) == 1 && buf[0] == 'f');
	close(fd);
}

/* rm -rf of a tree deeper than PATH_MAX, in steps of short paths: the second level moves up
 * beside the first, which is then empty. */
static void remove_deep(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	for (int i = 0; i < DEPTH; i++) {
		int d = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		CHECK(d >= 0);
		if (i < DEPTH - 1) {
			CHECK(renameat(d, "d", fd, "t") == 0);
		} else {
			CHECK(unlinkat(d, "f", 0) == 0);
			CHECK(unlinkat(d, "l", 0) == 0);
		}
		close(d);
		CHECK(unlinkat(fd, "d", AT_REMOVEDIR) == 0);
		if (i < DEPTH - 1)
			CHECK(renameat(fd, "t", fd, "d") == 0);
	}
	close(fd);
	CHECK(rmdir(root) == 0);
}

static int problems;
static void on_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx;
	fprintf(stderr, "problem: %.60s...: %s (%s)\n", path, what, zn_result_name(r));
	problems++;
}

static void round_trip(const char *dir, unsigned threads, int extract)
{
	char *src = tu_fmt("%s/src", dir), *out = tu_fmt("%s/x", dir);
	char *zn = tu_fmt("%s/deep.zn", dir);
	int fd = open(zn, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.threads = threads;
	struct zn_writer *w;
	struct zn_hooks hooks = {.struct_size = sizeof(hooks), .problem = on_problem};
	CHECK_OK(zn_writer_open(&w, fd, &o, &hooks));
	CHECK_OK(zn_writer_add_path(w, src, "src"));
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	CHECK(problems == 0);

	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, zn, NULL, 0));
	CHECK_EQ_U64(zn_reader_count(r), 1 + DEPTH + 2); /* src, the chain, f and l */
	struct zn_entry e;
	uint64_t i;
	char *deepest = malloc(4 + 2 * DEPTH + 2);
	strcpy(deepest, "src");
	for (int k = 0; k < DEPTH; k++)
		strcat(deepest, "/d");
	strcat(deepest, "/f");
	CHECK_OK(zn_reader_find(r, deepest, strlen(deepest), &i));
	CHECK_OK(zn_reader_entry(r, i, &e));
	CHECK(e.type == ZN_TYPE_FILE && e.size == 7);
	free(deepest);
	if (extract) {
		CHECK_OK(zn_extract(r, out, NULL, NULL, &(struct zn_hooks){.problem = on_problem}));
		CHECK(problems == 0);
		char *xsrc = tu_fmt("%s/src", out);
		check_deep(xsrc);
		remove_deep(xsrc);
		CHECK(rmdir(out) == 0);
		free(xsrc);
	}
	zn_reader_free(r);
	free(src);
	free(out);
	free(zn);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_deep");
	char *dir = tu_mkdtemp();
	char *src = tu_fmt("%s/src", dir);
	CHECK(mkdir(src, 0755) == 0);
	make_deep(src);
	round_trip(dir, 1, 0);
	round_trip(dir, 4, 1);
	/* With few descriptors: the walk closes the levels above it and opens them again;
	 * extraction's directory caches hold no more than the limit leaves them. */
	struct rlimit nofile;
	CHECK(getrlimit(RLIMIT_NOFILE, &nofile) == 0);
	struct rlimit low = {64, nofile.rlim_max};
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	round_trip(dir, 2, 1);
	CHECK(setrlimit(RLIMIT_NOFILE, &nofile) == 0);
	remove_deep(src);
	tu_rmtree(dir);
	free(src);
	free(dir);
	printf("test_archive_deep: ok\n");
	return 0;
}
