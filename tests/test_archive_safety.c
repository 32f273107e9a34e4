/* test_archive_safety.c - extraction never writes outside the target directory: '..' and
 * absolute paths are refused, and no write follows a symlink, whether the archive made it or it
 * was already in the destination. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "archive_format.h"
#include "common.h"
#include "test_util.h"

static char *dir;

struct ent {
	const char *path;
	uint32_t type;
	const char *data_or_link;
};

/* Write an archive of the given entries, then rewrite path bytes `from` -> `to` (same length) in
 * the index and fix the checksums, as a crafted archive would. */
static char *make(const char *name, const struct ent *ents, int n, const char *from, const char *to)
{
	char *path = tu_str("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, NULL));
	for (int i = 0; i < n; i++) {
		struct zn_entry e = {.path = ents[i].path, .path_len = strlen(ents[i].path),
				     .type = ents[i].type, .mode = 0644};
		const char *d = ents[i].data_or_link;
		if (ents[i].type == ZN_TYPE_FILE)
			e.size = strlen(d);
		else if (d) {
			e.link = d;
			e.link_len = strlen(d);
		}
		CHECK_OK(zn_writer_add_memory(w, &e, d));
	}
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	if (from) {
		size_t len;
		uint8_t *a = tu_read_file(path, &len);
		uint8_t *foot = a + len - ZN_FOOTER_SIZE;
		uint64_t ioff = zn_get_le64(foot), isz = zn_get_le64(foot + 8);
		size_t fl = strlen(from);
		CHECK(strlen(to) == fl);
		int hits = 0;
		for (uint64_t p = ioff; p + fl <= ioff + isz; p++)
			if (!memcmp(a + p, from, fl)) {
				memcpy(a + p, to, fl);
				hits++;
			}
		CHECK(hits > 0);
		zn_put_le64(foot + 16, XXH3_64bits(a + ioff, isz));
		zn_put_le64(foot + 48, XXH3_64bits(foot, 48));
		CHECK(tu_write_file(path, a, len) == 0);
		free(a);
	}
	return path;
}

static zn_result extract(const char *archive, const char *to, int overwrite)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, archive, NULL, 0));
	struct zn_extract_options opt;
	zn_extract_options_init(&opt);
	opt.overwrite = overwrite;
	zn_result res = zn_extract(r, to, NULL, &opt, NULL, NULL, NULL);
	zn_reader_close(r);
	return res;
}

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_safety");
	dir = tu_mkdtemp();
	char *outside = tu_str("%s/outside", dir);
	CHECK(mkdir(outside, 0755) == 0);
	char *victim = tu_str("%s/victim", outside);
	CHECK(tu_write_file(victim, "original", 8) == 0);

	/* The API refuses unsafe names outright. */
	struct zn_writer *w;
	int fd = open("/dev/null", O_WRONLY);
	CHECK_OK(zn_writer_open(&w, fd, NULL));
	const char *bad[] = {"../x", "/abs", "a/../b", "a//b", "./a", "a/", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zn_entry e = {.path = bad[i], .path_len = strlen(bad[i]), .type = ZN_TYPE_DIR};
		CHECK(zn_writer_add_memory(w, &e, NULL) == ZN_ERR_UNSAFE_PATH);
	}
	zn_writer_free(w);
	close(fd);

	/* 1. A crafted "../" path is refused; the good entry beside it is still extracted. */
	struct ent e1[] = {{"xx/victim", ZN_TYPE_FILE, "evil"}, {"good", ZN_TYPE_FILE, "fine"}};
	char *a1 = make("a1.zn", e1, 2, "xx/victim", "../victim");
	char *t1 = tu_str("%s/t1", outside);
	CHECK(extract(a1, t1, 1) == ZN_ERR_DAMAGED);
	size_t len;
	char *v = tu_read_file(victim, &len);
	CHECK(v && len == 8 && !memcmp(v, "original", 8));
	free(v);
	char *good = tu_str("%s/good", t1);
	CHECK(exists(good));

	/* 2. An absolute path is refused. */
	char *abs_name = tu_str("%s/abs-evil", dir);
	char *fake = tu_str("%s", abs_name);
	fake[0] = 'X';
	struct ent e2[] = {{fake, ZN_TYPE_FILE, "evil"}};
	char *a2 = make("a2.zn", e2, 1, fake, abs_name);
	char *t2 = tu_str("%s/t2", dir);
	CHECK(extract(a2, t2, 1) == ZN_ERR_DAMAGED);
	CHECK(!exists(abs_name));

	/* 3. A symlink in the archive never carries a later write out. */
	struct ent e3[] = {{"s", ZN_TYPE_SYMLINK, outside}, {"s/victim", ZN_TYPE_FILE, "evil"}};
	char *a3 = make("a3.zn", e3, 2, NULL, NULL);
	char *t3 = tu_str("%s/t3", dir);
	extract(a3, t3, 1);
	v = tu_read_file(victim, &len);
	CHECK(v && len == 8 && !memcmp(v, "original", 8));
	free(v);

	/* 4. A symlink already in the destination is not followed for a directory... */
	char *t4 = tu_str("%s/t4", dir);
	CHECK(mkdir(t4, 0755) == 0);
	char *t4d = tu_str("%s/d", t4);
	CHECK(symlink(outside, t4d) == 0);
	struct ent e4[] = {{"d/victim", ZN_TYPE_FILE, "evil"}, {"d/new", ZN_TYPE_FILE, "evil"}};
	char *a4 = make("a4.zn", e4, 2, NULL, NULL);
	CHECK(extract(a4, t4, 1) != ZN_OK);
	CHECK(extract(a4, t4, 0) != ZN_OK);
	v = tu_read_file(victim, &len);
	CHECK(v && len == 8 && !memcmp(v, "original", 8));
	free(v);
	char *newf = tu_str("%s/new", outside);
	CHECK(!exists(newf));

	/* ...nor for the file itself: without --overwrite it is refused, with it the link is
	 * replaced by a regular file and its target is untouched. */
	char *t5 = tu_str("%s/t5", dir);
	CHECK(mkdir(t5, 0755) == 0);
	char *t5f = tu_str("%s/f", t5);
	CHECK(symlink(victim, t5f) == 0);
	struct ent e5[] = {{"f", ZN_TYPE_FILE, "new content"}};
	char *a5 = make("a5.zn", e5, 1, NULL, NULL);
	CHECK(extract(a5, t5, 0) != ZN_OK);
	CHECK_OK(extract(a5, t5, 1));
	struct stat st;
	CHECK(lstat(t5f, &st) == 0 && S_ISREG(st.st_mode));
	v = tu_read_file(victim, &len);
	CHECK(v && len == 8 && !memcmp(v, "original", 8));
	free(v);

	/* 6. A hardlink may not point outside either. */
	struct ent e6[] = {{"h", ZN_TYPE_HARDLINK, "xx/victim"}, {"xx/victim", ZN_TYPE_FILE, "x"}};
	char *a6 = make("a6.zn", e6, 2, "xx/victim", "../victim");
	char *t6 = tu_str("%s/t6", outside);
	CHECK(extract(a6, t6, 1) != ZN_OK);
	v = tu_read_file(victim, &len);
	CHECK(v && len == 8 && !memcmp(v, "original", 8));
	free(v);

	tu_rmtree(dir);
	free(dir);
	puts("ok");
	return 0;
}
