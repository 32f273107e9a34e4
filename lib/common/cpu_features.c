/* SPDX-License-Identifier: MIT */
/* cpu_features.c - the feature word, detected once per process (per-ISA zn_cpu_detect) and cached
 * with C11 atomics; in test builds, ZN_DISABLE_CPU_FEATURES masks features by name. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_features.h"

unsigned zn_cpu_count(void)
{
	cpu_set_t set;
	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

#if !defined(__x86_64__) && !defined(__aarch64__)
uint32_t zn_cpu_detect(void)
{
	return ZN_CPU_DETECTED; /* no kernels beyond the portable ones */
}
#endif

#ifdef ZN_TEST_HOOKS
static uint32_t masked(uint32_t f)
{
	const char *env = getenv("ZN_DISABLE_CPU_FEATURES");
	if (!env || !*env)
		return f;
	static const struct {
		const char *name;
		uint32_t bits;
	} names[] = {
	        {"avx512", ZN_CPU_AVX512F | ZN_CPU_AVX512BW | ZN_CPU_AVX512VL | ZN_CPU_AVX512VBMI},
	        {"avx2", ZN_CPU_AVX2},
	        {"avx", ZN_CPU_AVX | ZN_CPU_AVX2 | ZN_CPU_VPCLMUL},
	        {"bmi2", ZN_CPU_BMI2},
	        {"pclmul", ZN_CPU_PCLMUL | ZN_CPU_VPCLMUL | ZN_CPU_PMULL},
	        {"vpclmul", ZN_CPU_VPCLMUL},
	        {"ssse3", ZN_CPU_SSSE3},
	        {"sse4", ZN_CPU_SSE4_1},
	        {"sha", ZN_CPU_SHA},
	        {"neon", ZN_CPU_NEON | ZN_CPU_PMULL},
	        {"pmull", ZN_CPU_PMULL},
	        {"crc32", ZN_CPU_ARM_CRC32},
	        {"all", ~(ZN_CPU_SSE2 | ZN_CPU_DETECTED)},
	};
	char buf[256];
	strncpy(buf, env, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i].name))
				f &= ~names[i].bits;
	/* Dependent features go with what they need. */
	if (!(f & ZN_CPU_AVX2))
		f &= ~(ZN_CPU_AVX512F | ZN_CPU_AVX512BW | ZN_CPU_AVX512VL | ZN_CPU_AVX512VBMI);
	return f;
}
#else
#define masked(f) (f)
#endif

uint32_t zn_cpu_features(void)
{
	/* 0 means "not yet known": zn_cpu_detect() always sets ZN_CPU_DETECTED. Racing first
	 * callers compute the same value; relaxed atomics make that well-defined. */
	static _Atomic uint32_t cached;
	uint32_t f = atomic_load_explicit(&cached, memory_order_relaxed);
	if (__builtin_expect(f != 0, 1))
		return f;
	f = masked(zn_cpu_detect() | ZN_CPU_DETECTED);
	atomic_store_explicit(&cached, f, memory_order_relaxed);
	return f;
}
