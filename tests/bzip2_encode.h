/* SPDX-License-Identifier: MIT */
/* bzip2_encode.h - a small bzip2 encoder for the tests: what no encoder in use still writes
 * (randomised blocks, as bzip2 0.9.0 did) and what encoders may but libbz2 does not (6 tables,
 * odd selectors, long, incomplete or over-subscribed codes, extra selectors), checked against
 * libbz2 by the tests that use it. Slow (a naive sort of rotations): for blocks of kilobytes. */
#ifndef ZN_BZIP2_ENCODE_H
#define ZN_BZIP2_ENCODE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bze_opts {
	int level;            /* the header's digit 1..9; blocks are cut at level x 100,000 - 19 */
	uint32_t block;       /* cut blocks at this many bytes after RLE1 instead (0: by level) */
	int randomise;        /* set the randomised bit and randomise the block */
	int ngroups;          /* tables, 2..6 (0: 2) */
	int rotate_selectors; /* selectors cycle through the tables (0: all use table 0) */
	unsigned extra_selectors; /* selectors written beyond those used (up to 32767 in all) */
	int fixed_len;            /* every code length this (1..20; 0: Huffman lengths) */
	int (*edit_lengths)(uint8_t *lens, unsigned alpha, void *ctx); /* may change them */
	void *ctx;
};

struct bze_bits {
	uint8_t *p;
	size_t n, cap;
	uint64_t acc;
	unsigned nacc;
};

static inline void bze_put(struct bze_bits *b, uint32_t v, unsigned k)
{
	for (unsigned i = k; i-- > 0;) {
		b->acc = b->acc << 1 | ((v >> i) & 1);
		if (++b->nacc == 8) {
			if (b->n == b->cap) {
				b->cap = b->cap * 2 + 1024;
				b->p = realloc(b->p, b->cap);
			}
			b->p[b->n++] = (uint8_t)b->acc;
			b->acc = 0;
			b->nacc = 0;
		}
	}
}

static inline uint32_t bze_crc(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint32_t)p[i] << 24;
		for (int k = 0; k < 8; k++)
			crc = crc & 0x80000000u ? crc << 1 ^ 0x04c11db7u : crc << 1;
	}
	return crc;
}

/* RLE1 of in[*at..n) into r (at most `limit` bytes), from *at on; returns its length. */
static inline size_t bze_rle1(const uint8_t *in, size_t n, size_t *at, uint8_t *r, size_t limit)
{
	size_t m = 0, i = *at;
	while (i < n) {
		size_t run = 1;
		while (i + run < n && in[i + run] == in[i] && run < 255 + 4)
			run++;
		size_t need = run >= 4 ? 5 : run;
		if (m + need > limit)
			break;
		for (size_t k = 0; k < (run >= 4 ? 4 : run); k++)
			r[m++] = in[i];
		if (run >= 4)
			r[m++] = (uint8_t)(run - 4);
		i += run;
	}
	*at = i;
	return m;
}

static const uint8_t *bze_sort_s;
static size_t bze_sort_m;
static inline int bze_cmp(const void *a, const void *b)
{
	size_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	for (size_t k = 0; k < bze_sort_m; k++) {
		uint8_t u = bze_sort_s[(x + k) % bze_sort_m], v = bze_sort_s[(y + k) % bze_sort_m];
		if (u != v)
			return u < v ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

/* Huffman code lengths of freq[0..n), at most 17 (frequencies halved until they fit). */
static inline void bze_lengths(const uint32_t *freq, unsigned n, uint8_t *len)
{
	uint64_t f[258];
	for (unsigned i = 0; i < n; i++)
		f[i] = freq[i] ? freq[i] : 1;
	for (;;) {
		uint64_t w[516];
		int parent[516], alive[516];
		unsigned nodes = n;
		for (unsigned i = 0; i < n; i++)
			w[i] = f[i], parent[i] = -1, alive[i] = 1;
		for (unsigned left = n; left > 1; left--) {
			int a = -1, b = -1;
			for (unsigned i = 0; i < nodes; i++) {
				if (!alive[i])
					continue;
				if (a < 0 || w[i] < w[a])
					b = a, a = (int)i;
				else if (b < 0 || w[i] < w[b])
					b = (int)i;
			}
			w[nodes] = w[a] + w[b];
			parent[nodes] = -1, alive[nodes] = 1;
			parent[a] = parent[b] = (int)nodes;
			alive[a] = alive[b] = 0;
			nodes++;
		}
		unsigned max = 0;
		for (unsigned i = 0; i < n; i++) {
			unsigned d = 0;
			for (int p = parent[i]; p >= 0; p = parent[p])
				d++;
			len[i] = (uint8_t)(d ? d : 1);
			max = d > max ? d : max;
		}
		if (max <= 17)
			return;
		for (unsigned i = 0; i < n; i++)
			f[i] = f[i] / 2 + 1;
	}
}

/* The block r[0..m) (after RLE1), with `crc` the CRC of its input, written to b. */
static inline void bze_block(struct bze_bits *b, uint8_t *r, size_t m, uint32_t crc,
                             const struct bze_opts *o, const uint16_t *rand_table)
{
	if (o->randomise) /* the decoder flips bit 0 of byte sum - 2 for running sums of the table
	                   */
		for (uint64_t at = 0, k = 0;; k = (k + 1) & 511) {
			at += rand_table[k];
			if (at - 2 >= m)
				break;
			r[at - 2] ^= 1;
		}
	uint32_t *sa = malloc(m * sizeof(*sa));
	uint8_t *l = malloc(m);
	for (size_t i = 0; i < m; i++)
		sa[i] = (uint32_t)i;
	bze_sort_s = r, bze_sort_m = m;
	qsort(sa, m, sizeof(*sa), bze_cmp);
	uint32_t orig = 0;
	for (size_t i = 0; i < m; i++) {
		l[i] = r[(sa[i] + m - 1) % m];
		if (!sa[i])
			orig = (uint32_t)i;
	}
	int used[256] = {0};
	for (size_t i = 0; i < m; i++)
		used[l[i]] = 1;
	uint8_t list[256];
	unsigned nused = 0;
	for (int c = 0; c < 256; c++)
		if (used[c])
			list[nused++] = (uint8_t)c;
	unsigned nalpha = nused + 2u;
	/* Move-to-front and zero runs into symbols. */
	uint16_t *sym = malloc((m + 2) * sizeof(*sym));
	size_t ns = 0, zeros = 0;
	for (size_t i = 0; i <= m; i++) {
		unsigned j = 0;
		if (i < m)
			while (list[j] != l[i])
				j++;
		if (i < m && j == 0) {
			zeros++;
			continue;
		}
		for (; zeros; zeros = (zeros - 1) / 2)
			sym[ns++] = (uint16_t)((zeros - 1) & 1); /* RUNA 0, RUNB 1 */
		if (i == m)
			break;
		memmove(list + 1, list, j);
		list[0] = l[i];
		sym[ns++] = (uint16_t)(j + 1);
	}
	sym[ns++] = (uint16_t)(nalpha - 1);
	/* Tables and selectors. */
	unsigned ngroups = o->ngroups ? (unsigned)o->ngroups : 2;
	size_t ngroups_used = (ns + 49) / 50, nsel = ngroups_used + o->extra_selectors;
	uint8_t *sel = malloc(nsel);
	for (size_t g = 0; g < nsel; g++)
		sel[g] = (uint8_t)(o->rotate_selectors ? g % ngroups : 0);
	uint8_t lens[6][258];
	for (unsigned t = 0; t < ngroups; t++) {
		uint32_t freq[258] = {0};
		for (size_t i = 0; i < ns; i++)
			if (sel[i / 50] == t)
				freq[sym[i]]++;
		if (o->fixed_len)
			memset(lens[t], o->fixed_len, nalpha);
		else
			bze_lengths(freq, nalpha, lens[t]);
		if (o->edit_lengths)
			o->edit_lengths(lens[t], nalpha, o->ctx);
	}
	/* Canonical codes, as the decoder assigns them. */
	uint32_t code[6][258];
	for (unsigned t = 0; t < ngroups; t++) {
		uint32_t next = 0;
		for (unsigned len = 1; len <= 20; len++) {
			for (unsigned s = 0; s < nalpha; s++)
				if (lens[t][s] == len)
					code[t][s] = next++;
			next <<= 1;
		}
	}
	bze_put(b, 0x314159, 24), bze_put(b, 0x265359, 24);
	bze_put(b, crc, 32);
	bze_put(b, (uint32_t) !!o->randomise, 1);
	bze_put(b, orig, 24);
	unsigned used16 = 0;
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++)
			if (used[i * 16 + j])
				used16 |= 0x8000u >> i;
	bze_put(b, used16, 16);
	for (int i = 0; i < 16; i++) {
		if (!(used16 & (0x8000u >> i)))
			continue;
		unsigned u = 0;
		for (int j = 0; j < 16; j++)
			if (used[i * 16 + j])
				u |= 0x8000u >> j;
		bze_put(b, u, 16);
	}
	bze_put(b, ngroups, 3);
	bze_put(b, (uint32_t)nsel, 15);
	uint8_t order[6] = {0, 1, 2, 3, 4, 5};
	for (size_t g = 0; g < nsel; g++) {
		unsigned j = 0;
		while (order[j] != sel[g])
			j++;
		memmove(order + 1, order, j);
		order[0] = sel[g];
		for (unsigned k = 0; k < j; k++)
			bze_put(b, 1, 1);
		bze_put(b, 0, 1);
	}
	for (unsigned t = 0; t < ngroups; t++) {
		int cur = lens[t][0];
		bze_put(b, (uint32_t)cur, 5);
		for (unsigned s = 0; s < nalpha; s++) {
			for (; cur < lens[t][s]; cur++)
				bze_put(b, 2, 2);
			for (; cur > lens[t][s]; cur--)
				bze_put(b, 3, 2);
			bze_put(b, 0, 1);
		}
	}
	for (size_t i = 0; i < ns; i++) {
		unsigned t = sel[i / 50];
		bze_put(b, code[t][sym[i]], lens[t][sym[i]]);
	}
	free(sa), free(l), free(sym), free(sel);
}

/* A bzip2 stream of in[0..n); *out malloc'd; returns its length. */
static inline size_t bze_encode(const uint8_t *in, size_t n, const struct bze_opts *o,
                                const uint16_t *rand_table, uint8_t **out)
{
	struct bze_bits b = {0};
	bze_put(&b, 'B', 8), bze_put(&b, 'Z', 8), bze_put(&b, 'h', 8);
	bze_put(&b, (uint32_t)('0' + o->level), 8);
	size_t limit = o->block ? o->block : (size_t)o->level * 100000 - 19, at = 0;
	uint8_t *r = malloc(limit + 8);
	uint32_t combined = 0;
	while (at < n) {
		size_t from = at, m = bze_rle1(in, n, &at, r, limit);
		uint32_t crc = ~bze_crc(~0u, in + from, at - from);
		combined = (combined << 1 | combined >> 31) ^ crc;
		bze_block(&b, r, m, crc, o, rand_table);
	}
	bze_put(&b, 0x177245, 24), bze_put(&b, 0x385090, 24);
	bze_put(&b, combined, 32);
	while (b.nacc)
		bze_put(&b, 0, 1);
	free(r);
	*out = b.p;
	return b.n;
}

#endif
