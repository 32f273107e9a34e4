/* SPDX-License-Identifier: MIT */
/* archive_digest.c - a file's SHA-256, from the index or, where it holds none, from the content.
 *
 * A version 2 archive stores no digest for files smaller than its digest_min_size (an all-zero
 * row, see docs/FORMAT.md): for 200,000 files of 40 bytes the 32 bytes each were 6.4 of the
 * archive's 12.8 MB. Their content is still covered by the blocks' XXH3 checksums, which every
 * read checks, so the digest computed here from the bytes read is the file's.
 */
#include "common/sha256.h"

#include "archive_internal.h"

static zn_result hash_sink(void *ctx, const void *data, size_t len)
{
	SHA256_Update(ctx, data, len);
	return ZN_OK;
}

uint64_t zn_reader_digest_min_size(const struct zn_reader *r)
{
	return r ? r->digest_min_size : 0;
}

zn_result zn_reader_digest(struct zn_reader *r, uint64_t i, uint8_t out[32])
{
	if (!r || !out || i >= r->nentries)
		return ZN_ERR_INVALID_ARG;
	struct zn_entry e;
	const uint8_t *sha = NULL;
	unsigned lost = 0;
	RETURN_IF_ERROR(zn_entry_fields(r, i, &e, &sha, &lost));
	if (e.type == ZN_TYPE_HARDLINK) {
		/* Its target's: a hardlink's own row holds no digest. */
		uint64_t t;
		RETURN_IF_ERROR(zn_reader_find(r, e.link, e.link_len, &t));
		RETURN_IF_ERROR(zn_entry_fields(r, t, &e, &sha, &lost));
		SAFETY_CHECK(e.type == ZN_TYPE_FILE, ZN_ERR_CORRUPT);
	}
	if (e.type != ZN_TYPE_FILE)
		return ZN_ERR_INVALID_ARG;
	/* A digest the index should hold but lost to a damaged page is not made up from the
	 * content: what the index says the file is cannot be told any more. */
	SAFETY_CHECK(!(lost & ZN_LOST_DIGEST), ZN_ERR_CORRUPT);
	if (sha) {
		memcpy(out, sha, 32);
		return ZN_OK;
	}
	SHA256_CTX c;
	SHA256_Init(&c);
	RETURN_IF_ERROR(zn_reader_read_entry(r, i, hash_sink, &c));
	SHA256_Final(out, &c);
	return ZN_OK;
}
