/* SPDX-License-Identifier: MIT */
/* adler32.c - Adler-32 (RFC 1950): portable loop, SIMD dispatch and combine.
 *
 * Adler-32 keeps s1 = 1 + sum of bytes and s2 = sum of the successive s1 values, both mod 65521.
 * Kernels work on (s2 << 16 | s1) with both sums reduced. The portable loop defers the modulo
 * over ADLER32_NMAX bytes, the most for which s2 cannot overflow 32 bits; the SIMD kernels
 * (lib/x86/adler32_template.h) sum whole vectors with weights and reduce once per block.
 * Dispatch works as for CRC-32 (see crc32.c): resolved on the first call into an atomic pointer.
 */
#include <stdatomic.h>

#include "common/common.h"
#include "common/cpu_features.h"
#include "checksum.h"

#define ADLER32_MOD 65521u
/* Largest n with 255 * n * (n + 1) / 2 + (n + 1) * (ADLER32_MOD - 1) < 2^32 (zlib's NMAX). */
#define ADLER32_NMAX 5552

static uint32_t adler32_generic(uint32_t adler, const uint8_t *p, size_t len)
{
	uint32_t s1 = adler & 0xffff, s2 = adler >> 16;
	while (len) {
		size_t n = ZN_MIN(len, (size_t)ADLER32_NMAX);
		len -= n;
		/* Unrolled by 8: the s1 -> s2 chain is serial anyway, unrolling only saves the loop
		 * overhead (about 1.3x with gcc 12 at -O2). */
		for (; n >= 8; n -= 8, p += 8) {
			s1 += p[0], s2 += s1;
			s1 += p[1], s2 += s1;
			s1 += p[2], s2 += s1;
			s1 += p[3], s2 += s1;
			s1 += p[4], s2 += s1;
			s1 += p[5], s2 += s1;
			s1 += p[6], s2 += s1;
			s1 += p[7], s2 += s1;
		}
		for (; n; n--)
			s1 += *p++, s2 += s1;
		s1 %= ADLER32_MOD;
		s2 %= ADLER32_MOD;
	}
	return (s2 << 16) | s1;
}

#if defined(__x86_64__)
#include "x86/adler32_impl.h"
#endif

/* clang-format off */
static const struct zn_adler32_variant adler32_variants[] = {
#ifdef ADLER32_ARCH_VARIANTS
	ADLER32_ARCH_VARIANTS
#endif
	{"generic", 0, adler32_generic},
};
/* clang-format on */

size_t zn_adler32_variants(const struct zn_adler32_variant **list)
{
	*list = adler32_variants;
	return ZN_ARRAY_LEN(adler32_variants);
}

static zn_adler32_fn select_adler32(void)
{
	uint32_t f = zn_cpu_features();
	for (size_t i = 0; i < ZN_ARRAY_LEN(adler32_variants); i++)
		if ((adler32_variants[i].features & f) == adler32_variants[i].features)
			return adler32_variants[i].fn;
	return adler32_generic;
}

static uint32_t adler32_resolve(uint32_t adler, const uint8_t *p, size_t len);
static _Atomic(zn_adler32_fn) adler32_impl = adler32_resolve;

static uint32_t adler32_resolve(uint32_t adler, const uint8_t *p, size_t len)
{
	zn_adler32_fn f = select_adler32();
	atomic_store_explicit(&adler32_impl, f, memory_order_relaxed);
	return f(adler, p, len);
}

uint32_t zn_adler32(uint32_t adler, const void *buf, size_t len)
{
	if (!buf)
		return 1;
	zn_adler32_fn f = atomic_load_explicit(&adler32_impl, memory_order_relaxed);
	return f(adler, buf, len);
}

/* With B starting from s1 = 1: s1(AB) = s1(A) + s1(B) - 1 and
 * s2(AB) = s2(A) + s2(B) + len2 * (s1(A) - 1), all mod 65521. */
uint32_t zn_adler32_combine(uint32_t adler1, uint32_t adler2, uint64_t len2)
{
	uint64_t m = ADLER32_MOD, r = len2 % m;
	uint64_t s1a = (adler1 & 0xffff) % m, s2a = (adler1 >> 16) % m;
	uint64_t s1b = (adler2 & 0xffff) % m, s2b = (adler2 >> 16) % m;
	uint64_t s1 = (s1a + s1b + m - 1) % m;
	uint64_t s2 = (s2a + s2b + r * ((s1a + m - 1) % m)) % m;
	return (uint32_t)((s2 << 16) | s1);
}
