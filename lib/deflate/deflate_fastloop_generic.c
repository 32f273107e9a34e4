/* SPDX-License-Identifier: MIT */
/* deflate_fastloop_generic.c - the portable fast loop: 8-byte word match copies, plain C. */
#include "common/match_copy.h"
#include "deflate_internal.h"

#define FL_NAME              zn_fastloop_generic_impl
#define FL_ATTR              /* none */
#define FL_COPY(o, off, len) copy_words(o, off, len)
#define FL_EXTRA(bits, e)    (((bits) & ((1ull << ((e)&0xff)) - 1)) >> (((e) >> 8) & 63))
#include "deflate_fastloop.h"

int zn_fastloop_generic(struct zn_fast_ctx *c)
{
	return zn_fastloop_generic_impl(c);
}

#if !defined(__x86_64__) && !defined(__aarch64__)
zn_fastloop_fn zn_select_fastloop(uint32_t features, const char **name)
{
	(void)features;
	if (name)
		*name = "generic";
	return zn_fastloop_generic;
}

zn_pair_fn zn_select_pair(uint32_t features)
{
	(void)features;
	return zn_pair_literals_generic;
}

zn_resolve_fn zn_select_resolve(uint32_t features)
{
	(void)features;
	return zn_resolve_generic;
}
#endif
