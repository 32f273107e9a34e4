/* SPDX-License-Identifier: MIT */
/* archive_plan.c - the extraction plan: the pieces of files each data block holds.
 *
 * Extract and verify read each block once and handle every piece of a file in it there, so the
 * plan lists, per block, the pieces in offset order. A file held in one block is one piece, owned
 * by its entry. A file spanning blocks gets a span record (plan_span) and one piece per block,
 * owned by the span; files with the very same extent as a spanning file (identical large files
 * stored once) become its copies, with no pieces of their own. The plan costs 16 bytes per piece
 * and 32 per block, plus 72 per spanning file.
 *
 * A crafted index is refused here rather than trusted: extents that leave the blocks damage their
 * file, and extents that overlap other than by being the same are ZN_ERR_CORRUPT, so that the
 * pieces number at most files + blocks and the bytes hashed never exceed the blocks' bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "archive_extract.h"

/* Pieces of one block by offset, then length; pieces of spanning files first among equals. */
static int cmp_pieces(const void *a, const void *b)
{
	const struct plan_piece *x = a, *y = b;
	if (x->boff != y->boff)
		return x->boff < y->boff ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if ((x->owner & PIECE_SPAN) != (y->owner & PIECE_SPAN))
		return x->owner & PIECE_SPAN ? -1 : 1;
	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

static zn_result overlap(struct job *j)
{
	if (j->problem)
		j->problem(j->ctx, "(index)", ZN_ERR_CORRUPT,
		           "index damaged: files overlap in the data blocks");
	return ZN_ERR_CORRUPT;
}

/* Where a file's bytes lie. */
struct extent {
	uint64_t size, first_block, block_offset;
};

/* Entry i's extent, from the index (the row was read whole once: job_init). */
static int read_extent(struct job *j, uint64_t i, struct extent *x)
{
	const uint8_t *sz = job_col_row(j, j->cols.size, ZN_COL_SIZE, 8, i),
	              *fb = job_col_row(j, j->cols.first_block, ZN_COL_FIRST_BLOCK, 4, i),
	              *bo = job_col_row(j, j->cols.block_offset, ZN_COL_BLOCK_OFFSET, 4, i);
	if (!sz || !fb || !bo)
		return -1;
	*x = (struct extent){zn_get_le64(sz), zn_get_le32(fb), zn_get_le32(bo)};
	return 0;
}

/* The last block of an extent, by binary search in the prefix sums of the blocks' sizes
 * (cum[b]: bytes before block b; zeros[b]: empty blocks before b); -1 if the extent leaves the
 * blocks or crosses an empty one. */
static int extent_end(const uint64_t *cum, const uint64_t *zeros, uint64_t nb,
                      const struct extent *e, uint64_t *last)
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

/* A new span record for entry i; its index, or UINT64_MAX without memory. */
static uint64_t add_span(struct plan *p, uint64_t i, uint64_t size, uint64_t fb, uint64_t last,
                         uint64_t start)
{
	if (p->nspans == p->spans_cap) {
		uint64_t cap = p->spans_cap * 2 + 16;
		struct plan_span *ns = realloc(p->spans, cap * sizeof(*ns));
		if (!ns)
			return UINT64_MAX;
		p->spans = ns;
		p->spans_cap = cap;
	}
	struct plan_span *s = &p->spans[p->nspans];
	memset(s, 0, sizeof(*s));
	s->entry = i;
	s->size = size;
	s->first_block = fb;
	s->last_block = last;
	s->start = start;
	s->out = (struct zn_outfile){-1, -1};
	atomic_init(&s->left, last - fb + 1);
	return p->nspans++;
}

/* Temporary tables of the plan's first pass. */
struct plan_scan {
	uint64_t *zeros;   /* empty blocks before block b */
	uint64_t *span_at; /* the spanning file starting in block b: its span + 1 */
	uint64_t pieces;   /* counted so far */
};

/* Entry i's extent checked, its pieces counted into bstart, and its span made; a file with the
 * extent of a spanning file met before becomes a copy of it (two different spanning files
 * starting in one block overlap, which is refused later). */
static zn_result scan_entry(struct job *j, struct plan_scan *sc, uint64_t i)
{
	struct plan *p = &j->plan;
	const uint64_t nb = p->nblocks;
	struct extent e;
	uint64_t last;
	if (read_extent(j, i, &e) || !e.size)
		return ZN_OK; /* read once already: a page cannot go bad; empty: no pieces */
	uint64_t fb = e.first_block, sp = fb < nb ? sc->span_at[fb] : 0;
	struct extent pe;
	if (sp && !read_extent(j, p->spans[sp - 1].entry, &pe) &&
	    pe.block_offset == e.block_offset && pe.size == e.size) {
		struct plan_span *prim = &p->spans[sp - 1];
		uint64_t c = add_span(p, i, e.size, fb, prim->last_block, prim->start);
		if (c == UINT64_MAX)
			return ZN_ERR_NOMEM;
		prim = &p->spans[sp - 1]; /* add_span may have moved it */
		p->spans[c].primary = sp;
		p->spans[c].next_copy = prim->next_copy;
		prim->next_copy = c + 1;
		j->ents[i].flags |= JE_PLANNED;
		return ZN_OK;
	}
	if (extent_end(p->cum, sc->zeros, nb, &e, &last)) {
		job_set_status(j, i, ST_DAMAGED);
		job_report(j, i, ZN_ERR_CORRUPT, "index describes content outside the data blocks");
		return ZN_OK;
	}
	if (last > fb) {
		uint64_t s = add_span(p, i, e.size, fb, last, p->cum[fb] + e.block_offset);
		if (s == UINT64_MAX)
			return ZN_ERR_NOMEM;
		if (!sc->span_at[fb])
			sc->span_at[fb] = s + 1;
	}
	j->ents[i].flags |= JE_PLANNED;
	for (uint64_t x = fb; x <= last; x++)
		p->bstart[x + 1]++;
	sc->pieces += last - fb + 1;
	/* Distinct files spanning blocks share no bytes (files of the same extent are one set of
	 * pieces), so pieces number at most files + blocks (files within one block, which may
	 * share bytes, are one piece each). A crafted index whose extents overlap would otherwise
	 * make the plan grow as files x blocks; any overlap left is refused once the pieces are in
	 * order (check_overlaps). */
	return sc->pieces > j->n + nb ? overlap(j) : ZN_OK;
}

/* The prefix sums of the blocks' sizes (cum) and of the empty blocks (zeros). */
static void sum_blocks(struct job *j, uint64_t *zeros)
{
	struct plan *p = &j->plan;
	uint64_t prev = 0;
	for (uint64_t b = 0; b <= p->nblocks; b++) {
		struct zn_blockinfo bi;
		uint64_t usize = 0;
		if (b < p->nblocks)
			usize = zn_block_info(j->r, b, &bi) == ZN_OK ? bi.usize : 0;
		p->cum[b] = b ? p->cum[b - 1] + prev : 0;
		zeros[b] = b ? zeros[b - 1] + !prev : 0;
		prev = usize;
	}
}

/* Pass 2: the pieces, in entry order within each block (spans in their order: a span's pieces
 * go with its entry's). */
static void fill_pieces(struct job *j, uint64_t *fill)
{
	struct plan *p = &j->plan;
	uint64_t next_span = 0;
	for (uint64_t i = 0; i < j->n; i++) {
		struct extent e;
		if (!(j->ents[i].flags & JE_PLANNED) || job_status(j, i) != ST_OK ||
		    read_extent(j, i, &e))
			continue;
		while (next_span < p->nspans && p->spans[next_span].entry < i)
			next_span++;
		const int spans = next_span < p->nspans && p->spans[next_span].entry == i;
		if (spans && p->spans[next_span].primary)
			continue; /* a copy: its primary's pieces serve it */
		uint64_t left = e.size, off = e.block_offset, b = e.first_block;
		while (left) {
			uint64_t take = ZN_MIN(left, p->cum[b + 1] - p->cum[b] - off);
			struct plan_piece *g = &p->pieces[fill[b]++];
			g->owner = spans ? PIECE_SPAN | next_span : i;
			g->boff = (uint32_t)off;
			g->len = (uint32_t)take;
			left -= take;
			off = 0;
			b++;
		}
	}
}

/* Within each block, pieces in offset order; they must be disjoint, but for files within one
 * block with the very same extent (identical files stored once). Then a block's distinct bytes
 * are hashed once however many rows share them (see hash_piece), and a crafted index cannot make
 * verification hash more than the blocks hold. */
static zn_result check_overlaps(struct job *j)
{
	struct plan *p = &j->plan;
	for (uint64_t b = 0; b < p->nblocks; b++) {
		struct plan_piece *g = p->pieces + p->bstart[b];
		uint64_t m = p->bstart[b + 1] - p->bstart[b], end = 0, k = 1;
		/* Pieces were filled in entry order, which is offset order in a block the writer
		 * packed: most need no sort. */
		while (k < m && cmp_pieces(&g[k - 1], &g[k]) < 0)
			k++;
		if (k < m)
			qsort(g, m, sizeof(*g), cmp_pieces);
		for (k = 0; k < m; k++) {
			int same = k && g[k].boff == g[k - 1].boff && g[k].len == g[k - 1].len &&
			           !(g[k].owner & PIECE_SPAN) && !(g[k - 1].owner & PIECE_SPAN);
			if (g[k].boff < end && !same)
				return overlap(j);
			end = ZN_MAX(end, (uint64_t)g[k].boff + g[k].len);
		}
	}
	return ZN_OK;
}

/* The workers' queue, and the turns of blocks holding pieces of spanning files. */
static void make_queue(struct plan *p)
{
	int64_t turn = 0;
	for (uint64_t b = 0; b < p->nblocks; b++) {
		p->span_turn[b] = -1;
		if (p->bstart[b + 1] == p->bstart[b])
			continue;
		p->work[p->nwork++] = b;
		for (uint64_t s = p->bstart[b]; s < p->bstart[b + 1]; s++)
			if (p->pieces[s].owner & PIECE_SPAN) {
				p->span_turn[b] = turn++;
				break;
			}
	}
}

zn_result plan_build(struct job *j)
{
	struct plan *p = &j->plan;
	const uint64_t nb = j->r->nblocks, nb1 = nb ? nb : 1;
	p->nblocks = nb;
	p->cum = malloc((nb + 1) * sizeof(uint64_t));
	p->bstart = calloc(nb + 2, sizeof(uint64_t));
	struct plan_scan sc = {malloc((nb + 1) * sizeof(uint64_t)), calloc(nb1, sizeof(uint64_t)),
	                       0};
	zn_result res = p->cum && p->bstart && sc.zeros && sc.span_at ? ZN_OK : ZN_ERR_NOMEM;
	if (res == ZN_OK)
		sum_blocks(j, sc.zeros);
	/* Pass 1: check every file's extent and count pieces per block. */
	for (uint64_t i = 0; res == ZN_OK && i < j->n; i++)
		if (job_status(j, i) == ST_OK && j->ents[i].type == ZN_TYPE_FILE)
			res = scan_entry(j, &sc, i);
	free(sc.zeros);
	free(sc.span_at);
	if (res != ZN_OK)
		return res;
	for (uint64_t b = 0; b < nb; b++)
		p->bstart[b + 1] += p->bstart[b];
	p->pieces = malloc((sc.pieces ? sc.pieces : 1) * sizeof(*p->pieces));
	uint64_t *fill = malloc(nb1 * sizeof(uint64_t));
	p->work = malloc(nb1 * sizeof(uint64_t));
	p->span_turn = malloc(nb1 * sizeof(int64_t));
	if (!p->pieces || !fill || !p->work || !p->span_turn) {
		free(fill);
		return ZN_ERR_NOMEM;
	}
	memcpy(fill, p->bstart, nb * sizeof(uint64_t));
	fill_pieces(j, fill);
	free(fill);
	RETURN_IF_ERROR(check_overlaps(j));
	make_queue(p);
	return ZN_OK;
}

void plan_free(struct plan *p)
{
	free(p->cum);
	free(p->bstart);
	free(p->pieces);
	free(p->work);
	free(p->span_turn);
	free(p->spans);
	memset(p, 0, sizeof(*p));
}
