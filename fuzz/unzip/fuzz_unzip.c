/* SPDX-License-Identifier: MIT */
/* fuzz_unzip.c - libFuzzer target for the ZIP reader: open the input as a ZIP archive (the
 * end-record search, ZIP64, the directory and local-header checks, the overlap check), look
 * every entry up by name, read each one into a buffer of its declared size, test them all, then
 * extract into a fresh directory (threads, -o, -n and -j taken from the input's size) and check
 * that nothing was made beside it and no file is bigger than the entries declare in all. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* Removes everything below directory fd (closed here); returns the bytes of the files found. */
static uint64_t empty_dir(int fd)
{
	uint64_t bytes = 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (!fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			bytes += (uint64_t)st.st_size;
		if (!unlinkat(dirfd(d), de->d_name, 0))
			continue;
		fchmodat(dirfd(d), de->d_name, 0700, 0);
		int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (sub >= 0)
			bytes += empty_dir(sub);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
	return bytes;
}

/* The names in directory dir other than `only`: 0 when there are none. */
static int others_in(const char *dir, const char *only)
{
	DIR *d = opendir(dir);
	if (!d)
		return 1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		     strcmp(de->d_name, only);
	closedir(d);
	return n;
}

/* The target is root/a/b/out: a write that climbs out of it lands beside one of them. */
static char root[PATH_MAX], a[PATH_MAX], b[PATH_MAX], out[PATH_MAX];

static void remove_root(void)
{
	rmdir(b), rmdir(a), rmdir(root);
}

static void make_root(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof(root), "%s/znzip.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	if (snprintf(a, sizeof(a), "%s/a", root) >= (int)sizeof(a) ||
	    snprintf(b, sizeof(b), "%s/b", a) >= (int)sizeof(b) ||
	    snprintf(out, sizeof(out), "%s/out", b) >= (int)sizeof(out) || mkdir(a, 0700) ||
	    mkdir(b, 0700))
		abort();
	atexit(remove_root);
}

/* Reads every entry whole and by name; returns the sum of declared sizes. */
static uint64_t read_all(struct zn_zip *z)
{
	uint64_t n = zn_zip_count(z), total = 0;
	for (uint64_t i = 0; i < n; i++) {
		struct zn_zip_entry e = {.struct_size = sizeof(e)};
		if (zn_zip_entry(z, i, &e) != ZN_OK)
			abort();
		uint64_t j;
		if (zn_zip_find(z, e.name, e.name_len, &j) != ZN_OK || (j != i && !e.shadowed))
			abort(); /* every name is found, as itself or a later entry of that name */
		total += e.size;
		if (e.size > (1u << 20))
			continue;
		uint8_t *buf = malloc(e.size ? (size_t)e.size : 1);
		if (!buf)
			abort();
		zn_zip_read_to(z, i, buf, (size_t)e.size);
		free(buf);
	}
	return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0])
		make_root();
	struct zn_zip *z;
	char why[160];
	if (zn_zip_open_memory(&z, data, size, why) != ZN_OK) {
		if (!memchr(why, 0, sizeof(why)) || !why[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	uint64_t declared = read_all(z);
	size_t reported = 0;
	struct zn_hooks hooks = {
	        .struct_size = sizeof(hooks), .ctx = &reported, .problem = problem};
	zn_zip_test(z, NULL, 1 + size % 2, &hooks);
	struct zn_zip_extract_options opt;
	zn_zip_extract_options_init(&opt);
	opt.threads = 1 + size % 2;
	opt.junk_paths = size / 2 % 2;
	zn_zip_extract(z, out, NULL, &opt, &hooks);
	if (size / 4 % 3) { /* again over the first: -o's replacements or -n's skips */
		opt.overwrite = size / 4 % 3 == 1;
		opt.never = !opt.overwrite;
		zn_zip_extract(z, out, NULL, &opt, &hooks);
	}
	zn_zip_free(z);
	if (others_in(root, "a") || others_in(a, "b") || others_in(b, "out"))
		abort(); /* something was written outside the target */
	int fd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	uint64_t bytes = fd >= 0 ? empty_dir(fd) : 0;
	if (bytes > declared)
		abort(); /* more written than the entries declare */
	if (rmdir(out) && errno != ENOENT)
		abort();
	return 0;
}
