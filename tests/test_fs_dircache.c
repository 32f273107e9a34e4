/* SPDX-License-Identifier: MIT */
/* test_fs_dircache.c - zn_fs_parent against the file system: every parent it gives is the
 * directory its path names (made when missing), in path order, in reverse and at random, down a
 * chain deeper than PATH_MAX; the descriptors it holds stay within the target's budget; a
 * symlink on a path is refused (ELOOP), never followed. Seeded (-s SEED). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/fs_beneath.h"
#include "test_util.h"

/* The chain's components are "dddddddd": 600 levels make a path of 5,399 bytes. */
enum { NPATHS = 600, CHAIN = 600, W = 9 };

/* Descriptors this process has open. */
static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;
	CHECK(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The directory `path` (len bytes, "" the root) below rootfd, walked one component at a time
 * (any length): its device and inode. */
static void identify(int rootfd, const char *path, size_t len, struct stat *st)
{
	int fd = dup(rootfd);
	size_t i = 0;
	while (fd >= 0 && i < len) {
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		char comp[256];
		CHECK(j - i < sizeof(comp));
		memcpy(comp, path + i, j - i);
		comp[j - i] = 0;
		int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW);
		close(fd);
		fd = next;
		i = j + 1;
	}
	CHECK(fd >= 0);
	CHECK(fstat(fd, st) == 0);
	close(fd);
}

/* zn_fs_parent of "PATH/f" is directory `want`, and the cache holds no more than the budget. */
static void check_parent_is(struct zn_target *t, struct zn_dircache *c, const char *dir, size_t len,
                            const struct stat *want, unsigned base_fds)
{
	char *path = malloc(len + 3), base[256];
	memcpy(path, dir, len);
	memcpy(path + len, len ? "/f" : "f", len ? 3 : 2);
	int fd = zn_fs_parent(t, c, path, strlen(path), base, sizeof(base));
	CHECK(fd >= 0);
	CHECK(!strcmp(base, "f"));
	struct stat got;
	CHECK(fstat(fd, &got) == 0);
	CHECK(got.st_dev == want->st_dev && got.st_ino == want->st_ino);
	CHECK(c->held <= t->dir_fds);
	CHECK(open_fds() <= base_fds + t->dir_fds);
	free(path);
}

/* The same, PATH made by zn_fs_parent if missing, and looked up here after. */
static void check_parent(struct zn_target *t, struct zn_dircache *c, const char *dir, size_t len,
                         unsigned base_fds)
{
	char base[256], *path = tu_fmt("%.*s%sf", (int)len, dir, len ? "/" : "");
	int fd = zn_fs_parent(t, c, path, strlen(path), base, sizeof(base));
	CHECK(fd >= 0);
	struct stat got, want;
	CHECK(fstat(fd, &got) == 0);
	identify(t->rootfd, dir, len, &want);
	CHECK(got.st_dev == want.st_dev && got.st_ino == want.st_ino);
	CHECK(c->held <= t->dir_fds);
	CHECK(open_fds() <= base_fds + t->dir_fds);
	free(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Random paths of 0 to 12 components over a small alphabet, so that they share prefixes. */
static char **random_paths(struct tu_rng *g)
{
	char **p = malloc(NPATHS * sizeof(*p));
	for (int i = 0; i < NPATHS; i++) {
		char buf[64] = "";
		size_t n = 0, depth = tu_rng_below(g, 13);
		for (size_t k = 0; k < depth; k++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%c", k ? "/" : "",
			                      (char)('a' + tu_rng_below(g, 3)));
		p[i] = strdup(buf);
	}
	qsort(p, NPATHS, sizeof(*p), cmp_str);
	return p;
}

static void run_orders(struct zn_target *t, char **p, struct tu_rng *g, unsigned base_fds)
{
	struct zn_dircache c;
	zn_dircache_init(&c);
	for (int i = 0; i < NPATHS; i++) /* path order, as extraction's phases */
		check_parent(t, &c, p[i], strlen(p[i]), base_fds);
	for (int i = NPATHS; i-- > 0;) /* reverse, as the modes at the end */
		check_parent(t, &c, p[i], strlen(p[i]), base_fds);
	for (int i = 0; i < NPATHS; i++) { /* at random, as blocks meet files */
		const char *q = p[tu_rng_below(g, NPATHS)];
		check_parent(t, &c, q, strlen(q), base_fds);
	}
	zn_dircache_free(&c);
	CHECK(open_fds() == base_fds);
}

/* A chain "dddddddd/dddddddd/..." longer than PATH_MAX, made here: down, up one level at a
 * time, and jumps. chain[0 .. W k - 1) is level k's path. */
static void run_chain(struct zn_target *t, struct tu_rng *g, unsigned base_fds)
{
	char *chain = malloc(W * CHAIN);
	struct stat *st = malloc((CHAIN + 1) * sizeof(*st));
	for (int i = 0; i < W * CHAIN; i++)
		chain[i] = i % W == W - 1 ? '/' : 'd';
	chain[W * CHAIN - 1] = 0;
	int fd = dup(t->rootfd);
	CHECK(fstat(fd, &st[0]) == 0);
	for (int k = 1; k <= CHAIN; k++) {
		CHECK(mkdirat(fd, "dddddddd", 0755) == 0 || errno == EEXIST);
		int next = openat(fd, "dddddddd", O_PATH | O_DIRECTORY | O_NOFOLLOW);
		CHECK(next >= 0 && fstat(next, &st[k]) == 0);
		close(fd);
		fd = next;
	}
	close(fd);
	struct zn_dircache c;
	zn_dircache_init(&c);
	for (int k = 1; k <= CHAIN; k++)
		check_parent_is(t, &c, chain, (size_t)(W * k - 1), &st[k], base_fds);
	for (int k = CHAIN; k >= 0; k--)
		check_parent_is(t, &c, chain, k ? (size_t)(W * k - 1) : 0, &st[k], base_fds);
	for (int i = 0; i < 300; i++) {
		int k = (int)tu_rng_below(g, CHAIN + 1);
		check_parent_is(t, &c, chain, k ? (size_t)(W * k - 1) : 0, &st[k], base_fds);
	}
	zn_dircache_free(&c);
	CHECK(open_fds() == base_fds);
	free(st);
	free(chain);
}

/* rm -rf of the chain (deeper than PATH_MAX) in steps of short paths: the second level moves up
 * beside the first, which is then empty. */
static void remove_chain(const char *tree)
{
	int fd = open(tree, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	for (int k = 0; k < CHAIN; k++) {
		int d = openat(fd, "dddddddd", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		CHECK(d >= 0);
		int more = k < CHAIN - 1;
		if (more)
			CHECK(renameat(d, "dddddddd", fd, "t") == 0);
		close(d);
		CHECK(unlinkat(fd, "dddddddd", AT_REMOVEDIR) == 0);
		if (more)
			CHECK(renameat(fd, "t", fd, "dddddddd") == 0);
	}
	close(fd);
}

/* A symlink on the path is refused with ELOOP and nothing is made through it. */
static void run_symlink(struct zn_target *t, const char *root)
{
	char *out = tu_fmt("%s/outside", root), *link = tu_fmt("%s/tree/s", root);
	CHECK(mkdir(out, 0755) == 0);
	CHECK(symlink(out, link) == 0);
	struct zn_dircache c;
	zn_dircache_init(&c);
	char base[256];
	errno = 0;
	CHECK(zn_fs_parent(t, &c, "s/x/f", 5, base, sizeof(base)) < 0 && errno == ELOOP);
	CHECK(zn_fs_parent(t, &c, "a/f", 3, base, sizeof(base)) >= 0); /* usable after */
	errno = 0;
	CHECK(zn_fs_parent(t, &c, "s/f", 3, base, sizeof(base)) < 0 && errno == ELOOP);
	zn_dircache_free(&c);
	char *made = tu_fmt("%s/x", out);
	struct stat st;
	CHECK(stat(made, &st) != 0 && errno == ENOENT);
	free(made);
	free(out);
	free(link);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_fs_dircache");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	char *root = tu_mkdtemp(), *tree = tu_fmt("%s/tree", root);
	char *link = tu_fmt("%s/s", tree), *out = tu_fmt("%s/outside", root);
	CHECK(mkdir(tree, 0755) == 0);
	char **p = random_paths(&g);
	for (unsigned budget = 4; budget <= 16; budget += 12) {
		struct zn_target t = {.rootfd = open(tree, O_PATH | O_DIRECTORY)};
		CHECK(t.rootfd >= 0);
		zn_fs_target_start(&t);
		t.dir_fds = budget;
		unsigned base_fds = open_fds();
		run_orders(&t, p, &g, base_fds);
		run_chain(&t, &g, base_fds);
		run_symlink(&t, root);
		zn_fs_target_end(&t);
		CHECK(unlink(link) == 0);
		CHECK(rmdir(out) == 0);
	}
	for (int i = 0; i < NPATHS; i++)
		free(p[i]);
	free(p);
	remove_chain(tree);
	tu_rmtree(root);
	free(link);
	free(out);
	free(tree);
	free(root);
	printf("test_fs_dircache: ok\n");
	return 0;
}
