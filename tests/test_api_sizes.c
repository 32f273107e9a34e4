/* SPDX-License-Identifier: MIT */
/* test_api_sizes.c - sized structs (znippy.h, Conventions): a program built against an older,
 * smaller struct is served at its own size (nothing written past it, the library's defaults for
 * the fields it does not know), 0 stands for the first layout, and a size below that is refused. */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* zn_write_stats as the first layout declared it: the counts, without the per-stage CPU times
 * added after it. */
struct old_write_stats {
	size_t struct_size;
	uint64_t entries, files, dirs, symlinks, hardlinks;
	uint64_t content_bytes;
	uint64_t archive_bytes;
	uint64_t blocks, stored_blocks;
	uint64_t index_bytes;
	uint64_t duplicates;
	int complete;
	int write_errno;
};

/* An archive of two files written with the given hooks and entry struct sizes; the writer's stats
 * into st. */
static void write_two(const char *out, const struct zn_hooks *hooks, size_t entry_size, void *st)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_create_options o;
	zn_create_options_init(&o);
	o.struct_size = 0; /* the first layout */
	struct zn_writer *w;
	CHECK_OK(zn_writer_open(&w, fd, &o, hooks));
	struct zn_entry e;
	zn_entry_init(&e, ZN_TYPE_FILE);
	e.struct_size = entry_size;
	e.path = "a"; /* path_len 0: strlen */
	e.size = 3;
	CHECK_OK(zn_writer_add_memory(w, &e, "abc"));
	e.path = "b";
	e.size = 1;
	CHECK_OK(zn_writer_add_memory(w, &e, "d"));
	CHECK_OK(zn_writer_finish(w));
	zn_writer_stats(w, st);
	zn_writer_free(w);
	close(fd);
}

static void count_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)total;
	*(uint64_t *)ctx = done;
}

/* Stats into a struct of the first layout, followed by bytes the library must not touch. */
static void old_stats(const char *dir)
{
	struct {
		struct old_write_stats s;
		unsigned char after[64];
	} buf;
	memset(&buf, 0xa5, sizeof(buf));
	buf.s.struct_size = sizeof(buf.s);
	uint64_t done = 0;
	struct zn_hooks hooks = {.struct_size = 0, .ctx = &done, .progress = count_progress};
	write_two(tu_str("%s/old.zn", dir), &hooks, 0, &buf.s);
	CHECK(buf.s.struct_size == sizeof(buf.s)); /* the caller's size stays */
	CHECK_EQ_U64(buf.s.entries, 2);
	CHECK_EQ_U64(buf.s.files, 2);
	CHECK_EQ_U64(buf.s.content_bytes, 4);
	CHECK(buf.s.complete == 1);
	CHECK(done == 4);
	for (size_t i = 0; i < sizeof(buf.after); i++)
		CHECK(buf.after[i] == 0xa5);
	/* The current layout gets the new fields too. */
	struct zn_write_stats now = {.struct_size = sizeof(now)};
	write_two(tu_str("%s/new.zn", dir), NULL, sizeof(struct zn_entry), &now);
	CHECK_EQ_U64(now.entries, 2);
	CHECK(now.cpu_index_ns > 0);
	/* The entries added at size 0 (the first layout) were stored whole. */
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, tu_str("%s/old.zn", dir), NULL, 0));
	CHECK(zn_reader_count(r) == 2);
	struct zn_entry e;
	CHECK_OK(zn_reader_entry(r, 0, &e));
	CHECK(e.path_len == 1 && e.path[0] == 'a' && e.size == 3 && e.mode == 0644);
	zn_reader_free(r);
}

/* Sizes below a struct's first layout are argument errors; stats are then left alone. */
static void refused(const char *dir)
{
	int fd = open(tu_str("%s/x.zn", dir), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	struct zn_writer *w = NULL;
	struct zn_create_options o;
	zn_create_options_init(&o);
	CHECK(o.struct_size == sizeof(o));
	o.struct_size = sizeof(size_t) + 1;
	CHECK(zn_writer_open(&w, fd, &o, NULL) == ZN_ERR_INVALID_ARG && !w);
	zn_create_options_init(&o);
	struct zn_hooks h = {.struct_size = offsetof(struct zn_hooks, problem)};
	CHECK(zn_writer_open(&w, fd, &o, &h) == ZN_ERR_INVALID_ARG && !w);
	CHECK_OK(zn_writer_open(&w, fd, &o, NULL));
	struct zn_entry e;
	zn_entry_init(&e, ZN_TYPE_DIR);
	CHECK(e.mode == 0755 && e.struct_size == sizeof(e));
	e.path = "d";
	e.struct_size = offsetof(struct zn_entry, path_len);
	CHECK(zn_writer_add_memory(w, &e, NULL) == ZN_ERR_INVALID_ARG);
	e.struct_size = sizeof(e);
	CHECK_OK(zn_writer_add_memory(w, &e, NULL));
	CHECK_OK(zn_writer_finish(w));
	struct old_write_stats s;
	memset(&s, 0xa5, sizeof(s));
	s.struct_size = 4; /* below the first layout: nothing is written */
	zn_writer_stats(w, (struct zn_write_stats *)&s);
	CHECK(s.entries == 0xa5a5a5a5a5a5a5a5ull);
	zn_writer_free(w);
	close(fd);
}

static void count_extracted(void *ctx, const char *path, size_t len)
{
	(void)path, (void)len;
	++*(int *)ctx;
}

/* The reader's side: zn_reader_info fills the caller's size and nothing past it; zn_extract and
 * zn_verify take sized options and hooks, 0 as the first layout, a smaller size refused. */
static void reader_side(const char *dir)
{
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, tu_str("%s/old.zn", dir), NULL, 0));
	struct {
		struct zn_archive_info i;
		unsigned char after[32];
	} buf;
	memset(&buf, 0xa5, sizeof(buf));
	buf.i.struct_size = sizeof(buf.i);
	zn_reader_info(r, &buf.i);
	CHECK(buf.i.struct_size == sizeof(buf.i) && buf.i.files == 2 && buf.i.content_bytes == 4);
	for (size_t i = 0; i < sizeof(buf.after); i++)
		CHECK(buf.after[i] == 0xa5);
	buf.i.struct_size = 4; /* below the first layout: nothing is written */
	buf.i.files = 77;
	zn_reader_info(r, &buf.i);
	CHECK(buf.i.files == 77);

	struct zn_extract_options o;
	zn_extract_options_init(&o);
	CHECK(o.struct_size == sizeof(o));
	o.struct_size = 4;
	CHECK(zn_extract(r, tu_str("%s/x1", dir), NULL, &o, NULL) == ZN_ERR_INVALID_ARG);
	o.struct_size = 0;
	int listed = 0;
	struct zn_hooks h = {.ctx = &listed, .extracted = count_extracted};
	CHECK_OK(zn_extract(r, tu_str("%s/x2", dir), NULL, &o, &h));
	CHECK(listed == 2);
	h.struct_size = offsetof(struct zn_hooks, problem);
	CHECK(zn_extract(r, tu_str("%s/x3", dir), NULL, &o, &h) == ZN_ERR_INVALID_ARG);
	CHECK(zn_verify(r, 1, &h) == ZN_ERR_INVALID_ARG);
	h.struct_size = 0;
	CHECK_OK(zn_verify(r, 1, &h));
	zn_reader_free(r);
}

/* The decoders' info structs: filled as far as the caller's size, nothing below the first
 * layout (zn_zstd_frame_scan refuses it). */
static void decoder_infos(void)
{
	static const uint8_t stored[] = {1, 3, 0, 0xfc, 0xff, 'a', 'b', 'c'}; /* raw DEFLATE */
	struct zn_inflater *d;
	CHECK_OK(zn_inflater_new(&d, ZN_FORMAT_RAW));
	uint8_t out[8];
	struct zn_inflate_info ii = {.struct_size = 0}; /* the first layout */
	CHECK_OK(zn_inflate(d, stored, sizeof(stored), out, sizeof(out), &ii));
	CHECK(ii.out_len == 3 && ii.in_used == sizeof(stored));
	ii.struct_size = 4;
	ii.out_len = 77;
	CHECK_OK(zn_inflate(d, stored, sizeof(stored), out, sizeof(out), &ii));
	CHECK(ii.out_len == 77);
	zn_inflater_free(d);
	/* an empty zstd frame: magic, single segment with a content size of 0, one last raw block
	 */
	static const uint8_t frame[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 0, 1, 0, 0};
	struct zn_zstd_frame_info fi = {.struct_size = sizeof(fi)};
	CHECK_OK(zn_zstd_frame_scan(frame, sizeof(frame), &fi));
	CHECK(fi.frame_size == sizeof(frame) && fi.content_size == 0);
	fi.struct_size = 4;
	CHECK(zn_zstd_frame_scan(frame, sizeof(frame), &fi) == ZN_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_api_sizes");
	char *dir = tu_mkdtemp();
	old_stats(dir);
	refused(dir);
	reader_side(dir);
	decoder_infos();
	tu_rmtree(dir);
	free(dir);
	printf("test_api_sizes: ok\n");
	return 0;
}
