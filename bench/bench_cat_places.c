/* SPDX-License-Identifier: MIT */
/* bench_cat_places.c - three files of an archive for timing `cat` (bench/cat_breakdown.sh): the
 * one whose bytes start nearest the beginning of its block, nearest the middle, and nearest the
 * end. `cat` decodes its block from the start as far as the file ends, so the three bound the
 * cost of decoding (the first one still pays a whole zstd block of up to 128 KiB) and the rest is
 * the fixed cost: process start, index, page faults. */
#include <stdio.h>
#include <stdlib.h>

#include <znippy.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_cat_places ARCHIVE\n");
		return 2;
	}
	struct zn_reader *r;
	char err[256];
	if (zn_reader_open(&r, argv[1], err, sizeof err) != ZN_OK) {
		fprintf(stderr, "bench_cat_places: %s\n", err);
		return 1;
	}
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	const uint64_t n = zn_reader_count(r), want[3] = {0, info.chunk_size / 2, info.chunk_size};
	uint64_t best[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX}, at[3] = {0, 0, 0};
	for (uint64_t i = 0; i < n; i++) {
		struct zn_entry e;
		if (zn_reader_entry(r, i, &e) != ZN_OK || e.type != ZN_TYPE_FILE || !e.size)
			continue;
		const uint64_t end = e.block_offset + e.size;
		for (int k = 0; k < 3; k++) {
			uint64_t d = end > want[k] ? end - want[k] : want[k] - end;
			if (d < best[k])
				best[k] = d, at[k] = i;
		}
	}
	for (int k = 0; k < 3; k++) {
		struct zn_entry e;
		if (best[k] != UINT64_MAX && zn_reader_entry(r, at[k], &e) == ZN_OK)
			printf("%llu %.*s\n", (unsigned long long)(e.block_offset + e.size),
			       (int)e.path_len, e.path);
	}
	zn_reader_free(r);
	return 0;
}
