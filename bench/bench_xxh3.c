/* SPDX-License-Identifier: MIT */
/* bench_xxh3.c - XXH3-64 as the archive uses it: libxxhash's XXH3_64bits against zn_xxh3.
 *
 * Usage: bench_xxh3 [-r REPS]
 * Hashes a 4 MiB buffer (one archive block, cache-resident) and a 256 MiB one (memory-bound),
 * both implementations round-robin, REPS rounds (default 9), best time each; checks that both
 * give the same value. Prints a markdown table of GB/s (10^9 bytes per second). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "test_util.h"
#include "common/xxh3.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t lib_xxh3(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

int main(int argc, char **argv)
{
	int reps = 9, opt;
	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r' || (reps = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: bench_xxh3 [-r REPS]\n");
			return 2;
		}
	}
	const size_t sizes[] = {4u << 20, 256u << 20};
	uint64_t (*fns[2])(const void *, size_t) = {lib_xxh3, zn_xxh3};
	const char *names[2] = {"libxxhash XXH3_64bits", "zn_xxh3 (dispatched)"};
	double best[2][2] = {{1e30, 1e30}, {1e30, 1e30}};
	struct tu_rng g;
	tu_rng_seed(&g, 1);
	for (int s = 0; s < 2; s++) {
		size_t n = sizes[s];
		uint8_t *buf = malloc(n);
		if (!buf)
			return 1;
		tu_rng_fill(&g, buf, n);
		uint64_t want = XXH3_64bits(buf, n);
		int inner = s == 0 ? 64 : 1;
		for (int r = 0; r < reps; r++)
			for (int f = 0; f < 2; f++) {
				double t = now();
				for (int k = 0; k < inner; k++)
					if (fns[f](buf, n) != want) {
						fprintf(stderr, "%s: wrong value\n", names[f]);
						return 1;
					}
				t = (now() - t) / inner;
				if (t < best[f][s])
					best[f][s] = t;
			}
		free(buf);
	}
	printf("| implementation | 4 MiB GB/s | 256 MiB GB/s |\n|---|---:|---:|\n");
	for (int f = 0; f < 2; f++)
		printf("| %s | %.1f | %.1f |\n", names[f], sizes[0] / best[f][0] / 1e9,
		       sizes[1] / best[f][1] / 1e9);
	return 0;
}
