/* SPDX-License-Identifier: MIT */
/* zstd_dict.c - dictionaries: raw content, or the zstd dictionary format (RFC 8878 5) with its
 * entropy tables and repeat offsets, parsed once when loaded. */
#include <stdlib.h>

#include "zstd_internal.h"

/* The entropy tables of a formatted dictionary: Huffman for literals, then FSE for offsets,
 * match lengths and literal lengths, then three repeat offsets. */
static zn_result parse_entropy(struct zs_dict *d, const uint8_t *p, const uint8_t *end,
                               const uint8_t **content)
{
	struct zs_entropy *e = &d->ent;
	struct zs_tables *t = &d->tables;
	size_t used;
	RETURN_IF_ERROR(zs_read_huffman_tree(p, (size_t)(end - p), t->huf, &used));
	p += used;
	RETURN_IF_ERROR(zs_read_seq_table(p, (size_t)(end - p), t->of, &e->of_log, ZS_OF_MAX,
	                                  ZS_OF_LOG_MAX, NULL, NULL, &used));
	p += used;
	RETURN_IF_ERROR(zs_read_seq_table(p, (size_t)(end - p), t->ml, &e->ml_log, ZS_ML_MAX,
	                                  ZS_ML_LOG_MAX, zs_ml_base, zs_ml_bits, &used));
	p += used;
	RETURN_IF_ERROR(zs_read_seq_table(p, (size_t)(end - p), t->ll, &e->ll_log, ZS_LL_MAX,
	                                  ZS_LL_LOG_MAX, zs_ll_base, zs_ll_bits, &used));
	p += used;
	SAFETY_CHECK(end - p >= 12, ZN_ERR_CORRUPT);
	size_t content_len = (size_t)(end - p) - 12;
	for (int i = 0; i < 3; i++) {
		e->rep[i] = zn_get_le32(p + 4 * i);
		SAFETY_CHECK(e->rep[i] != 0 && e->rep[i] <= content_len, ZN_ERR_CORRUPT);
	}
	e->huf = t->huf;
	e->ll = t->ll;
	e->of = t->of;
	e->ml = t->ml;
	*content = p + 12;
	return ZN_OK;
}

zn_result zs_dict_load(struct zs_dict **out, const void *dict, size_t len)
{
	*out = NULL;
	struct zs_dict *d = calloc(1, sizeof(*d));
	SAFETY_CHECK(d, ZN_ERR_NOMEM);
	const uint8_t *p = dict, *content = p;
	if (len >= 8 && zn_get_le32(p) == ZS_DICT_MAGIC) {
		d->id = zn_get_le32(p + 4);
		d->has_entropy = 1;
		zn_result r = parse_entropy(d, p + 8, p + len, &content);
		if (r != ZN_OK) {
			free(d);
			return r;
		}
	}
	d->content_len = len - (size_t)(content - p);
	d->content = malloc(d->content_len ? d->content_len : 1);
	if (!d->content) {
		free(d);
		return ZN_ERR_NOMEM;
	}
	memcpy(d->content, content, d->content_len);
	*out = d;
	return ZN_OK;
}

void zs_dict_free(struct zs_dict *d)
{
	if (d) {
		free(d->content);
		free(d);
	}
}

uint32_t zn_zstd_dictionary_id(const void *dict, size_t len)
{
	const uint8_t *p = dict;
	return len >= 8 && zn_get_le32(p) == ZS_DICT_MAGIC ? zn_get_le32(p + 4) : 0;
}
