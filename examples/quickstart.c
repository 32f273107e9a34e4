/* SPDX-License-Identifier: MIT */
/* quickstart.c - libznippy in three steps: write an archive from memory, read one entry back,
 * gunzip a buffer.
 *
 * Build against an installed libznippy:   cc quickstart.c $(pkg-config --cflags --libs znippy)
 * Run:                                    ./a.out /tmp/quickstart.zn */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <znippy.h>

/* "Hello from a gzip stream.\n", as `gzip -9n` writes it. */
static const unsigned char hello_gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03,
                                         0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0x48, 0x2b, 0xca, 0xcf,
                                         0x55, 0x48, 0x54, 0x48, 0xaf, 0xca, 0x2c, 0x50, 0x28, 0x2e,
                                         0x29, 0x4a, 0x4d, 0xcc, 0xd5, 0xe3, 0x02, 0x00, 0xd9, 0xed,
                                         0x15, 0x17, 0x1a, 0x00, 0x00, 0x00};

/* A reader hands an entry's content to a sink, piece by piece: print it. */
static zn_result print_piece(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	return fwrite(data, 1, len, stdout) == len ? ZN_OK : ZN_ERR_IO;
}

/* 1. An archive of two files and a directory, from memory. zn_entry_init() gives an entry its
 * defaults (mode 0755 for a directory, 0644 for a file, the caller's ids, the time now); a path
 * length of 0 means strlen. */
static zn_result write_archive(const char *path)
{
	static const char readme[] = "An archive written by examples/quickstart.c.\n";
	static const char notes[] = "Entries can be read one at a time, in any order.\n";
	struct zn_entry dir, a, b;
	zn_entry_init(&dir, ZN_TYPE_DIR);
	dir.path = "docs";
	zn_entry_init(&a, ZN_TYPE_FILE);
	a.path = "docs/README";
	a.size = sizeof(readme) - 1;
	zn_entry_init(&b, ZN_TYPE_FILE);
	b.path = "docs/notes.txt";
	b.size = sizeof(notes) - 1;
	struct zn_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return ZN_ERR_IO;
	zn_result r = zn_writer_open(&w, fd, NULL, NULL); /* the default options, no hooks */
	if (r == ZN_OK) {
		if ((r = zn_writer_add_memory(w, &dir, NULL)) == ZN_OK &&
		    (r = zn_writer_add_memory(w, &a, readme)) == ZN_OK &&
		    (r = zn_writer_add_memory(w, &b, notes)) == ZN_OK)
			r = zn_writer_finish(w); /* writes the index: the archive is complete */
		zn_writer_free(w);
	}
	close(fd);
	return r;
}

/* 2. One entry read back by its path, without reading the others. */
static zn_result read_entry(const char *path, const char *name)
{
	struct zn_reader *rd;
	char err[256];
	uint64_t i;
	zn_result r = zn_reader_open(&rd, path, err, sizeof(err));
	if (r != ZN_OK) {
		fprintf(stderr, "%s: %s\n", path, err);
		return r;
	}
	if ((r = zn_reader_find(rd, name, strlen(name), &i)) == ZN_OK)
		r = zn_reader_read_entry(rd, i, print_piece, NULL);
	zn_reader_free(rd);
	return r;
}

/* 3. A gzip stream decoded in one call, into a buffer large enough for it. */
static zn_result gunzip_buffer(void)
{
	struct zn_inflater *d;
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	char out[256];
	zn_result r = zn_inflater_new(&d, ZN_FORMAT_GZIP);
	if (r != ZN_OK)
		return r;
	r = zn_inflate(d, hello_gz, sizeof(hello_gz), out, sizeof(out), &info);
	if (r == ZN_OK)
		fwrite(out, 1, (size_t)info.out_len, stdout);
	zn_inflater_free(d);
	return r;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "quickstart.zn";
	zn_result r;
	if ((r = write_archive(path)) != ZN_OK ||
	    (r = read_entry(path, "docs/notes.txt")) != ZN_OK || (r = gunzip_buffer()) != ZN_OK) {
		fprintf(stderr, "quickstart: %s (%s)\n", zn_result_name(r), zn_result_message(r));
		return 1;
	}
	return 0;
}
