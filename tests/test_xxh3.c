/* SPDX-License-Identifier: MIT */
/* test_xxh3.c - zn_xxh3 (and each kernel this CPU runs) equals libxxhash's XXH3_64bits on every
 * length class XXH3 treats differently, at every alignment, and on whole-block sizes. */
#include <stdlib.h>
#include <xxhash.h>

#include "common/cpu_features.h"
#include "test_util.h"
#include "common/xxh3.h"

typedef uint64_t (*xxh3_fn)(const void *, size_t);

static void check_fn(const char *name, xxh3_fn f, const uint8_t *buf, size_t cap)
{
	/* 0..3, 4..8, 9..16, 17..128, 129..240 and the long-input loop with its stripes, blocks
	 * and tail: every length up to 4 KiB, then a few block-sized ones. */
	for (size_t len = 0; len <= 4096; len++) {
		size_t align = len % 61;
		uint64_t want = XXH3_64bits(buf + align, len), got = f(buf + align, len);
		if (want != got)
			fprintf(stderr, "%s: len %zu align %zu\n", name, len, align);
		CHECK_EQ_U64(got, want);
	}
	const size_t big[] = {65535, 65536, 1u << 20, (4u << 20) - 1, cap};
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		CHECK_EQ_U64(f(buf, big[i]), XXH3_64bits(buf, big[i]));
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_xxh3");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	size_t cap = (4u << 20) + 77;
	uint8_t *buf = malloc(cap + 64);
	CHECK(buf);
	tu_rng_fill(&g, buf, cap + 64);
	check_fn("zn_xxh3", zn_xxh3, buf, cap);
#if defined(__x86_64__)
	if (zn_cpu_features() & ZN_CPU_AVX2)
		check_fn("avx2", zn_xxh3_avx2, buf, cap);
	else
		printf("test_xxh3: no AVX2 here (or masked); the library's kernel was checked\n");
#endif
	free(buf);
	return 0;
}
