/* SPDX-License-Identifier: MIT */
/* archive_plan.c - the extraction plan: the pieces of files each data block holds. */
#include <stdlib.h>

#include "archive_extract.h"

/* ------------------------------------------------------------------------------------------------
 * The plan: segments per block
 * ---------------------------------------------------------------------------------------------- */

/* Pieces of one block by offset, then length; pieces of spanning files first among equals. */
static int cmp_pieces(const void *a, const void *b, void *ctx)
{
	const struct xseg *x = a, *y = b;
	const uint64_t *pieces = ctx;
	if (x->boff != y->boff)
		return x->boff < y->boff ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if ((pieces[x->entry] > 1) != (pieces[y->entry] > 1))
		return pieces[x->entry] > 1 ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static zn_result overlap(struct xjob *j)
{
	if (j->problem)
		j->problem(j->ctx, "(index)", ZN_ERR_CORRUPT,
		           "index damaged: files overlap in the data blocks");
	return ZN_ERR_CORRUPT;
}

static int same_extent(const struct xent *a, const struct xent *b)
{
	return a->first_block == b->first_block && a->block_offset == b->block_offset &&
	       a->size == b->size;
}

/* Entry i shares the extent of p, a file spanning blocks that holds the pieces. */
static zn_result add_copy(struct xjob *j, uint64_t i, uint64_t p)
{
	if (!j->copy_next) {
		j->copy_next = calloc(j->n, sizeof(uint64_t));
		j->primary_of = calloc(j->n, sizeof(uint64_t));
		j->bytes_bad = calloc(j->n, 1);
		if (!j->copy_next || !j->primary_of || !j->bytes_bad)
			return ZN_ERR_NOMEM;
	}
	j->copy_next[i] = j->copy_next[p];
	j->copy_next[p] = i + 1;
	j->primary_of[i] = p + 1;
	j->pieces[i] = j->pieces[p];
	return ZN_OK;
}

/* The last block of a file's extent, by binary search in the prefix sums of the blocks' sizes
 * (cum[b]: bytes before block b; zeros[b]: empty blocks before b); -1 if the extent leaves the
 * blocks or crosses an empty one. */
static int extent_end(const uint64_t *cum, const uint64_t *zeros, uint64_t nb, const struct xent *e,
                      uint64_t *last)
{
	uint64_t fb = e->first_block;
	if (fb >= nb || e->block_offset >= cum[fb + 1] - cum[fb])
		return -1;
	uint64_t start = cum[fb] + e->block_offset;
	if (e->size > cum[nb] - start)
		return -1;
	uint64_t end = start + e->size, lo = fb, hi = nb - 1; /* first b with cum[b + 1] >= end */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (cum[mid + 1] >= end)
			hi = mid;
		else
			lo = mid + 1;
	}
	*last = lo;
	return zeros[lo + 1] - zeros[fb] ? -1 : 0;
}

zn_result build_plan(struct xjob *j)
{
	struct zn_reader *r = j->r;
	uint64_t nb = r->nblocks;
	uint64_t *usize = malloc((nb ? nb : 1) * sizeof(uint64_t));
	j->bstart = calloc(nb + 2, sizeof(uint64_t));
	if (!usize || !j->bstart) {
		free(usize);
		return ZN_ERR_NOMEM;
	}
	uint64_t *cum = calloc(nb + 1, sizeof(uint64_t)), *zeros = calloc(nb + 1, sizeof(uint64_t));
	uint64_t *span_at = calloc(nb ? nb : 1, sizeof(uint64_t)); /* spanning file from b + 1 */
	zn_result res = cum && zeros && span_at ? ZN_OK : ZN_ERR_NOMEM;
	for (uint64_t b = 0; res == ZN_OK && b <= nb; b++) {
		struct zn_blockinfo bi;
		if (b < nb)
			usize[b] = zn_block_info(r, b, &bi) == ZN_OK ? bi.usize : 0;
		cum[b] = b ? cum[b - 1] + usize[b - 1] : 0;
		zeros[b] = b ? zeros[b - 1] + !usize[b - 1] : 0;
	}
	/* Pass 1: check every file's extent and count pieces per block. A file with the extent
	 * of a spanning file met before is a copy of it (two different spanning files starting in
	 * the same block overlap, which is refused below). */
	uint64_t total = 0;
	for (uint64_t i = 0; res == ZN_OK && i < j->n; i++) {
		struct xent *e = &j->ents[i];
		if (get_status(j, i) != ST_OK || e->type != ZN_TYPE_FILE || !e->size)
			continue;
		uint64_t fb = e->first_block, last;
		if (fb < nb && span_at[fb] && same_extent(&j->ents[span_at[fb] - 1], e)) {
			res = add_copy(j, i, span_at[fb] - 1);
			continue;
		}
		if (extent_end(cum, zeros, nb, e, &last)) {
			set_status(j, i, ST_DAMAGED);
			xreport(j, e, ZN_ERR_CORRUPT,
			        "index describes content outside the data blocks");
			continue;
		}
		j->pieces[i] = last - fb + 1;
		if (last > fb && !span_at[fb])
			span_at[fb] = i + 1;
		for (uint64_t x = fb; x <= last; x++)
			j->bstart[x + 1]++;
		total += j->pieces[i];
		/* Distinct files spanning blocks share no bytes (files of the same extent are
		 * one set of pieces), so pieces number at most files + blocks (files within one
		 * block, which may share bytes, are one piece each). A crafted index whose extents
		 * overlap would otherwise make the plan grow as files x blocks; any overlap left
		 * is refused once the pieces are in order, below. */
		if (total > j->n + nb)
			res = overlap(j);
	}
	free(cum);
	free(zeros);
	free(span_at);
	if (res != ZN_OK) {
		free(usize);
		return res;
	}
	for (uint64_t b = 0; b < nb; b++)
		j->bstart[b + 1] += j->bstart[b];
	j->segs = malloc((total ? total : 1) * sizeof(*j->segs));
	uint64_t *fill = malloc((nb ? nb : 1) * sizeof(uint64_t));
	j->work = malloc((nb ? nb : 1) * sizeof(uint64_t));
	j->span_idx = malloc((nb ? nb : 1) * sizeof(int64_t));
	if (!j->segs || !fill || !j->work || !j->span_idx) {
		free(fill);
		free(usize);
		return ZN_ERR_NOMEM;
	}
	memcpy(fill, j->bstart, nb * sizeof(uint64_t));
	/* Pass 2: fill, in entry order within each block. */
	for (uint64_t i = 0; i < j->n; i++) {
		struct xent *e = &j->ents[i];
		if (get_status(j, i) != ST_OK || e->type != ZN_TYPE_FILE || !e->size ||
		    (j->primary_of && j->primary_of[i]))
			continue;
		uint64_t left = e->size, off = e->block_offset, b = e->first_block, foff = 0;
		while (left) {
			uint64_t take = ZN_MIN(left, usize[b] - off);
			struct xseg *s = &j->segs[fill[b]++];
			s->entry = i;
			s->boff = off;
			s->len = take;
			s->foff = foff;
			s->first = foff == 0;
			s->last = take == left;
			foff += take;
			left -= take;
			off = 0;
			b++;
		}
	}
	free(fill);
	free(usize);
	/* Within each block, pieces in offset order; they must be disjoint, but for files within
	 * one block with the very same extent (identical files stored once). Then a block's
	 * distinct bytes are hashed once however many rows share them (see hash_piece), and a
	 * crafted index cannot make verification hash more than the blocks hold. */
	for (uint64_t b = 0; b < nb; b++) {
		struct xseg *g = j->segs + j->bstart[b];
		uint64_t m = j->bstart[b + 1] - j->bstart[b], end = 0;
		qsort_r(g, m, sizeof(*g), cmp_pieces, j->pieces);
		for (uint64_t k = 0; k < m; k++) {
			int same = k && g[k].boff == g[k - 1].boff && g[k].len == g[k - 1].len &&
			           j->pieces[g[k].entry] == 1 && j->pieces[g[k - 1].entry] == 1;
			if (g[k].boff < end && !same)
				return overlap(j);
			end = ZN_MAX(end, g[k].boff + g[k].len);
		}
	}
	int64_t span = 0;
	for (uint64_t b = 0; b < nb; b++) {
		j->span_idx[b] = -1;
		if (j->bstart[b + 1] == j->bstart[b])
			continue;
		j->work[j->nwork++] = b;
		for (uint64_t s = j->bstart[b]; s < j->bstart[b + 1]; s++)
			if (j->pieces[j->segs[s].entry] > 1) {
				j->span_idx[b] = span++;
				break;
			}
	}
	return ZN_OK;
}
