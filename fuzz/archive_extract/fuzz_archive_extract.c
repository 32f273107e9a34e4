/* SPDX-License-Identifier: MIT */
/* fuzz_archive_extract.c - libFuzzer target: extract an archive from memory into a fresh
 * directory, with options taken from the input's size (threads, --overwrite over a first
 * extraction or --skip-old-files, --strip-components, sparse or not), then check that nothing was
 * made beside that directory, and remove it. The planning of directories, links, copies and holes,
 * and the clean-up after damage, all run on what the input says. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "znippy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void problem(void *ctx, const char *path, zn_result r, const char *what)
{
	size_t *n = ctx;
	*n += strlen(path) + strlen(what) + (size_t)r;
}

/* Removes everything in directory fd (which it closes), whatever the modes left on it. */
static void empty_dir(int fd)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!unlinkat(dirfd(d), de->d_name, 0))
			continue;
		fchmodat(dirfd(d), de->d_name, 0700, 0);
		int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (sub >= 0)
			empty_dir(sub);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* Whether directory `dir` holds nothing but `only`. */
static int holds_only(const char *dir, const char *only)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int ok = 1;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, only))
			ok = 0;
	closedir(d);
	return ok;
}

/* The target is root/a/b/c/out: a write that climbs out of it by up to four levels lands
 * beside one of them, where holds_only() sees it. */
static char root[PATH_MAX], lvl[3][PATH_MAX], out[PATH_MAX];

static void remove_root(void)
{
	for (int k = 2; k >= 0; k--)
		rmdir(lvl[k]);
	rmdir(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(root, sizeof(root), "%s/znfx.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(root))
			abort();
		const char *name[3] = {"a", "b", "c"};
		for (int k = 0; k < 3; k++)
			if (snprintf(lvl[k], sizeof(lvl[k]), "%s/%s", k ? lvl[k - 1] : root,
			             name[k]) >= (int)sizeof(lvl[k]) ||
			    mkdir(lvl[k], 0700))
				abort();
		if (snprintf(out, sizeof(out), "%s/out", lvl[2]) >= (int)sizeof(out))
			abort();
		atexit(remove_root);
	}
	struct zn_reader *r;
	char err[256];
	if (zn_reader_open_mem(&r, data, size, err, sizeof(err)) != ZN_OK)
		return 0;
	struct zn_extract_options opt;
	zn_extract_options_init(&opt);
	opt.threads = 1 + size % 2;
	opt.strip_components = (unsigned)(size / 2 % 3);
	opt.sparse = size / 6 % 2;
	opt.same_permissions = size / 36 % 2; /* else modes as tar gives them to other users */
	size_t reported = 0;
	zn_extract(r, out, NULL, &opt, &(struct zn_hooks){.ctx = &reported, .problem = problem});
	if (size / 12 % 3) { /* again over the first: --overwrite's removals and replacements, or
		                what --skip-old-files passes over */
		opt.overwrite = size / 12 % 3 == 1;
		opt.skip_existing = !opt.overwrite;
		zn_extract(r, out, NULL, &opt,
		           &(struct zn_hooks){.ctx = &reported, .problem = problem});
	}
	zn_reader_free(r);
	if (!holds_only(root, "a") || !holds_only(lvl[0], "b") || !holds_only(lvl[1], "c") ||
	    !holds_only(lvl[2], "out"))
		abort(); /* something was written outside the target */
	int fd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0)
		empty_dir(fd);
	if (rmdir(out) && errno != ENOENT)
		abort(); /* not emptied: the next input would start from it */
	return 0;
}
