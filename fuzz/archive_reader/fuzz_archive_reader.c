/* SPDX-License-Identifier: MIT */
/* fuzz_archive_reader.c - libFuzzer target: open an archive from memory (footer, index, column
 * directory, columns), read every entry's metadata, content and digest, and verify it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "znippy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static zn_result discard(void *ctx, const void *d, size_t len)
{
	(void)ctx;
	(void)d;
	(void)len;
	return ZN_OK;
}

/* Reports are built from the archive's paths: taking each whole makes the reporting paths
 * read what they hand out. */
static void problem(void *ctx, const char *path, zn_result r, const char *what)
{
	size_t *n = ctx;
	*n += strlen(path) + strlen(what) + (size_t)r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zn_reader *r;
	char err[256];
	if (zn_reader_open_mem(&r, data, size, err, sizeof(err)) != ZN_OK)
		return 0;
	uint64_t n = zn_reader_count(r);
	for (uint64_t i = 0; i < n && i < 4096; i++) {
		struct zn_entry e;
		unsigned lost;
		if (zn_reader_entry_lost(r, i, &e, &lost) != ZN_OK)
			continue;
		int type;
		if ((!lost && zn_reader_entry(r, i, &e) != ZN_OK) ||
		    zn_reader_entry_type(r, i, &type) != ZN_OK || type != (int)e.type)
			__builtin_trap(); /* a whole row reads the same every way */
		uint64_t found;
		zn_reader_find(r, e.path, e.path_len, &found);
		if (e.type == ZN_TYPE_FILE || e.type == ZN_TYPE_HARDLINK) {
			zn_reader_read_entry(r, i, discard, NULL);
			uint8_t digest[32]; /* stored, or computed from the content */
			zn_reader_digest(r, i, digest);
		}
	}
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	size_t reported = 0;
	zn_verify(r, 1, &(struct zn_hooks){.ctx = &reported, .problem = problem});
	zn_reader_free(r);
	return 0;
}
