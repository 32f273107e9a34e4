/* cpu_features.c - aarch64 feature detection from the kernel's HWCAP bits, cached once. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "cpu_features.h"

/* Linux's HWCAP bits for aarch64 (asm/hwcap.h), spelled out so no kernel header is needed. */
#define HWCAP_ASIMD_ (1ul << 1)
#define HWCAP_PMULL_ (1ul << 4)
#define HWCAP_CRC32_ (1ul << 7)

static uint32_t detect(void)
{
	uint32_t f = 0;
#if defined(__linux__)
	unsigned long hw = getauxval(AT_HWCAP);
	if (hw & HWCAP_ASIMD_)
		f |= ZN_CPU_NEON;
	if (hw & HWCAP_PMULL_)
		f |= ZN_CPU_PMULL;
	if (hw & HWCAP_CRC32_)
		f |= ZN_CPU_ARM_CRC32;
#else
	f |= ZN_CPU_NEON; /* baseline of aarch64 */
#endif
	return f | (1u << 31); /* never 0, so 0 can mean "not yet known" */
}

#ifdef ZN_TEST_HOOKS
static uint32_t masked(uint32_t f)
{
	const char *env = getenv("ZN_DISABLE_CPU_FEATURES");
	if (!env || !*env)
		return f;
	char buf[256];
	strncpy(buf, env, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "neon") || !strcmp(tok, "all"))
			f &= ~(ZN_CPU_NEON | ZN_CPU_PMULL);
		if (!strcmp(tok, "pmull") || !strcmp(tok, "pclmul") || !strcmp(tok, "all"))
			f &= ~ZN_CPU_PMULL;
		if (!strcmp(tok, "crc32") || !strcmp(tok, "all"))
			f &= ~ZN_CPU_ARM_CRC32;
	}
	return f;
}
#else
#define masked(f) (f)
#endif

uint32_t zn_cpu_features(void)
{
	static _Atomic uint32_t cached;
	uint32_t f = atomic_load_explicit(&cached, memory_order_relaxed);
	if (__builtin_expect(f != 0, 1))
		return f;
	f = masked(detect());
	atomic_store_explicit(&cached, f, memory_order_relaxed);
	return f;
}
