/* SPDX-License-Identifier: MIT */
/* big_alloc.c - block-sized buffers on transparent huge pages (see big_alloc.h). */
#include <stdint.h>
#include <sys/mman.h>

#include "big_alloc.h"

#define HUGE (2u << 20)

void *zn_big_alloc(size_t n)
{
	if (n < HUGE) {
		void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		               -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	/* Over-allocate by one huge page, then trim to an aligned range of exactly n bytes. */
	size_t len = n + HUGE;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uintptr_t a = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
	size_t head = a - (uintptr_t)p, tail = len - head - n;
	if (head)
		munmap(p, head);
	if (tail)
		munmap((uint8_t *)a + n, tail);
#ifdef MADV_HUGEPAGE
	madvise((void *)a, n, MADV_HUGEPAGE);
#endif
	return (void *)a;
}

size_t zn_big_round(size_t n)
{
	return n >= HUGE / 2 ? (n + HUGE - 1) / HUGE * HUGE : n;
}

void zn_big_free(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}
