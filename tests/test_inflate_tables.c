/* SPDX-License-Identifier: MIT */
/* test_inflate_tables.c - decode-table building: every literal-joining variant builds the same
 * table, and joined entries decode exactly what the single-literal table decodes. */
#include <string.h>

#include "common/cpu_features.h"
#include "deflate/deflate_internal.h"
#include "test_util.h"

/* Random complete code lengths (a random Huffman tree) for the 257 literal/length symbols,
 * biased to short literal codes so that joining is worthwhile; some end-of-block and length
 * codes are short too, so that a short non-literal often follows literals within the root
 * (which must not be joined). */
static void random_code(struct tu_rng *g, uint8_t *lens, unsigned n)
{
	uint64_t freq[DEFLATE_NUM_LITLEN];
	for (unsigned s = 0; s < n; s++)
		freq[s] = (s < 256 ? tu_rng_below(g, 4) : !tu_rng_below(g, 8))
		                  ? 1 + tu_rng_below(g, 1u << tu_rng_below(g, 20))
		                  : 1 + tu_rng_below(g, 3);
	/* Package lengths from a simple Huffman construction, limited to 15 by flattening. */
	for (;;) {
		unsigned parent[2 * DEFLATE_NUM_LITLEN];
		uint64_t w[2 * DEFLATE_NUM_LITLEN];
		int alive[2 * DEFLATE_NUM_LITLEN];
		unsigned nodes = n;
		for (unsigned s = 0; s < n; s++)
			w[s] = freq[s], alive[s] = 1;
		for (unsigned round = 1; round < n; round++) {
			unsigned a = ~0u, b = ~0u;
			for (unsigned k = 0; k < nodes; k++) {
				if (!alive[k])
					continue;
				if (a == ~0u || w[k] < w[a])
					b = a, a = k;
				else if (b == ~0u || w[k] < w[b])
					b = k;
			}
			alive[a] = alive[b] = 0;
			parent[a] = parent[b] = nodes;
			w[nodes] = w[a] + w[b];
			alive[nodes] = 1;
			nodes++;
		}
		unsigned maxl = 0;
		for (unsigned s = 0; s < n; s++) {
			unsigned l = 0;
			for (unsigned k = s; k != nodes - 1; k = parent[k])
				l++;
			lens[s] = (uint8_t)l;
			maxl = l > maxl ? l : maxl;
		}
		if (maxl <= 15)
			return;
		for (unsigned s = 0; s < n; s++)
			freq[s] = freq[s] / 2 + 1;
	}
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_inflate_tables");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	static uint32_t single[LITLEN_ENOUGH], generic[LITLEN_ENOUGH], best[LITLEN_ENOUGH];
	/* Every variant this CPU runs (AVX-512, AVX2, generic), not only the dispatched one. */
	const uint32_t f = zn_cpu_features();
	const zn_pair_fn pairs[] = {zn_select_pair(f), zn_select_pair(f & ~ZN_CPU_AVX512F),
	                            zn_select_pair(f & ~(ZN_CPU_AVX512F | ZN_CPU_AVX2))};
	unsigned joined = 0;
	for (int iter = 0; iter < 300; iter++) {
		uint8_t lens[DEFLATE_NUM_LITLEN];
		unsigned n = 257 + (unsigned)tu_rng_below(&g, 30);
		random_code(&g, lens, n);
		CHECK_OK(zn_build_decode_table(single, lens, n, ZN_CODE_LITLEN, NULL));
		CHECK_OK(zn_build_decode_table(generic, lens, n, ZN_CODE_LITLEN,
		                               zn_pair_literals_generic));
		for (size_t v = 0; v < sizeof(pairs) / sizeof(pairs[0]); v++) {
			CHECK_OK(zn_build_decode_table(best, lens, n, ZN_CODE_LITLEN, pairs[v]));
			CHECK(memcmp(generic, best, sizeof(best)) == 0);
		}
		/* A joined entry at i must equal decoding i with the single table. */
		for (unsigned i = 0; i < (1u << LITLEN_TABLEBITS); i++) {
			uint32_t e = generic[i];
			if (!(e & HD_LIT_MASK)) {
				CHECK(e == single[i]);
				continue;
			}
			unsigned cnt = (e >> 6) & 3, used = 0, bits = i;
			joined += cnt > 1;
			for (unsigned k = 0; k < cnt; k++) {
				uint32_t s = single[bits & ((1u << LITLEN_TABLEBITS) - 1)];
				CHECK(s & HD_LIT_MASK);
				CHECK(((e >> (8 + 8 * k)) & 0xff) == ((s >> 8) & 0xff));
				used += s & 15;
				bits >>= s & 15;
			}
			CHECK(used == (e & 63));
			CHECK(used <= LITLEN_TABLEBITS);
		}
	}
	printf("joined entries seen: %u\n", joined);
	CHECK(joined > 0);
	return 0;
}
