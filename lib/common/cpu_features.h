/* SPDX-License-Identifier: MIT */
/* cpu_features.h - CPU feature detection, resolved once per process. */
#ifndef ZN_CPU_FEATURES_H
#define ZN_CPU_FEATURES_H

#include <stdint.h>

#define ZN_CPU_SSE2       (1u << 0)
#define ZN_CPU_SSSE3      (1u << 1)
#define ZN_CPU_SSE4_1     (1u << 2)
#define ZN_CPU_PCLMUL     (1u << 3)
#define ZN_CPU_AVX        (1u << 4)
#define ZN_CPU_AVX2       (1u << 5)
#define ZN_CPU_BMI2       (1u << 6)
#define ZN_CPU_AVX512F    (1u << 7)
#define ZN_CPU_AVX512BW   (1u << 8)
#define ZN_CPU_AVX512VL   (1u << 9)
#define ZN_CPU_VPCLMUL    (1u << 10)
#define ZN_CPU_AVX512VBMI (1u << 11)
#define ZN_CPU_SHA        (1u << 12)
#define ZN_CPU_NEON       (1u << 16)
#define ZN_CPU_PMULL      (1u << 17)
#define ZN_CPU_ARM_CRC32  (1u << 18)
#define ZN_CPU_DETECTED   (1u << 31) /* always set once detection ran */

/* The features of this CPU that the OS also supports (AVX state enabled via XGETBV), read once
 * and cached with C11 atomics. With ZN_TEST_HOOKS, the environment variable
 * ZN_DISABLE_CPU_FEATURES (comma-separated: avx512,avx2,bmi2,pclmul,vpclmul,ssse3,sse4,sha,
 * neon,pmull,crc32 or "all") masks features so tests can force every variant. */
uint32_t zn_cpu_features(void);

/* The raw features of this CPU and OS, per ISA (lib/x86, lib/arm); called once by the above. */
uint32_t zn_cpu_detect(void);

/* How many CPUs this process may run on (its affinity mask, as nproc counts: a container or
 * taskset limited to 2 of a host's 64 gets 2); the online CPUs if that cannot be read; at least
 * 1. The default thread count of the archive writer and extractor. */
unsigned zn_cpu_count(void);

#endif
