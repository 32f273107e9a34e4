/* SPDX-License-Identifier: MIT */
/* test_archive_safety.c - extraction never writes outside the target directory: '..' and
 * absolute paths are refused, and no write follows a symlink, whether the archive made it or it
 * was already in the destination. */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "archive/archive_format.h"
#include "archive/archive_block.h"
#include "common/common.h"
#include "common/sha256.h"
#include "test_util.h"

static char *dir;

struct ent {
	const char *path;
	uint32_t type;
	const char *data_or_link;
};

/* Rewrite bytes `from` -> `to` (fl bytes each) wherever they occur in the index of the archive
 * at `path` and fix the checksums, as a crafted archive would. */
static void rewrite_index(const char *path, const void *from, const void *to, size_t fl)
{
	size_t len;
	uint8_t *a = tu_read_file(path, &len);
	uint8_t *foot = a + len - ZN_FOOTER_SIZE;
	uint64_t ioff = zn_get_le64(foot), isz = zn_get_le64(foot + 8);
	int hits = 0;
	for (uint64_t p = ioff; p + fl <= ioff + isz; p++)
		if (!memcmp(a + p, from, fl)) {
			memcpy(a + p, to, fl);
			hits++;
		}
	CHECK(hits > 0);
	/* Recompute the index page checksums and the footer's checksum of them. */
	uint64_t npages = (isz + ZN_IX_PAGE - 1) / ZN_IX_PAGE;
	uint8_t *sums = a + ioff + isz;
	for (uint64_t pg = 0; pg < npages; pg++) {
		uint64_t plen =
		        isz - pg * ZN_IX_PAGE < ZN_IX_PAGE ? isz - pg * ZN_IX_PAGE : ZN_IX_PAGE;
		zn_put_le64(sums + pg * 8, XXH3_64bits(a + ioff + pg * ZN_IX_PAGE, plen));
	}
	zn_put_le64(foot + 16, XXH3_64bits(sums, npages * 8));
	zn_put_le64(foot + 48, XXH3_64bits(foot, 48));
	CHECK(tu_write_file(path, a, len) == 0);
	free(a);
}

/* Add the given entries from memory. */
static void add_ents(struct zn_writer *w, const struct ent *ents, int n)
{
	for (int i = 0; i < n; i++) {
		struct zn_entry e = {.path = ents[i].path,
		                     .path_len = strlen(ents[i].path),
		                     .type = ents[i].type,
		                     .mode = 0644};
		const char *d = ents[i].data_or_link;
		if (ents[i].type == ZN_TYPE_FILE)
			e.size = strlen(d);
		else if (d) {
			e.link = d;
			e.link_len = strlen(d);
		}
		CHECK_OK(zn_writer_add_memory(w, &e, d));
	}
}

/* Write an archive of the given entries (with `opt`, or the defaults), then rewrite path bytes
 * `from` -> `to` (same length) in the index. */
static char *make_opt(const char *name, const struct ent *ents, int n, const char *from,
                      const char *to, const struct zn_create_options *opt)
{
	char *path = tu_str("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, opt, NULL));
	add_ents(w, ents, n);
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	if (from) {
		CHECK(strlen(to) == strlen(from));
		rewrite_index(path, from, to, strlen(from));
	}
	return path;
}

static char *make(const char *name, const struct ent *ents, int n, const char *from, const char *to)
{
	return make_opt(name, ents, n, from, to, NULL);
}

static unsigned extract_threads = 2;

static zn_result extract_cb(const char *archive, const char *to, int overwrite, int check_digest,
                            zn_problem_fn problem)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, archive, NULL, 0));
	struct zn_extract_options opt;
	zn_extract_options_init(&opt);
	opt.overwrite = overwrite;
	opt.check_digest = check_digest;
	opt.threads = extract_threads;
	zn_result res = zn_extract(r, to, NULL, &opt, &(struct zn_hooks){.problem = problem});
	zn_reader_free(r);
	return res;
}

static zn_result extract(const char *archive, const char *to, int overwrite)
{
	return extract_cb(archive, to, overwrite, 0, NULL);
}

/* Stands in for a concurrent local attacker: when the extractor reports a problem with entry
 * "zz" (phase 3, after the directories were made and before their modes are applied), the
 * extracted directory "d" is replaced by a symlink to the victim. */
static char *swap_dir, *swap_target;
static void swap_on_problem(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)r, (void)what;
	if (strcmp(path, "zz") || !swap_dir)
		return;
	char *moved = tu_str("%s.moved", swap_dir);
	CHECK(rename(swap_dir, moved) == 0);
	CHECK(symlink(swap_target, swap_dir) == 0);
	swap_dir = NULL;
}

static int problems12;
static void count_problems(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)path, (void)r, (void)what;
	problems12++;
}

/* The problem hook is called one at a time (znippy.h), even when every worker has one to report
 * at once: each call sleeps, and any overlap is seen. */
static atomic_int hook_inside, hook_overlap, hook_calls;
static void slow_hook(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx, (void)path, (void)r, (void)what;
	if (atomic_fetch_add(&hook_inside, 1))
		atomic_store(&hook_overlap, 1);
	atomic_fetch_add(&hook_calls, 1);
	usleep(2000);
	atomic_fetch_sub(&hook_inside, 1);
}

static int file_is(const char *path, const char *want)
{
	size_t len;
	char *v = tu_read_file(path, &len);
	int ok = v && len == strlen(want) && !memcmp(v, want, len);
	free(v);
	return ok;
}

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* Names in a directory, "." and ".." not counted; -1 if it cannot be read. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
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
	CHECK_OK(zn_writer_open(&w, fd, NULL, NULL));
	const char *bad[] = {"../x", "/abs", "a/../b", "a//b", "./a", "a/", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zn_entry e = {
		        .path = bad[i], .path_len = strlen(bad[i]), .type = ZN_TYPE_DIR};
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

	/* 3. A symlink in the archive never carries a later write out. (The writer leaves out
	 * entries below a symlink, so the index is rewritten to hold one.) */
	struct ent e3[] = {{"s", ZN_TYPE_SYMLINK, outside}, {"t/victim", ZN_TYPE_FILE, "evil"}};
	char *a3 = make("a3.zn", e3, 2, "t/victim", "s/victim");
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

	/* 7. A damaged block never costs a file that was already there: without --overwrite the
	 * existing file is kept even though the archive's copy of it is damaged. */
	struct zn_create_options co;
	zn_create_options_init(&co);
	co.chunk_size = 64 << 10;
	co.threads = 1;
	size_t big_len = 150000;
	char *big = malloc(big_len + 1);
	struct tu_rng g;
	tu_rng_seed(&g, 7);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (char)('a' + tu_rng_below(&g, 26));
	big[big_len] = 0;
	struct ent e7[] = {{"f", ZN_TYPE_FILE, big}, {"g", ZN_TYPE_FILE, "fine"}};
	char *a7 = make_opt("a7.zn", e7, 2, NULL, NULL, &co);
	{
		/* Damage block 1, which holds only f's middle: block 0 has by then been found
		 * to collide with the existing file (extraction runs on one thread here). */
		struct zn_reader *r;
		CHECK_OK(zn_reader_open(&r, a7, NULL, 0));
		struct zn_blockinfo bi;
		CHECK(r->nblocks >= 3);
		CHECK_OK(zn_block_info(r, 1, &bi));
		zn_reader_free(r);
		size_t alen;
		uint8_t *a = tu_read_file(a7, &alen);
		a[bi.offset + bi.csize / 2] ^= 1;
		CHECK(tu_write_file(a7, a, alen) == 0);
		free(a);
	}
	char *t7 = tu_str("%s/t7", dir), *t7f = tu_str("%s/t7/f", dir),
	     *t7g = tu_str("%s/t7/g", dir);
	CHECK(mkdir(t7, 0755) == 0);
	CHECK(tu_write_file(t7f, "precious", 8) == 0);
	extract_threads = 1;
	CHECK(extract(a7, t7, 0) != ZN_OK);
	extract_threads = 2;
	CHECK(file_is(t7f, "precious"));
	CHECK(file_is(t7g, "fine"));
	/* With --overwrite the damaged file is named, nothing half-written is left, and the old
	 * file stays: it is replaced only by a complete new one (written under a temporary name,
	 * whatever the timing: one thread, then two). */
	for (int t = 1; t <= 2; t++) {
		extract_threads = t;
		CHECK(extract(a7, t7, 1) == ZN_ERR_DAMAGED);
		CHECK(file_is(t7f, "precious"));
		CHECK(file_is(t7g, "fine"));
		CHECK(count_entries(t7) == 2); /* no temporary file left behind */
	}
	extract_threads = 2;
	free(big);

	/* 8. A directory's mode is applied through a descriptor opened with O_NOFOLLOW, so a
	 * symlink swapped in for the directory after it was made does not pass the chmod on. */
	CHECK(chmod(victim, 0600) == 0);
	struct ent e8[] = {{"d", ZN_TYPE_DIR, NULL}, {"zz", ZN_TYPE_SYMLINK, "x"}};
	char *a8 = make("a8.zn", e8, 2, NULL, NULL);
	char *t8 = tu_str("%s/t8", dir), *t8zz = tu_str("%s/t8/zz", dir);
	CHECK(mkdir(t8, 0755) == 0);
	CHECK(tu_write_file(t8zz, "", 0) == 0); /* makes "zz" fail, which triggers the swap */
	swap_dir = tu_str("%s/t8/d", dir);
	swap_target = victim;
	CHECK(extract_cb(a8, t8, 0, 0, swap_on_problem) != ZN_OK);
	CHECK(!swap_dir); /* the swap happened */
	CHECK(lstat(victim, &st) == 0 && (st.st_mode & 07777) == 0600);

	/* 9. A hardlink to an empty file links to the file this extraction made, even when it
	 * sorts before its target and an older file of the target's name was there. */
	struct ent e9[] = {{"a", ZN_TYPE_HARDLINK, "t"}, {"t", ZN_TYPE_FILE, ""}};
	char *a9 = make("a9.zn", e9, 2, NULL, NULL);
	char *t9 = tu_str("%s/t9", dir), *t9a = tu_str("%s/t9/a", dir),
	     *t9t = tu_str("%s/t9/t", dir);
	CHECK(mkdir(t9, 0755) == 0);
	CHECK(tu_write_file(t9t, "OLD", 3) == 0);
	CHECK_OK(extract(a9, t9, 1));
	struct stat sa, stt;
	CHECK(lstat(t9a, &sa) == 0 && lstat(t9t, &stt) == 0);
	CHECK(sa.st_ino == stt.st_ino && sa.st_size == 0);

	/* 10. check_digest: an index whose SHA-256 for a file is wrong (its blocks intact) keeps
	 * that file out; without the option the blocks' own checks pass and it is extracted. */
	struct ent e10[] = {{"p", ZN_TYPE_FILE, "AAAA"}, {"q", ZN_TYPE_FILE, "BBBB"}};
	struct zn_create_options all_digests; /* every file's stored, small ones too */
	zn_create_options_init(&all_digests);
	all_digests.digest_min_size = 0;
	char *a10 = make_opt("a10.zn", e10, 2, NULL, NULL, &all_digests);
	uint8_t sa_[32], sb_[32];
	zn_sha256("AAAA", 4, sa_);
	zn_sha256("BBBB", 4, sb_);
	rewrite_index(a10, sa_, sb_, 32); /* p's digest now says BBBB */
	char *t10 = tu_str("%s/t10", dir), *t10p = tu_str("%s/t10/p", dir);
	char *t10q = tu_str("%s/t10/q", dir);
	CHECK(extract_cb(a10, t10, 0, 1, NULL) == ZN_ERR_DAMAGED);
	CHECK(!exists(t10p));
	CHECK(file_is(t10q, "BBBB"));
	CHECK_OK(extract_cb(a10, t10, 1, 0, NULL));
	CHECK(file_is(t10p, "AAAA"));

	/* 11. Set-id bits survive only with the owner: extracting without restoring ownership
	 * a setuid file of another user gives a plain executable. */
	char *a11 = tu_str("%s/a11.zn", dir);
	fd = open(a11, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_OK(zn_writer_open(&w, fd, NULL, NULL));
	struct zn_entry su = {.path = "su",
	                      .path_len = 2,
	                      .type = ZN_TYPE_FILE,
	                      .mode = 06755,
	                      .uid = geteuid() + 1,
	                      .gid = getegid() + 1,
	                      .size = 2};
	CHECK_OK(zn_writer_add_memory(w, &su, "#!"));
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	struct zn_reader *r11;
	CHECK_OK(zn_reader_open(&r11, a11, NULL, 0));
	struct zn_extract_options o11;
	zn_extract_options_init(&o11);
	o11.same_owner = 0;
	char *t11 = tu_str("%s/t11", dir), *t11su = tu_str("%s/t11/su", dir);
	CHECK_OK(zn_extract(r11, t11, NULL, &o11, NULL));
	zn_reader_free(r11);
	CHECK(lstat(t11su, &st) == 0 && (st.st_mode & 07777) == 0755);

	/* 13. Owners by name (as root, where owners are applied): a stored name this system knows
	 * gives its id here, as with tar; an unknown one keeps the stored id; numeric_owner keeps
	 * the stored ids. */
	struct passwd *pwn = getpwnam("nobody");
	struct group *grn = pwn ? getgrgid(pwn->pw_gid) : NULL; /* nogroup, or nobody elsewhere */
	if (geteuid() != 0 || !pwn || !grn)
		printf("test 13 (owners by name) skipped: not root, or no user nobody\n");
	if (geteuid() == 0 && pwn && grn && pwn->pw_uid != 4242 && grn->gr_gid != 4242) {
		const uid_t nobody = pwn->pw_uid;
		const gid_t nogroup = grn->gr_gid;
		char gname[256];
		snprintf(gname, sizeof(gname), "%s", grn->gr_name);
		char *a13 = tu_str("%s/a13.zn", dir);
		fd = open(a13, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0);
		CHECK_OK(zn_writer_open(&w, fd, NULL, NULL));
		struct zn_entry known = {.path = "known",
		                         .path_len = 5,
		                         .type = ZN_TYPE_FILE,
		                         .mode = 0644,
		                         .uid = 4242,
		                         .gid = 4242,
		                         .uname = "nobody",
		                         .uname_len = 6,
		                         .gname = gname,
		                         .gname_len = strlen(gname),
		                         .size = 1};
		struct zn_entry unknown = known, link = known;
		unknown.path = "unknown", unknown.path_len = 7, unknown.uid = 4243,
		unknown.gid = 4244;
		unknown.uname = "zn-no-such-user", unknown.uname_len = 15;
		unknown.gname = "zn-no-such-group", unknown.gname_len = 16;
		link.path = "link", link.path_len = 4, link.type = ZN_TYPE_SYMLINK, link.size = 0;
		link.link = "known", link.link_len = 5, link.mode = 0777;
		CHECK_OK(zn_writer_add_memory(w, &known, "k"));
		CHECK_OK(zn_writer_add_memory(w, &unknown, "u"));
		CHECK_OK(zn_writer_add_memory(w, &link, NULL));
		CHECK_OK(zn_writer_finish(w));
		zn_writer_free(w);
		close(fd);
		for (int numeric = 0; numeric < 2; numeric++) {
			struct zn_reader *r13;
			CHECK_OK(zn_reader_open(&r13, a13, NULL, 0));
			struct zn_extract_options o13;
			zn_extract_options_init(&o13);
			o13.numeric_owner = numeric;
			char *t13 = tu_str("%s/t13-%d", dir, numeric);
			CHECK_OK(zn_extract(r13, t13, NULL, &o13, NULL));
			zn_reader_free(r13);
			const uid_t want_u = numeric ? 4242 : nobody;
			const gid_t want_g = numeric ? 4242 : nogroup;
			CHECK(lstat(tu_str("%s/known", t13), &st) == 0 && st.st_uid == want_u &&
			      st.st_gid == want_g);
			CHECK(lstat(tu_str("%s/link", t13), &st) == 0 && S_ISLNK(st.st_mode) &&
			      st.st_uid == want_u && st.st_gid == want_g);
			CHECK(lstat(tu_str("%s/unknown", t13), &st) == 0 && st.st_uid == 4243 &&
			      st.st_gid == 4244);
		}
	}

	/* 12. A hardlink added from memory to a path that is never added is left out and
	 * reported (finish: ZN_ERR_IO, the rest complete); the archive stays valid. */
	char *a12 = tu_str("%s/a12.zn", dir);
	fd = open(a12, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_hooks hooks12 = {.struct_size = sizeof(hooks12), .problem = count_problems};
	CHECK_OK(zn_writer_open(&w, fd, NULL, &hooks12));
	struct zn_entry hl = {.path = "hl",
	                      .path_len = 2,
	                      .type = ZN_TYPE_HARDLINK,
	                      .mode = 0644,
	                      .link = "nope",
	                      .link_len = 4};
	struct zn_entry fe = {
	        .path = "f", .path_len = 1, .type = ZN_TYPE_FILE, .mode = 0644, .size = 1};
	CHECK_OK(zn_writer_add_memory(w, &hl, NULL));
	CHECK_OK(zn_writer_add_memory(w, &fe, "x"));
	problems12 = 0;
	CHECK(zn_writer_finish(w) == ZN_ERR_IO);
	CHECK(problems12 == 1);
	zn_writer_free(w);
	close(fd);
	struct zn_reader *r12;
	CHECK_OK(zn_reader_open(&r12, a12, NULL, 0));
	CHECK(zn_reader_count(r12) == 1);
	CHECK_OK(zn_verify(r12, 1, NULL));
	/* Misuse of the reader: an index out of range is an argument error, not damage. */
	CHECK(zn_reader_read_entry(r12, 1, NULL, NULL) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_read_entry(r12, UINT64_MAX, NULL, NULL) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_entry(r12, 0, NULL) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_find(r12, "f", 1, NULL) == ZN_ERR_INVALID_ARG);
	CHECK(zn_extract(r12, "", NULL, NULL, NULL) == ZN_ERR_INVALID_ARG);
	zn_reader_free(r12);
	/* Owner names the name table cannot hold whole are refused, not cut short. */
	{
		int fdn = open(tu_str("%s/names.zn", dir), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fdn >= 0);
		struct zn_writer *wn;
		CHECK_OK(zn_writer_open(&wn, fdn, NULL, NULL));
		static char longname[300];
		memset(longname, 'u', sizeof(longname));
		struct zn_entry en = {.path = "d",
		                      .path_len = 1,
		                      .type = ZN_TYPE_DIR,
		                      .mode = 0755,
		                      .uname = longname,
		                      .uname_len = 256};
		CHECK(zn_writer_add_memory(wn, &en, NULL) == ZN_ERR_INVALID_ARG);
		en.uname_len = 255;
		CHECK_OK(zn_writer_add_memory(wn, &en, NULL));
		en.path = "e", en.uname = NULL, en.gname = "ab\0cd", en.gname_len = 5;
		CHECK(zn_writer_add_memory(wn, &en, NULL) == ZN_ERR_INVALID_ARG);
		CHECK_OK(zn_writer_finish(wn));
		zn_writer_free(wn);
		close(fdn);
	}
	/* NULL objects are argument errors (or ignored), never a crash. */
	CHECK(zn_verify(NULL, 1, NULL) == ZN_ERR_INVALID_ARG);
	CHECK(zn_extract(NULL, dir, NULL, NULL, NULL) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_open(NULL, a12, NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_open(&r12, NULL, NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_reader_open_mem(NULL, "", 0, NULL, 0) == ZN_ERR_INVALID_ARG);
	CHECK(zn_writer_open(NULL, 1, NULL, NULL) == ZN_ERR_INVALID_ARG);
	zn_writer_skip_inode(NULL, 0, 0);
	zn_writer_free(NULL);
	zn_reader_free(NULL);

	/* 14. Entries below a file or symlink are left out at finish (they could never be
	 * extracted); implicit parents are fine. */
	{
		char *a14 = tu_str("%s/below.zn", dir);
		int fd14 = open(a14, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd14 >= 0);
		struct zn_writer *w14;
		struct zn_hooks hooks14 = {.struct_size = sizeof(hooks14),
		                           .problem = count_problems};
		CHECK_OK(zn_writer_open(&w14, fd14, NULL, &hooks14));
		problems12 = 0;
		static const struct ent e14[] = {
		        {"a", ZN_TYPE_FILE, "x"},
		        {"a/b", ZN_TYPE_FILE, "y"},
		        {"a/b/c", ZN_TYPE_FILE, "z"},
		        {"s", ZN_TYPE_SYMLINK, "t"},
		        {"s/x", ZN_TYPE_FILE, "w"},
		        {"d", ZN_TYPE_DIR, NULL},
		        {"d/f", ZN_TYPE_FILE, "v"},
		        {"n/deep/f", ZN_TYPE_FILE, "u"},
		        {"a.txt", ZN_TYPE_FILE, "sorts between a and a/b"},
		};
		add_ents(w14, e14, (int)(sizeof(e14) / sizeof(e14[0])));
		CHECK(zn_writer_finish(w14) == ZN_ERR_IO);
		CHECK(problems12 == 3); /* a/b, a/b/c, s/x */
		zn_writer_free(w14);
		close(fd14);
		struct zn_reader *r14;
		CHECK_OK(zn_reader_open(&r14, a14, NULL, 0));
		CHECK(zn_reader_count(r14) == 6);
		uint64_t idx;
		CHECK(zn_reader_find(r14, "a/b", 3, &idx) == ZN_ERR_NOT_FOUND);
		CHECK_OK(zn_reader_find(r14, "n/deep/f", 8, &idx));
		CHECK_OK(zn_verify(r14, 1, NULL));
		zn_reader_free(r14);
		CHECK_OK(extract(a14, tu_str("%s/t14", dir), 0));
	}

	/* 13. Extracting again without overwrite: one report per file, never two at once. */
	{
		struct ent e13[32];
		char names[32][8];
		static char big13[70000]; /* a block of its own per file: every worker reports */
		memset(big13, 'x', sizeof(big13) - 1);
		for (int i = 0; i < 32; i++) {
			snprintf(names[i], sizeof(names[i]), "f%02d", i);
			e13[i] = (struct ent){names[i], ZN_TYPE_FILE, big13};
		}
		struct zn_create_options o13;
		zn_create_options_init(&o13);
		o13.chunk_size = 64 << 10;
		char *a13 = make_opt("hooks.zn", e13, 32, NULL, NULL, &o13);
		char *t13 = tu_str("%s/t13", dir);
		unsigned saved = extract_threads;
		extract_threads = 4;
		CHECK_OK(extract(a13, t13, 0));
		CHECK(extract_cb(a13, t13, 0, 0, slow_hook) == ZN_ERR_IO);
		extract_threads = saved;
		CHECK(atomic_load(&hook_calls) == 32);
		CHECK(!atomic_load(&hook_overlap));
	}

	tu_rmtree(dir);
	free(dir);
	puts("ok");
	return 0;
}
