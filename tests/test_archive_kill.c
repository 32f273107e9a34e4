/* SPDX-License-Identifier: MIT */
/* test_archive_kill.c - an extraction killed (SIGKILL) at any moment leaves every name holding a
 * complete file or nothing, so that a rerun with skip_existing makes the whole tree right, and
 * leaves no temporary file behind once rerun (red-team findings 2 and 5 of issue 30: files
 * spanning blocks were pre-sized under their final names, full of holes; --overwrite left
 * .znippy-*.part files).
 *
 * Each extraction runs in a child that is killed between blocks (by its progress hook, one
 * thread: every moment between two progress calls) or after a random delay (seeded, two
 * threads); the rerun and the checks run in the parent. Both ways of making files are tried:
 * unnamed (O_TMPFILE) and, as on a file system without it, under temporary names
 * (ZN_TEST_NO_TMPFILE, a test hook). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

enum { NBIG = 6, BIG = 300 << 10, NSMALL = 120, NDIRS = 3 };

struct tree {
	char path[NBIG + NSMALL][32];
	uint8_t *data[NBIG + NSMALL];
	size_t size[NBIG + NSMALL];
};

static const char *dirs[NDIRS + 1] = {"big", "d0", "d1", "d2"};

/* Files spanning five blocks of 64 KiB each, and small files packed several to a block; `v`
 * makes another version of every file (the same names, other bytes, other sizes). */
static void make_tree(struct tree *t, struct tu_rng *g, int v)
{
	for (int i = 0; i < NBIG + NSMALL; i++) {
		int big = i < NBIG;
		if (big)
			snprintf(t->path[i], sizeof(t->path[i]), "big/f%d", i);
		else
			snprintf(t->path[i], sizeof(t->path[i]), "d%d/s%03d", i % NDIRS, i);
		t->size[i] = big ? BIG + (size_t)v * 1000 + i : 1 + tu_rng_below(g, 4000);
		t->data[i] = malloc(t->size[i]);
		CHECK(t->data[i]);
		/* Half random, half text-like: some blocks stored, some compressed. */
		for (size_t k = 0; k < t->size[i]; k++)
			t->data[i][k] = (uint8_t)(k % 2 ? tu_rng_next(g) : 'a' + (k + v) % 26);
	}
}

static void write_archive(const char *out, const struct tree *t)
{
	struct zn_create_options o = tu_small_blocks(2);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, &o, NULL));
	for (int d = 0; d <= NDIRS; d++) { /* directory entries: a rerun cleans them */
		struct zn_entry e = {.path = dirs[d],
		                     .path_len = strlen(dirs[d]),
		                     .type = ZN_TYPE_DIR,
		                     .mode = 0755};
		CHECK_OK(zn_writer_add_memory(w, &e, NULL));
	}
	for (int i = 0; i < NBIG + NSMALL; i++) {
		struct zn_entry e = {.path = t->path[i],
		                     .path_len = strlen(t->path[i]),
		                     .type = ZN_TYPE_FILE,
		                     .mode = 0644,
		                     .size = t->size[i]};
		CHECK_OK(zn_writer_add_memory(w, &e, t->data[i]));
	}
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	CHECK(close(fd) == 0);
}

/* Temporary files (".znippy-*") anywhere below dir. */
static int temps;
static int count_temp(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag;
	temps += !strncmp(path + f->base, ".znippy-", 8);
	return 0;
}

static int temp_files(const char *dir)
{
	struct stat st;
	temps = 0;
	if (lstat(dir, &st) && errno == ENOENT)
		return 0; /* killed before the target was made */
	CHECK(nftw(dir, count_temp, 16, FTW_PHYS) == 0);
	return temps;
}

/* Every file of the tree is in dir as `want` has it, or (old non-NULL) as old has it, or (may
 * be missing) absent: never anything else, never in part. */
static void check_files(const char *dir, const struct tree *want, const struct tree *old,
                        int may_miss)
{
	for (int i = 0; i < NBIG + NSMALL; i++) {
		size_t n;
		uint8_t *got = tu_read_file(tu_str("%s/%s", dir, want->path[i]), &n);
		if (!got) {
			CHECK(may_miss && errno == ENOENT);
			continue;
		}
		int is_new = n == want->size[i] && !memcmp(got, want->data[i], n);
		int is_old = old && n == old->size[i] && !memcmp(got, old->data[i], n);
		if (!is_new && !is_old)
			fprintf(stderr, "%s: %zu bytes, neither version\n", want->path[i], n);
		CHECK(is_new || is_old);
		free(got);
	}
}

static int kill_at, progress_calls;
static void kill_in_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx, (void)done, (void)total;
	if (++progress_calls == kill_at)
		raise(SIGKILL);
}

/* Extract archive into dir in a child: killed at its kill_at-th progress call (kill_at > 0), or
 * by the parent after delay_us (kill_at 0); named: as without O_TMPFILE. */
static void killed_extract(const char *archive, const char *dir, int overwrite, int named, int k,
                           long delay_us)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (named)
			setenv("ZN_TEST_NO_TMPFILE", "1", 1);
		struct zn_reader *r;
		if (zn_reader_open(&r, archive, NULL, 0) != ZN_OK)
			_exit(2);
		struct zn_extract_options o;
		zn_extract_options_init(&o);
		o.threads = k ? 1 : 2;
		o.overwrite = overwrite;
		kill_at = k;
		zn_result res =
		        zn_extract(r, dir, NULL, &o,
		                   &(struct zn_hooks){.progress = k ? kill_in_progress : NULL});
		_exit(res == ZN_OK ? 0 : 1);
	}
	if (!k) {
		struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

static void rerun(const char *archive, const char *dir, int overwrite)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, archive, NULL, 0));
	struct zn_extract_options o;
	zn_extract_options_init(&o);
	o.threads = 2;
	o.overwrite = overwrite;
	o.skip_existing = !overwrite;
	CHECK_OK(zn_extract(r, dir, NULL, &o, NULL));
	zn_reader_free(r);
}

/* One kill, then the checks: right after it, names hold complete files (of either version with
 * overwrite) and, made unnamed, no temporary file is left (see below); after the rerun the tree
 * is whole and no temporary file is left at all. */
static void kill_and_rerun(const char *root, const char *archive, const struct tree *want,
                           const struct tree *old, int named, int k, long delay_us)
{
	static int runs;
	char *dir = tu_str("%s/x%d", root, runs++);
	if (old) { /* the old version in place first */
		rerun(tu_str("%s/old.zn", root), dir, 0);
		check_files(dir, old, NULL, 0);
	}
	killed_extract(archive, dir, old != NULL, named, k, delay_us);
	check_files(dir, want, old, 1);
	/* Made unnamed, a file has a temporary name only with overwrite, between its link beside
	 * the old one and the rename over it: never between blocks, rarely at a random moment. */
	if (!named && (k || !old))
		CHECK(temp_files(dir) == 0);
	rerun(archive, dir, old != NULL);
	check_files(dir, want, NULL, 0);
	CHECK(temp_files(dir) == 0);
	tu_rmtree(dir);
}

/* Temporary files of a process that is gone are removed from the directories an extraction
 * finds there; those of a running process (this one), other names, and other users' are not. */
static void stale_files(const char *root, const char *archive)
{
	pid_t dead = fork();
	CHECK(dead >= 0);
	if (dead == 0)
		_exit(0);
	CHECK(waitpid(dead, NULL, 0) == dead);
	char *dir = tu_str("%s/stale", root);
	const char *gone[] = {tu_str("%s/.znippy-%ld-0-7.part", dir, (long)dead),
	                      tu_str("%s/d1/.znippy-%ld-3-12-2.part", dir, (long)dead)};
	const char *kept[] = {tu_str("%s/d1/.znippy-%ld-0-7.part", dir, (long)getpid()),
	                      tu_str("%s/d1/.znippy-x-0-7.part", dir),
	                      tu_str("%s/d1/.znippy-%ld-0-7.part.keep", dir, (long)dead),
	                      tu_str("%s/d2/.znippy-%ld-0-9.part", dir, (long)dead)};
	CHECK(mkdir(dir, 0755) == 0 && mkdir(tu_str("%s/d1", dir), 0755) == 0 &&
	      mkdir(tu_str("%s/d2", dir), 0755) == 0);
	for (int i = 0; i < 2; i++)
		CHECK(tu_write_file(gone[i], "x", 1) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(tu_write_file(kept[i], "x", 1) == 0);
	if (geteuid() == 0) /* another user's: not to be touched */
		CHECK(chown(kept[3], 65534, 65534) == 0);
	else
		CHECK(unlink(kept[3]) == 0);
	rerun(archive, dir, 0);
	struct stat st;
	for (int i = 0; i < 2; i++)
		CHECK(lstat(gone[i], &st) != 0 && errno == ENOENT);
	for (int i = 0; i < 3 + (geteuid() == 0); i++)
		CHECK(lstat(kept[i], &st) == 0);
	tu_rmtree(dir);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_kill");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	char *root = tu_mkdtemp();
	static struct tree old, now;
	make_tree(&old, &g, 1);
	make_tree(&now, &g, 2);
	const char *archive = tu_str("%s/new.zn", root);
	write_archive(tu_str("%s/old.zn", root), &old);
	write_archive(archive, &now);

	/* How long a whole extraction takes here, for the random kills. */
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	rerun(archive, tu_str("%s/timing", root), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	check_files(tu_str("%s/timing", root), &now, NULL, 0);
	const long whole_us = (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 + 1;

	for (int named = 0; named < 2; named++) {
		for (int overwrite = 0; overwrite < 2; overwrite++) {
			const struct tree *prev = overwrite ? &old : NULL;
			/* Between any two progress calls (one every four blocks)... */
			for (int k = 1; k <= 10; k++)
				kill_and_rerun(root, archive, &now, prev, named, k, 0);
			/* ...and at random moments, two threads writing. */
			for (int k = 0; k < 4; k++)
				kill_and_rerun(root, archive, &now, prev, named, 0,
				               (long)tu_rng_below(&g, (uint64_t)whole_us * 3 / 2));
		}
	}
	stale_files(root, archive);

	tu_rmtree(root);
	free(root);
	for (int i = 0; i < NBIG + NSMALL; i++) {
		free(old.data[i]);
		free(now.data[i]);
	}
	puts("ok");
	return 0;
}
