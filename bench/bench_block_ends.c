/* SPDX-License-Identifier: MIT */
/* bench_block_ends.c - the files of an archive that `cat` pays most for: those whose bytes end
 * near the end of their block, so that reading them decodes (nearly) the whole block.
 *
 * Usage: bench_block_ends ARCHIVE [N]
 * Prints, one per line, up to N (default 10) stored paths spread evenly over the regular files
 * whose content ends past 95% of the archive's chunk size within its block (a file spanning
 * blocks counts where it starts). Feed them to `znippy cat` under a timer (docs/BENCHMARKS.md). */
#include <stdio.h>
#include <stdlib.h>

#include <znippy.h>

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_block_ends ARCHIVE [N]\n");
		return 2;
	}
	unsigned long want = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
	struct zn_reader *r;
	char err[256];
	if (zn_reader_open(&r, argv[1], err, sizeof err) != ZN_OK) {
		fprintf(stderr, "bench_block_ends: %s\n", err);
		return 1;
	}
	struct zn_archive_info info = {.struct_size = sizeof(info)};
	zn_reader_info(r, &info);
	const uint64_t past = info.chunk_size / 20 * 19, n = zn_reader_count(r);
	uint64_t *hit = malloc((n ? n : 1) * sizeof(*hit)), m = 0;
	if (!hit)
		return 3;
	for (uint64_t i = 0; i < n; i++) {
		struct zn_entry e;
		if (zn_reader_entry(r, i, &e) == ZN_OK && e.type == ZN_TYPE_FILE && e.size &&
		    e.block_offset + e.size > past)
			hit[m++] = i;
	}
	for (uint64_t k = 0; k < want && k < m; k++) {
		struct zn_entry e;
		if (zn_reader_entry(r, hit[k * m / (want < m ? want : m)], &e) == ZN_OK)
			printf("%.*s\n", (int)e.path_len, e.path);
	}
	free(hit);
	zn_reader_free(r);
	return 0;
}
