/* SPDX-License-Identifier: MIT */
/* sized.h - structs the caller allocates, by the size it declares them (znippy.h, Conventions).
 *
 * Each sized struct starts with `size_t struct_size`. A library built against a newer header
 * than the caller's reads and writes only the caller's struct_size bytes; one built against an
 * older header reads and writes only its own. A struct_size of 0 stands for the struct's first
 * layout, ZN_FIRST_SIZE(...), below which a size is refused.
 *
 * When a field is added to a sized struct, its first layout stays what it was: the size up to
 * the first field added after 0.5.0, written as offsetof(that field) below.
 */
#ifndef ZN_SIZED_H
#define ZN_SIZED_H

#include <stddef.h>
#include <string.h>

#include "common/common.h"

/* The first layouts (0.5.0). */
#define ZN_FIRST_SIZE_entry           sizeof(struct zn_entry)
#define ZN_FIRST_SIZE_create_options  offsetof(struct zn_create_options, digest_min_size)
#define ZN_FIRST_SIZE_hooks           sizeof(struct zn_hooks)
#define ZN_FIRST_SIZE_write_stats     offsetof(struct zn_write_stats, cpu_read_ns)
#define ZN_FIRST_SIZE_extract_options sizeof(struct zn_extract_options)
#define ZN_FIRST_SIZE_archive_info    sizeof(struct zn_archive_info)
#define ZN_FIRST_SIZE_inflate_info    sizeof(struct zn_inflate_info)
#define ZN_FIRST_SIZE_bunzip2_options sizeof(struct zn_bunzip2_options)
#define ZN_FIRST_SIZE_bunzip2_info    sizeof(struct zn_bunzip2_info)
#define ZN_FIRST_SIZE_pkg_coord       sizeof(struct zn_pkg_coord)
#define ZN_FIRST_SIZE_zstd_info       sizeof(struct zn_zstd_info)
#define ZN_FIRST_SIZE_zstd_frame_info sizeof(struct zn_zstd_frame_info)

/* The ZIP reader's (0.5.0). */
#define ZN_FIRST_SIZE_zip_entry           sizeof(struct zn_zip_entry)
#define ZN_FIRST_SIZE_zip_extract_options sizeof(struct zn_zip_extract_options)

/* The caller's size of the sized struct at p: its struct_size, 0 read as `first`; 0 when it is
 * below `first` (refused). */
static inline size_t zn_sized_len(const void *p, size_t first)
{
	size_t n;
	memcpy(&n, p, sizeof(n));
	if (n == 0)
		n = first;
	return n < first ? 0 : n;
}

/* The caller's struct `src` over `dst`, which holds the library's defaults at its full size
 * `full`: the caller's fields replace the defaults, those it does not know stay. dst's
 * struct_size becomes `full`. 0, or -1 when src's size is refused (dst is left as it was). */
static inline int zn_sized_in(void *dst, size_t full, const void *src, size_t first)
{
	size_t n = zn_sized_len(src, first);
	if (!n)
		return -1;
	memcpy(dst, src, n < full ? n : full);
	memcpy(dst, &full, sizeof(full));
	return 0;
}

/* The library's struct `src` (full size `full`) into the caller's `dst`, as many bytes as the
 * caller's struct has; dst's struct_size stays the caller's. Nothing when it is refused. */
static inline void zn_sized_out(void *dst, const void *src, size_t full, size_t first)
{
	size_t n = zn_sized_len(dst, first);
	if (n < sizeof(size_t))
		return;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       (n < full ? n : full) - sizeof(size_t));
}

#endif
