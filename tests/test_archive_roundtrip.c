/* SPDX-License-Identifier: MIT */
/* test_archive_roundtrip.c - entries added from memory come back exactly, through the reader,
 * extraction and verification, and the archive does not depend on the thread count. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_internal.h"
#include "test_util.h"

struct item {
	char path[600];
	size_t path_len;
	uint32_t type, mode;
	uint64_t size;
	uint8_t *data;
	char link[300];
	int64_t mtime_ns;
};

static struct item items[400];
static int nitems;

static struct item *add(const char *path, size_t len, uint32_t type)
{
	struct item *it = &items[nitems++];
	memset(it, 0, sizeof(*it));
	memcpy(it->path, path, len);
	it->path_len = len;
	it->type = type;
	it->mode = type == ZN_TYPE_DIR ? 0755 : 0640;
	it->mtime_ns = 1700000000123456789LL + nitems;
	return it;
}

static void make_items(struct tu_rng *g, uint64_t chunk)
{
	char p[600];
	nitems = 0;
	add("d", 1, ZN_TYPE_DIR);
	add("d/empty-dir", 11, ZN_TYPE_DIR);
	add("d/empty", 7, ZN_TYPE_FILE);
	/* Odd names: spaces, newline, non-UTF-8 bytes, a 255-byte name, a deep path. */
	struct item *it = add("d/with space\nand newline", 24, ZN_TYPE_FILE);
	it->size = 100;
	it = add("d/\xff\xfe-not-utf8", 13, ZN_TYPE_FILE);
	it->size = 5000;
	memset(p, 'n', 257);
	memcpy(p, "d/", 2);
	it = add(p, 257, ZN_TYPE_FILE); /* "d/" + 255 bytes */
	it->size = 77;
	size_t len = 0;
	for (int i = 0; i < 60; i++)
		len += (size_t)sprintf(p + len, "%sdeep%d", i ? "/" : "", i % 10);
	it = add(p, len, ZN_TYPE_FILE);
	it->size = 3;
	/* Large files spanning several blocks, one exactly one chunk, one a chunk plus a byte. */
	it = add("big/a", 5, ZN_TYPE_FILE);
	it->size = chunk * 3 + 12345;
	it = add("big/b-exact", 11, ZN_TYPE_FILE);
	it->size = chunk;
	it = add("big/c-plus-one", 14, ZN_TYPE_FILE);
	it->size = chunk + 1;
	/* Known-compressed types go to the store packer. */
	it = add("pkg/lib.jar", 11, ZN_TYPE_FILE);
	it->size = 30000;
	it = add("pkg/img.PNG", 11, ZN_TYPE_FILE);
	it->size = 20000;
	/* Many small files, some compressible, some random. */
	for (int i = 0; i < 200; i++) {
		len = (size_t)sprintf(p, "small/%03d/file-%d.txt", i % 17, i);
		it = add(p, len, ZN_TYPE_FILE);
		it->size = tu_rng_below(g, 20000);
	}
	it = add("links/sym", 9, ZN_TYPE_SYMLINK);
	strcpy(it->link, "../d/empty");
	it = add("links/dangling", 14, ZN_TYPE_SYMLINK);
	strcpy(it->link, "does/not/exist");
	it = add("links/hard", 10, ZN_TYPE_HARDLINK);
	strcpy(it->link, "big/a");
	it = add("links/hard-small", 16, ZN_TYPE_HARDLINK);
	strcpy(it->link, "small/003/file-3.txt");
	for (int i = 0; i < nitems; i++) {
		it = &items[i];
		if (it->type != ZN_TYPE_FILE || !it->size)
			continue;
		it->data = malloc(it->size);
		if (i % 3 == 0) {
			tu_rng_fill(g, it->data, it->size);
		} else { /* text-like: compressible */
			for (uint64_t k = 0; k < it->size; k++)
				it->data[k] = "the quick brown fox jumps over the lazy dog\n"
				        [(k * 7 + (uint64_t)i) % 44];
		}
	}
}

/* A caller's stream over an item's bytes, handing out pieces of odd sizes. */
struct stream {
	const uint8_t *p;
	uint64_t left, calls;
};

static int64_t stream_read(void *ctx, void *buf, size_t n)
{
	struct stream *st = ctx;
	uint64_t k = 1 + (st->calls++ * 7919) % 50000;
	k = k < n ? k : n;
	k = k < st->left ? k : st->left;
	if (!k)
		return 0; /* the end (and no bytes to copy from a NULL p) */
	memcpy(buf, st->p, k);
	st->p += k;
	st->left -= k;
	return (int64_t)k;
}

/* With `stream`, files are added through zn_writer_add_stream() instead of from memory: with
 * their sizes (1), or as of unknown length (2). */
static char *write_archive(const char *dir, const char *name, unsigned threads, uint64_t chunk,
                           int stream)
{
	char *path = tu_fmt("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_create_options opt;
	zn_create_options_init(&opt);
	opt.threads = threads;
	opt.chunk_size = chunk;
	opt.memory_limit = chunk * 9; /* just above the 4 buffers the pipeline needs */
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, &opt, NULL));
	/* Add in a scrambled order: the index must come out sorted anyway. */
	for (int k = 0; k < nitems; k++) {
		struct item *it = &items[(k * 7) % nitems];
		struct zn_entry e;
		memset(&e, 0, sizeof(e));
		e.path = it->path;
		e.path_len = it->path_len;
		e.type = it->type;
		e.mode = it->mode;
		e.uid = 1000;
		e.gid = 100;
		e.uname = "alice";
		e.uname_len = 5;
		e.gname = "users";
		e.gname_len = 5;
		e.mtime_ns = it->mtime_ns;
		e.size = it->size;
		if (it->link[0]) {
			e.link = it->link;
			e.link_len = strlen(it->link);
		}
		struct stream st = {it->data, it->size, 0};
		if (stream == 2 && e.type == ZN_TYPE_FILE)
			e.size = ZN_SIZE_UNKNOWN; /* read to its end */
		if (stream)
			CHECK_OK(zn_writer_add_stream(w, &e, stream_read, &st));
		else
			CHECK_OK(zn_writer_add_memory(w, &e, it->data));
		CHECK(!stream || st.left == 0); /* exactly the entry's bytes were read */
	}
	CHECK_OK(zn_writer_finish(w));
	zn_writer_free(w);
	close(fd);
	return path;
}

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static zn_result sink(void *ctx, const void *data, size_t len)
{
	struct buf *b = ctx;
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return ZN_OK;
}

static const struct item *find_item(const char *path, size_t len)
{
	for (int i = 0; i < nitems; i++)
		if (items[i].path_len == len && !memcmp(items[i].path, path, len))
			return &items[i];
	return NULL;
}

static void check_reader(const char *path)
{
	struct zn_reader *r;
	char err[256];
	CHECK_OK(zn_reader_open(&r, path, err, sizeof(err)));
	CHECK_EQ_U64(zn_reader_count(r), nitems);
	struct zn_entry prev = {0};
	for (uint64_t i = 0; i < zn_reader_count(r); i++) {
		struct zn_entry e;
		CHECK_OK(zn_reader_entry(r, i, &e));
		int type; /* the type alone, as the row gives it */
		CHECK(zn_reader_entry_type(r, i, &type) == ZN_OK && type == (int)e.type);
		if (i) { /* sorted by bytes */
			size_t m = prev.path_len < e.path_len ? prev.path_len : e.path_len;
			int c = memcmp(prev.path, e.path, m);
			CHECK(c < 0 || (c == 0 && prev.path_len < e.path_len));
		}
		prev = e;
		const struct item *it = find_item(e.path, e.path_len);
		CHECK(it);
		CHECK_EQ_U64(e.type, it->type);
		CHECK_EQ_U64(e.mode, it->mode);
		CHECK_EQ_U64(e.uid, 1000);
		CHECK(e.uname_len == 5 && !memcmp(e.uname, "alice", 5));
		CHECK(e.gname_len == 5 && !memcmp(e.gname, "users", 5));
		CHECK_EQ_U64((uint64_t)e.mtime_ns, (uint64_t)it->mtime_ns);
		uint64_t found;
		CHECK_OK(zn_reader_find(r, e.path, e.path_len, &found));
		CHECK_EQ_U64(found, i);
		if (it->link[0])
			CHECK(e.link_len == strlen(it->link) &&
			      !memcmp(e.link, it->link, e.link_len));
		if (e.type == ZN_TYPE_FILE || e.type == ZN_TYPE_HARDLINK) {
			const struct item *src = it;
			if (e.type == ZN_TYPE_HARDLINK)
				src = find_item(it->link, strlen(it->link));
			struct buf b = {0};
			zn_result rr = zn_reader_read_entry(r, i, sink, &b);
			if (rr != ZN_OK)
				fprintf(stderr, "entry %.*s size %llu\n", (int)e.path_len, e.path,
				        (unsigned long long)e.size);
			CHECK_OK(rr);
			CHECK_EQ_U64(b.len, src->size);
			CHECK(!b.len || !memcmp(b.p, src->data, b.len));
			free(b.p);
		}
	}
	uint64_t idx;
	CHECK(zn_reader_find(r, "nope", 4, &idx) == ZN_ERR_NOT_FOUND);
	CHECK(zn_reader_find(r, "", 0, &idx) == ZN_ERR_NOT_FOUND);
	CHECK_OK(zn_verify(r, 3, NULL));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	CHECK(info.stored_blocks >= 1); /* random data and the jar/png packer */
	CHECK(info.blocks > info.stored_blocks);
	zn_reader_free(r);
}

static void check_extract(const char *archive, const char *dir)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, archive, NULL, 0));
	struct zn_extract_options opt;
	zn_extract_options_init(&opt);
	opt.threads = 3;
	CHECK_OK(zn_extract(r, dir, NULL, &opt, NULL));
	/* A second extraction refuses to overwrite, and succeeds with overwrite. */
	CHECK(zn_extract(r, dir, NULL, &opt, NULL) != ZN_OK);
	opt.overwrite = 1;
	CHECK_OK(zn_extract(r, dir, NULL, &opt, NULL));
	zn_reader_free(r);
	for (int i = 0; i < nitems; i++) {
		const struct item *it = &items[i];
		char *p = tu_fmt("%s/%.*s", dir, (int)it->path_len, it->path);
		struct stat st;
		CHECK(lstat(p, &st) == 0);
		if (it->type == ZN_TYPE_FILE || it->type == ZN_TYPE_HARDLINK) {
			const struct item *src = it->type == ZN_TYPE_HARDLINK
			                                 ? find_item(it->link, strlen(it->link))
			                                 : it;
			CHECK(S_ISREG(st.st_mode));
			CHECK_EQ_U64(st.st_mode & 07777, src->mode);
			size_t len;
			uint8_t *d = tu_read_file(p, &len);
			CHECK(d && len == src->size && (!len || !memcmp(d, src->data, len)));
			free(d);
			if (it->type == ZN_TYPE_FILE)
				CHECK_EQ_U64((uint64_t)st.st_mtim.tv_sec * 1000000000 +
				                     (uint64_t)st.st_mtim.tv_nsec,
				             (uint64_t)it->mtime_ns);
			if (it->type == ZN_TYPE_HARDLINK)
				CHECK(st.st_nlink == 2);
		} else if (it->type == ZN_TYPE_DIR) {
			CHECK(S_ISDIR(st.st_mode));
			CHECK_EQ_U64(st.st_mode & 07777, it->mode);
		} else if (it->type == ZN_TYPE_SYMLINK) {
			CHECK(S_ISLNK(st.st_mode));
			char t[300];
			ssize_t n = readlink(p, t, sizeof(t));
			CHECK(n == (ssize_t)strlen(it->link) && !memcmp(t, it->link, (size_t)n));
		}
		free(p);
	}
}

/* Random access touches one block for a small file, and only the blocks of a large one. */
static void check_random_access(const char *archive)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, archive, NULL, 0));
	uint64_t idx;
	struct buf b = {0};
	CHECK_OK(zn_reader_find(r, "small/003/file-3.txt", 20, &idx));
	CHECK_OK(zn_reader_read_entry(r, idx, sink, &b));
	CHECK_EQ_U64(atomic_load(&r->blocks_loaded), 1);
	CHECK_OK(zn_reader_find(r, "big/a", 5, &idx));
	CHECK_OK(zn_reader_read_entry(r, idx, sink, &b));
	CHECK_EQ_U64(atomic_load(&r->blocks_loaded), 1 + 4); /* 3 chunks and a tail */
	free(b.p);
	zn_reader_free(r);
}

static void check_select(const char *archive, const char *dir)
{
	/* Extracting one hardlink alone writes its target's content in its place. */
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, archive, NULL, 0));
	uint64_t n = zn_reader_count(r), idx;
	uint8_t *sel = calloc(n, 1);
	CHECK_OK(zn_reader_find(r, "links/hard-small", 16, &idx));
	sel[idx] = 1;
	CHECK_OK(zn_extract(r, dir, sel, NULL, NULL));
	char *p = tu_fmt("%s/links/hard-small", dir);
	size_t len;
	uint8_t *d = tu_read_file(p, &len);
	const struct item *src = find_item("small/003/file-3.txt", 20);
	CHECK(d && len == src->size && !memcmp(d, src->data, len));
	free(d);
	free(p);
	p = tu_fmt("%s/big", dir);
	struct stat st;
	CHECK(lstat(p, &st) != 0); /* nothing else was written */
	free(p);
	free(sel);
	zn_reader_free(r);
}

/* zn_reader_open_fd: a file's descriptor at any offset reads as the path does, and the caller
 * keeps it; anything but a regular file is refused. */
static void check_open_fd(const char *archive)
{
	int fd = open(archive, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && lseek(fd, 100, SEEK_SET) == 100);
	struct zn_reader *r, *by_path;
	CHECK_OK(zn_reader_open_fd(&r, fd, NULL, 0));
	CHECK_OK(zn_reader_open(&by_path, archive, NULL, 0));
	CHECK(fcntl(fd, F_GETFD) >= 0); /* still open */
	CHECK(close(fd) == 0);
	CHECK(zn_reader_count(r) == zn_reader_count(by_path) && zn_reader_count(r) > 0);
	uint64_t idx;
	CHECK_OK(zn_reader_find(r, "small/003/file-3.txt", 20, &idx));
	struct buf got = {0};
	CHECK_OK(zn_reader_read_entry(r, idx, sink, &got));
	const struct item *src = find_item("small/003/file-3.txt", 20);
	CHECK(got.len == src->size && !memcmp(got.p, src->data, got.len));
	free(got.p);
	zn_reader_free(r);
	zn_reader_free(by_path);
	int p[2];
	CHECK(pipe(p) == 0);
	char err[128] = "";
	r = (struct zn_reader *)1;
	CHECK(zn_reader_open_fd(&r, p[0], err, sizeof(err)) == ZN_ERR_INVALID_ARG && !r &&
	      strstr(err, "not a regular file"));
	CHECK(zn_reader_open_fd(&r, -1, NULL, 0) == ZN_ERR_INVALID_ARG);
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_roundtrip");
	size_t l1, l4;
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	const uint64_t chunk = 64 << 10;
	make_items(&g, chunk);
	char *dir = tu_mkdtemp();
	char *a1 = write_archive(dir, "t1.zn", 1, chunk, 0);
	char *a4 = write_archive(dir, "t4.zn", 4, chunk, 0);
	/* The same entries streamed in pieces of odd sizes, with their sizes or of unknown length,
	 * give the same archive (none of them is a copy of an earlier large file, which only memory
	 * and files are compared for). */
	for (int mode = 1; mode <= 2; mode++) {
		char *as = write_archive(dir, "ts.zn", 2, chunk, mode);
		size_t ls;
		uint8_t *ds = tu_read_file(as, &ls), *dm = tu_read_file(a1, &l1);
		CHECK(ds && dm && ls == l1 && !memcmp(ds, dm, ls));
		free(ds);
		free(dm);
		free(as);
	}
	/* Determinism: byte-identical whatever the thread count. */
	uint8_t *d1 = tu_read_file(a1, &l1), *d4 = tu_read_file(a4, &l4);
	CHECK(d1 && d4 && l1 == l4 && !memcmp(d1, d4, l1));
	free(d1);
	free(d4);
	check_reader(a1);
	check_random_access(a1);
	check_open_fd(a1);
	char *out = tu_fmt("%s/out", dir);
	check_extract(a1, out);
	char *out2 = tu_fmt("%s/out2", dir);
	check_select(a1, out2);
	tu_rmtree(dir);
	for (int i = 0; i < nitems; i++)
		free(items[i].data);
	free(a1);
	free(a4);
	free(out);
	free(out2);
	free(dir);
	puts("ok");
	return 0;
}
