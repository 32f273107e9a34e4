/* SPDX-License-Identifier: MIT */
/* xxh3.c - XXH3-64 dispatch to the widest kernel (see xxh3.h). */
#include <stdatomic.h>
#include <xxhash.h>

#include "cpu_features.h"
#include "xxh3.h"

typedef uint64_t (*xxh3_fn)(const void *, size_t);

static uint64_t xxh3_library(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

static uint64_t xxh3_resolve(const void *p, size_t n);
static _Atomic(xxh3_fn) xxh3_impl = xxh3_resolve;

static uint64_t xxh3_resolve(const void *p, size_t n)
{
	xxh3_fn f = xxh3_library;
#if defined(__x86_64__)
	if (zn_cpu_features() & ZN_CPU_AVX2)
		f = zn_xxh3_avx2; /* AVX-512 measured no faster than AVX2 on 4 MiB blocks */
#endif
	atomic_store_explicit(&xxh3_impl, f, memory_order_relaxed);
	return f(p, n);
}

uint64_t zn_xxh3(const void *p, size_t n)
{
	return atomic_load_explicit(&xxh3_impl, memory_order_relaxed)(p, n);
}
