/* SPDX-License-Identifier: MIT */
/* pkg_internal.h - package detection over a view of a file's bytes, for the archive writer. */
#ifndef ZN_PKG_INTERNAL_H
#define ZN_PKG_INTERNAL_H

#include <stdint.h>

#include "common/common.h"

/* What a detector sees of a file of `size` bytes: [0, head_len) at head and [tail_off, size) at
 * tail. A file wholly in memory is all head (tail NULL). The writer keeps the start and the end
 * of a package file larger than a block: a ZIP's directory is at its end, a tar.gz is read from
 * its start. */
struct pkg_view {
	const uint8_t *head;
	uint64_t head_len;
	const uint8_t *tail;
	uint64_t tail_off;
	uint64_t size;
};

/* Bytes of a large package file's start and end that the writer keeps (pkg_view). */
#define PKG_HEAD_MAX ((uint64_t)256 << 10)
#define PKG_TAIL_MAX ((uint64_t)256 << 10)

/* A detector's reusable state: one per thread, zeroed before first use. */
struct pkg_work {
	struct zn_inflater *raw, *gz;
	uint8_t *buf; /* the metadata member */
	size_t cap;
};
void pkg_work_release(struct pkg_work *w);

/* The coordinates of the package file at `path` (of kind zn_pkg_file_kind(path)) from its bytes
 * in *v: its metadata member's, else its path's (zn_pkg_from_path). ZN_OK with out->type set, or
 * ZN_ERR_NOT_FOUND with *out empty; ZN_ERR_NOMEM only when w's buffers cannot be had. */
zn_result pkg_detect_view(struct pkg_work *w, int kind, const char *path, size_t len,
                          const struct pkg_view *v, struct zn_pkg_coord *out);

#endif
