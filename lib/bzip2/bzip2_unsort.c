/* SPDX-License-Identifier: MIT */
/* bzip2_unsort.c - the inverse Burrows-Wheeler transform: links, and a walk in many lanes. */
#include "bzip2/bzip2_internal.h"

/*
 * With F the sorted bytes of L (the first column), row LF(i) = C[L[i]] + (the number of L[i]
 * before i in L) is row i rotated right by one, and T = LF^-1 rotates left: the block is
 * s[k] = F[T^k(origPtr)]. One pass over L in order makes the links: LF(i) comes out of the
 * running counts, and link[LF(i)] = i << 9 | L[i] stores T(LF(i)) = i with F[LF(i)] = L[i].
 *
 * The walk. Following T is a chain of dependent loads from a 3.6 MB array, nearly each a cache
 * miss: on this machine (EPYC, 2 vCPUs) one chain costs 128 ns per step on a random permutation
 * (3.6 MB misses the 512 KiB L2), and walking the benchmark's tar forward from origPtr and
 * backward from it with LF at once (the first design) cost 35 ns per byte. Latency, not
 * bandwidth: 16 chains on the same array cost 3.2 ns per step each. So the walk starts at many
 * places: WALK_SEGS rows spread over the array, and origPtr, are marked (bit 8 of their link)
 * and cut the cycle into segments, and WALK_LANES lanes walk them at once, in lock step, each
 * until it reaches the next mark and then on to a segment not yet walked. Afterwards the
 * segments are put in order, from origPtr's, each followed by the one that starts where it
 * ended (a memcpy of the block). Interleaving the walks of 2 or 4 blocks instead (tried: 29 and
 * 20 ns per byte) loses to this: every block added is another 3.6 MB that misses the cache.
 *
 * The lanes' step is what limits the misses in flight: the core's reorder buffer (224-256
 * entries) holds as many lane steps as fit. So a step is kept to about 5 instructions: the
 * rows live in registers, all lanes write their byte at the same offset k of their own 16 KiB
 * buffer (an immediate displacement), the marks of all lanes are tested at once (their links
 * or-ed), and all else -- a segment ending, a lane starting the next, idle lanes (which step on
 * a dummy row linked to itself), the buffers emptied into the log every 16 Ki steps -- happens
 * in the rare slow step. Written as a loop of one lane per step with the lane state in memory
 * (17 instructions) it cost 9.9 ns per byte whatever the number of lanes (16 to 48): the
 * reorder buffer was full.
 *
 * Damage may make T several cycles. Every row is still visited at most once (the marks cut
 * every cycle they lie on), so the log holds at most n bytes; the block is the cycle through
 * origPtr repeated to n bytes, as libbz2's walk of n steps gives it (a valid block of a
 * periodic string u^k is such a case: its k cycles give u each).
 */
#define MARK (1u << 8)

/* Making the links in 2 or 4 parts at once, each with counters of its own (so that a run of
 * equal bytes does not chain each step to the last one's counter store), was tried: 0.100 and
 * 0.108 s against 0.089 s for one part on a 40 MB tar (thread CPU time, alternated): the writes
 * then go to 512 or 1024 places at once instead of 256. */

void zn_bz2_make_links(struct bz2_block *b)
{
	uint32_t next[256], sum = 0;
	for (unsigned c = 0; c < 256; c++) {
		next[c] = sum;
		sum += b->count[c];
	}
	const uint8_t *ll = b->ll;
	uint32_t *link = b->link;
	const uint32_t n = b->n; /* in a local: the stores to link[] could alias b->n */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = ll[i];
		link[next[c]++] = i << 9 | c;
	}
	link[n] = n << 9; /* the dummy row of idle lanes */
}

/* The segments: their first rows, sorted, origPtr among them, marked in the links. */
static unsigned mark_segments(struct bz2_block *b)
{
	struct bz2_walk *w = &b->walk;
	uint32_t n = b->n, k = 0;
	unsigned segs = n < WALK_SEGS ? n : WALK_SEGS;
	for (unsigned i = 0; i < segs; i++) {
		uint32_t row = (uint32_t)((uint64_t)i * n / segs);
		if (row > b->orig_ptr && w->start[k - 1] < b->orig_ptr)
			w->start[k++] = b->orig_ptr;
		if (k == 0 || w->start[k - 1] != row)
			w->start[k++] = row;
	}
	if (w->start[k - 1] < b->orig_ptr)
		w->start[k++] = b->orig_ptr;
	for (unsigned i = 0; i < k; i++) {
		b->link[w->start[i]] |= MARK;
		w->first[i] = w->last[i] = UINT32_MAX;
		if (w->start[i] == b->orig_ptr)
			w->origin = i;
	}
	w->npieces = 0;
	w->logged = 0;
	return k;
}

/* The segment that starts at `row` (a marked row). */
static unsigned segment_at(const struct bz2_walk *w, unsigned nseg, uint32_t row)
{
	unsigned lo = 0, hi = nseg;
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;
		if (w->start[mid] <= row)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Bytes of segment seg, from a lane's buffer, to the log. */
static void log_piece(struct bz2_walk *w, unsigned seg, const uint8_t *p, uint32_t len)
{
	if (!len)
		return;
	uint32_t i = w->npieces++;
	memcpy(w->scratch + w->logged, p, len);
	w->piece_off[i] = w->logged;
	w->piece_len[i] = len;
	w->piece_next[i] = UINT32_MAX;
	w->logged += len;
	if (w->last[seg] == UINT32_MAX)
		w->first[seg] = i;
	else
		w->piece_next[w->last[seg]] = i;
	w->last[seg] = i;
}

/* The state of the lanes between fast steps. */
struct lanes {
	uint32_t row[WALK_LANES];
	unsigned seg[WALK_LANES]; /* UINT_MAX: idle */
	uint32_t k0[WALK_LANES];  /* where the lane's current segment starts in its buffer */
	unsigned next, nseg, active;
};

/* Lane l takes the next segment, if any, at step k: its first row's byte is this step's. */
static uint32_t lane_take(struct bz2_block *b, struct lanes *ls, unsigned l, uint32_t k)
{
	struct bz2_walk *w = &b->walk;
	if (ls->next == ls->nseg) {
		ls->seg[l] = UINT32_MAX;
		ls->active--;
		return b->link[b->n];
	}
	ls->seg[l] = ls->next++;
	ls->k0[l] = k;
	return b->link[w->start[ls->seg[l]]] & ~MARK;
}

/* Step k of every lane one at a time: segments that end, lanes that take the next one. */
static void slow_step(struct bz2_block *b, struct lanes *ls, uint32_t k)
{
	struct bz2_walk *w = &b->walk;
	for (unsigned l = 0; l < WALK_LANES; l++) {
		uint32_t v = b->link[ls->row[l]];
		if (v & MARK) { /* the segment ends where another starts */
			unsigned seg = ls->seg[l];
			log_piece(w, seg, w->lanes + (size_t)l * WALK_LANE_BUF + ls->k0[l],
			          k - ls->k0[l]);
			w->follow[seg] = segment_at(w, ls->nseg, ls->row[l]);
			v = lane_take(b, ls, l, k);
		}
		w->lanes[(size_t)l * WALK_LANE_BUF + k] = (uint8_t)v;
		ls->row[l] = v >> 9;
	}
}

/* The lanes' buffers are full: their segments so far go to the log. */
static void flush_lanes(struct bz2_walk *w, struct lanes *ls)
{
	for (unsigned l = 0; l < WALK_LANES; l++) {
		if (ls->seg[l] == UINT32_MAX)
			continue;
		log_piece(w, ls->seg[l], w->lanes + (size_t)l * WALK_LANE_BUF + ls->k0[l],
		          WALK_LANE_BUF - ls->k0[l]);
		ls->k0[l] = 0;
	}
}

static void walk_segments(struct bz2_block *b, unsigned nseg)
{
	struct bz2_walk *w = &b->walk;
	const uint32_t *const link = b->link;
	uint8_t *const buf = w->lanes;
	struct lanes ls = {.nseg = nseg, .active = WALK_LANES};
	for (unsigned l = 0; l < WALK_LANES; l++) {
		uint32_t v = lane_take(b, &ls, l, 0);
		buf[(size_t)l * WALK_LANE_BUF] = (uint8_t)v;
		ls.row[l] = v >> 9;
	}
	uint32_t row[WALK_LANES];
	memcpy(row, ls.row, sizeof(row));
	uint32_t k = 1;
	while (ls.active) {
		uint32_t v[WALK_LANES], any = 0;
#pragma GCC unroll 16
		for (unsigned l = 0; l < WALK_LANES; l++) {
			v[l] = link[row[l]];
			any |= v[l];
		}
		if (likely(!(any & MARK))) {
#pragma GCC unroll 16
			for (unsigned l = 0; l < WALK_LANES; l++) {
				buf[(size_t)l * WALK_LANE_BUF + k] = (uint8_t)v[l];
				row[l] = v[l] >> 9;
			}
		} else {
			memcpy(ls.row, row, sizeof(row));
			slow_step(b, &ls, k);
			memcpy(row, ls.row, sizeof(row));
		}
		if (unlikely(++k == WALK_LANE_BUF)) {
			flush_lanes(w, &ls);
			k = 0;
		}
	}
}

/* The segments in order from origPtr's into b->ll, the cycle repeated to n bytes. */
static void join_segments(struct bz2_block *b)
{
	const struct bz2_walk *w = &b->walk;
	uint8_t *s = b->ll;
	size_t have = 0;
	unsigned seg = w->origin;
	do {
		for (uint32_t p = w->first[seg]; p != UINT32_MAX && have < b->n;
		     p = w->piece_next[p]) {
			size_t k = ZN_MIN(w->piece_len[p], b->n - have);
			memcpy(s + have, w->scratch + w->piece_off[p], k);
			have += k;
		}
		seg = w->follow[seg];
	} while (seg != w->origin && have < b->n);
	for (size_t k = have; k < b->n; k += k) /* another cycle: libbz2 repeats this one */
		memcpy(s + k, s, ZN_MIN(k, b->n - k));
}

void zn_bz2_walk(struct bz2_block *b)
{
	unsigned nseg = mark_segments(b);
	walk_segments(b, nseg);
	join_segments(b);
}

/* Randomised blocks: flip the low bit of the bytes the table names. */
static void derandomise(uint8_t *s, uint32_t n)
{
	uint64_t at = 0;
	for (unsigned k = 0;; k = (k + 1) & 511) {
		at += zn_bz2_rand_table[k];
		if (at - 2 >= n)
			break;
		s[at - 2] ^= 1;
	}
}

zn_result zn_bz2_unsort(struct bz2_block *b)
{
	zn_bz2_make_links(b);
	zn_bz2_walk(b);
	if (b->rand)
		derandomise(b->ll, b->n);
	int bad;
	b->out_len = zn_bz2_rle1_size(b->ll, b->n, &bad);
	return bad ? ZN_ERR_CORRUPT : ZN_OK;
}
