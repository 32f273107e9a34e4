/* SPDX-License-Identifier: MIT */
/* zstd_kernels_generic.c - the portable zstd kernels: 8-byte word copies, plain C. */
#include "common/match_copy.h"
#include "zstd_internal.h"

/* Literals: 16 bytes, then 16 at a time (reads and writes up to 15 bytes past n). */
static ZN_FORCEINLINE void wild_words(uint8_t *d, const uint8_t *s, size_t n)
{
	zn_put_le64(d, zn_get_le64(s));
	zn_put_le64(d + 8, zn_get_le64(s + 8));
	for (size_t i = 16; i < n; i += 16) {
		zn_put_le64(d + i, zn_get_le64(s + i));
		zn_put_le64(d + i + 8, zn_get_le64(s + i + 8));
	}
}

#define ZS_NAME               seq_generic
#define ZS_ATTR               /* none */
#define ZS_COPY(op, off, len) copy_words(op, off, len)
#define ZS_WILDCOPY(d, s, n)  wild_words(d, s, n)
#define ZS_BZHI(x, n)         ((x) & ((1ull << (n)) - 1))
#include "zstd_seq_template.h"

#define ZH_NAME huf4_generic
#define ZH_ATTR /* none */
#include "zstd_huf_template.h"

#define ZH_NAME huf4x2_generic
#define ZH_ATTR /* none */
#define ZH_TWO  1
#include "zstd_huf_template.h"

void zn_zstd_generic_kernels(struct zs_kernels *k)
{
	k->seq = seq_generic;
	k->huf4 = huf4_generic;
	k->huf4x2 = huf4x2_generic;
	k->name = "generic";
}

#if !defined(__x86_64__) && !defined(__aarch64__)
void zn_zstd_select_kernels(uint32_t f, struct zs_kernels *k)
{
	(void)f;
	zn_zstd_generic_kernels(k);
}
#endif
