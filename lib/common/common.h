/* SPDX-License-Identifier: MIT */
/* common.h - internal types, compiler macros, error plumbing and little-endian helpers. */
#ifndef ZN_COMMON_H
#define ZN_COMMON_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "znippy.h"

#define likely(x)       __builtin_expect(!!(x), 1)
#define unlikely(x)     __builtin_expect(!!(x), 0)
#define ZN_NOINLINE     __attribute__((noinline))
#define ZN_FORCEINLINE  inline __attribute__((always_inline))
#define ZN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define ZN_MIN(a, b)    ((a) < (b) ? (a) : (b))
#define ZN_MAX(a, b)    ((a) > (b) ? (a) : (b))

/* The most bytes one write()/pwrite() of file data moves. On the development VM's ext4 a
 * 500 MB file written in 1-2 MiB calls costs 1.3-3.8 s of system time, in 64-256 KiB calls
 * 0.3-0.7 s (dd shows the same): page-cache writes are cheaper in pieces of this size. */
#define ZN_WRITE_PIECE ((uint64_t)128 << 10)

/* Debug assertions: compiled in for tests and sanitizer builds (ZN_DEBUG), out of Release. */
#ifdef ZN_DEBUG
#include <assert.h>
#define ZN_ASSERT(cond) assert(cond)
#else
#define ZN_ASSERT(cond) ((void)0)
#endif

/* Forward an error from internal plumbing. */
#define RETURN_IF_ERROR(expr)                                                                      \
	do {                                                                                       \
		zn_result r_ = (expr);                                                             \
		if (unlikely(r_ != ZN_OK))                                                         \
			return r_;                                                                 \
	} while (0)

/* Every check on untrusted input goes through this: `cond` must hold or `err` is returned. */
#define SAFETY_CHECK(cond, err)                                                                    \
	do {                                                                                       \
		if (unlikely(!(cond)))                                                             \
			return (err);                                                              \
	} while (0)

static inline uint16_t zn_get_le16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v; /* GNU/Linux targets here are little-endian; checked in common.c */
}
static inline uint32_t zn_get_le32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline uint64_t zn_get_le64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static inline void zn_put_le16(void *p, uint16_t v)
{
	memcpy(p, &v, 2);
}
static inline void zn_put_le32(void *p, uint32_t v)
{
	memcpy(p, &v, 4);
}
static inline void zn_put_le64(void *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "znippy currently supports little-endian targets only"
#endif

#endif /* ZN_COMMON_H */
