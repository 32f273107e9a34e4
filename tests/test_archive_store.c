/* SPDX-License-Identifier: MIT */
/* test_archive_store.c - known-compressed files are stored as is, by their name alone: the
 * extension, in any case, for every length the list holds (2 to 8 characters); a near miss (a
 * letter more or less, the extension of a directory above, no dot) is compressed, and with
 * no_skip everything is. Each file is 60,000 zero bytes alone in its archive, so its one block
 * is stored only if its name sent it to the store packer. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "znippy.h"

static char *dir;

static int stored(const char *name, int no_skip)
{
	static const uint8_t zeros[60000];
	char *out = tu_str("%s/a.zn", dir);
	struct zn_create_options o = tu_small_blocks(1);
	o.no_skip = no_skip;
	const struct tu_file f = {name, zeros, sizeof(zeros)};
	tu_archive_files(out, &o, &f, 1);
	struct zn_reader *r;
	CHECK_OK(zn_reader_open(&r, out, NULL, 0));
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	CHECK(info.blocks == 1);
	int s = (int)info.stored_blocks;
	zn_reader_free(r);
	return s;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_archive_store");
	dir = tu_mkdtemp();
	static const char *const as_is[] = {
	        "a.jar",     "A.JAR",      "m2/x/1.0/x-1.0.Jar",
	        "d/x.gz",    "x.7z",       "x.zn",
	        "x.tbz2",    "x.WOFF2",    "x.nupkg",
	        "x.parquet", "x.squashfs", "x.tar.zst",
	        "x.jxl",     "x.dmg",      "x.pack",
	        "x.br",
	};
	static const char *const compressed[] = {
	        "a.jarx",   "a.ja",   "jar",      "a.jar/b", "a.",     "x.squashfs1",
	        "x.gz.txt", "x.zip-", "x.parque", "x.woff3", "x.tbz3", "x",
	};
	for (size_t i = 0; i < sizeof(as_is) / sizeof(as_is[0]); i++) {
		if (!stored(as_is[i], 0))
			tu_fail(__FILE__, __LINE__, as_is[i]);
		CHECK(stored(as_is[i], 1) == 0);
	}
	for (size_t i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++)
		if (stored(compressed[i], 0))
			tu_fail(__FILE__, __LINE__, compressed[i]);
	tu_rmtree(dir);
	free(dir);
	puts("ok");
	return 0;
}
