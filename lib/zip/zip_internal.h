/* SPDX-License-Identifier: MIT */
/* zip_internal.h - the ZIP reader's entry table, shared by zip_read.c, zip_decode.c and
 * zip_extract.c. */
#ifndef ZN_ZIP_INTERNAL_H
#define ZN_ZIP_INTERNAL_H

#include <stdint.h>

#include "common/common.h"

/* One central-directory entry, checked against its local header at open. Names point into the
 * archive. Set once by zn_zip_open_*, read-only after. */
struct zip_ent {
	const uint8_t *name;   /* the Unicode path field's name when it matches, else the stored */
	const uint8_t *stored; /* the name as stored, which the local header repeats */
	uint64_t size, csize;
	uint64_t local; /* local header's offset in the input (prefix included) */
	uint64_t data;  /* compressed data's offset in the input */
	int64_t mtime;
	uint32_t name_len, stored_len;
	uint32_t crc;
	uint32_t mode; /* full st_mode: type and permission bits */
	uint16_t method, flags;
	uint8_t unix_mode;
	uint8_t shadowed;
	uint8_t damage;      /* enum zn_result found at open (local header), 0 if none */
	uint8_t damage_kind; /* index into the messages of zip_read.c */
};

struct zn_zip {
	const uint8_t *base; /* the input */
	uint64_t len;
	void *map; /* non-NULL when zn_zip_open_fd mapped the input (len bytes) */
	struct zip_ent *ents;
	uint64_t count;
	uint64_t *by_name; /* entry indices sorted by name (then index), for zn_zip_find */
	const uint8_t *comment;
	uint32_t comment_len;
	uint64_t prefix; /* bytes before the archive that its offsets do not count */
};

#define ZIP_METHOD_STORE    0
#define ZIP_METHOD_DEFLATE  8
#define ZIP_METHOD_BZIP2    12
#define ZIP_METHOD_ZSTD     93
#define ZIP_FLAG_ENCRYPTED  1u
#define ZIP_FLAG_DESCRIPTOR 8u
#define ZIP_FLAG_STRONG_ENC 64u

/* Whether the read calls can decode entry e. */
static inline int zip_supported(const struct zip_ent *e)
{
	return !(e->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENC)) &&
	       (e->method == ZIP_METHOD_STORE || e->method == ZIP_METHOD_DEFLATE ||
	        e->method == ZIP_METHOD_BZIP2 || e->method == ZIP_METHOD_ZSTD);
}

/* A decoder's reusable state: one per thread. */
struct zip_work {
	struct zn_inflater *inf;
	struct zn_zstd_decoder *zd;
	uint8_t *buf; /* whole-entry output for small deflate and zstd entries */
	size_t buf_cap;
};
void zn_zip_work_release(struct zip_work *w);
/* Decode entry i to sink (see zn_zip_read), with w's decoder and buffer. */
zn_result zn_zip_decode(const struct zn_zip *z, uint64_t i, struct zip_work *w, zn_sink_fn sink,
                        void *ctx);
/* "unsupported compression method 9 (Deflate64)" or "encrypted" for an entry zip_supported
 * refuses, in out[96]. */
void zn_zip_unsupported_message(const struct zip_ent *e, char out[96]);

#endif
