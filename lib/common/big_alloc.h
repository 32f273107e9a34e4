/* SPDX-License-Identifier: MIT */
/* big_alloc.h - block-sized buffers backed by transparent huge pages where the kernel allows. */
#ifndef ZN_BIG_ALLOC_H
#define ZN_BIG_ALLOC_H

#include <stddef.h>

/* A buffer of n bytes, aligned to 2 MiB when n is at least that, with the kernel asked for huge
 * pages (MADV_HUGEPAGE). A fresh 4 MiB buffer otherwise costs 1024 page faults the first time it
 * is written (about 2 ms here), which dominates reading one file out of an archive. NULL when out
 * of memory. */
void *zn_big_alloc(size_t n);
/* n rounded up to whole huge pages from half a huge page (1 MiB) up, else n: for a buffer that is
 * written once, fresh (a reader's block cache), where one huge page fault is cheaper than 256 or
 * more small ones, and the memory it adds is at most as much again. */
size_t zn_big_round(size_t n);
/* Free a buffer from zn_big_alloc() of the same n. NULL is allowed. */
void zn_big_free(void *p, size_t n);

#endif
