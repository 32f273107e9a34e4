/* SPDX-License-Identifier: MIT */
/* xxh3.h - XXH3-64 (libxxhash's function, same values) with the widest vector kernel the CPU has.
 */
#ifndef ZN_XXH3_H
#define ZN_XXH3_H

#include <stddef.h>
#include <stdint.h>

/* XXH3_64bits(p, n), seed 0. Debian's libxxhash is built for SSE2 (about 10 GB/s here on a
 * 4 MiB block); on CPUs with AVX2 the same function compiled from xxhash.h for AVX2 runs at
 * about 20 GB/s. The variant is chosen on the first call and cached (an atomic pointer). Every
 * archive block is hashed once when written and once more each time it is read, so this is on
 * the hot path of create, extract and verify. */
uint64_t zn_xxh3(const void *p, size_t n);

#if defined(__x86_64__)
/* lib/x86/xxh3_avx2.c, built with -mavx2; call only when ZN_CPU_AVX2 is present. */
uint64_t zn_xxh3_avx2(const void *p, size_t n);
#endif

#endif
