/* SPDX-License-Identifier: MIT */
/* xxh3_avx2.c - XXH3-64 from libxxhash's own header, compiled for AVX2 (this file alone is built
 * with -mavx2; see CMakeLists.txt). Same function, same values as the library's XXH3_64bits. */
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

#include "common/xxh3.h"

uint64_t zn_xxh3_avx2(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}
