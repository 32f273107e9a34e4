/* SPDX-License-Identifier: MIT */
/* arrow_ipc.c - Arrow IPC file writer: columns interned in memory, flatbuffers written by hand.
 *
 * The file (Arrow's "IPC file format", metadata version V5) is
 *     "ARROW1\0\0"
 *     Schema message
 *     one DictionaryBatch message for each dictionary-encoded column
 *     RecordBatch messages
 *     end-of-stream marker (0xFFFFFFFF, 0)
 *     Footer flatbuffer, its int32 length, "ARROW1"
 * and each message is 0xFFFFFFFF, an int32 metadata length, the Message flatbuffer padded to 8
 * bytes, then its body: the column buffers in field order (validity, then offsets or indices,
 * then data), each padded to 8 bytes. Everything is little-endian.
 *
 * Flatbuffers are normally built back to front by a library; here a small builder writes them
 * front to back instead. A flatbuffer offset (uoffset_t) is unsigned and relative to where it is
 * stored, so whatever a table points at must come after it: a table is written first with its
 * offset fields zero, the objects they point at after it, and each offset patched as its target
 * is placed. A table's vtable is written just before the table (the table's first word is the
 * signed distance back to it). Fields are laid out widest first after that word, with the table
 * placed so that its 8-byte fields fall on 8-byte boundaries of the buffer, whose start is itself
 * 8-aligned in the file. Only the tables, unions, vectors and structs Schema.fbs, Message.fbs and
 * File.fbs define for the types below are written; field ids are those files' declaration order
 * (a union takes two ids: its type byte, then its offset).
 *
 * String columns are interned as they are appended (an XXH3 hash table of the distinct values):
 * a column whose distinct values are at most half its rows is written dictionary-encoded (int32
 * indices into one dictionary batch), any other plainly, from the same ids. So the path column
 * costs its bytes once and 4 bytes a row, and type, package and archive columns a few bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow_ipc.h"
#include "common/common.h"
#include "common/xxh3.h"

/* ---- growable buffers ---- */

static int ab_reserve(struct zn_abuf *b, size_t more)
{
	if (b->cap - b->n >= more)
		return 1;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->n < more) {
		if (cap > SIZE_MAX / 2)
			return 0;
		cap *= 2;
	}
	uint8_t *p = realloc(b->p, cap);
	if (!p)
		return 0;
	b->p = p;
	b->cap = cap;
	return 1;
}

static int ab_put(struct zn_abuf *b, const void *p, size_t n)
{
	if (!ab_reserve(b, n))
		return 0;
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	return 1;
}

static void ab_free(struct zn_abuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- the table ---- */

static int kind_width(int kind)
{
	switch (kind) {
	case ZN_ARROW_UINT32:
	case ZN_ARROW_UTF8: /* the ids */
		return 4;
	case ZN_ARROW_FSB32:
		return 32;
	default:
		return 8;
	}
}

zn_result zn_arrow_table_init(struct zn_arrow_table *t, const char *const *names, const int *kinds,
                              int n)
{
	memset(t, 0, sizeof(*t));
	t->cols = calloc((size_t)n, sizeof(*t->cols));
	if (!t->cols)
		return ZN_ERR_NOMEM;
	t->ncols = n;
	for (int i = 0; i < n; i++) {
		t->cols[i].name = names[i];
		t->cols[i].kind = kinds[i];
		uint64_t zero = 0;
		if (kinds[i] == ZN_ARROW_UTF8 && !ab_put(&t->cols[i].dict_off, &zero, 8)) {
			zn_arrow_table_free(t);
			return ZN_ERR_NOMEM;
		}
	}
	return ZN_OK;
}

void zn_arrow_table_free(struct zn_arrow_table *t)
{
	for (int i = 0; t->cols && i < t->ncols; i++) {
		struct zn_arrow_col *c = &t->cols[i];
		ab_free(&c->data);
		ab_free(&c->valid);
		ab_free(&c->dict);
		ab_free(&c->dict_off);
		free(c->slots);
	}
	free(t->cols);
	memset(t, 0, sizeof(*t));
}

/* The row's validity bit in column c. */
static void put_valid(struct zn_arrow_table *t, struct zn_arrow_col *c, int valid)
{
	uint64_t row = t->rows;
	if (row % 8 == 0) {
		uint8_t z = 0;
		if (!ab_put(&c->valid, &z, 1)) {
			t->err = ZN_ERR_NOMEM;
			return;
		}
	}
	if (valid)
		c->valid.p[row / 8] |= (uint8_t)(1u << (row % 8));
	else
		c->nulls++;
}

static const uint8_t *dict_str(const struct zn_arrow_col *c, uint32_t id, size_t *len)
{
	uint64_t b = zn_get_le64(c->dict_off.p + 8 * (size_t)id);
	uint64_t e = zn_get_le64(c->dict_off.p + 8 * ((size_t)id + 1));
	*len = (size_t)(e - b);
	return c->dict.p + b;
}

static int grow_slots(struct zn_arrow_col *c)
{
	size_t ns = c->nslots ? c->nslots * 2 : 1024;
	uint32_t *s = calloc(ns, sizeof(*s));
	if (!s)
		return 0;
	for (uint32_t id = 0; id < c->ndict; id++) {
		size_t len;
		const uint8_t *p = dict_str(c, id, &len);
		size_t h = (size_t)zn_xxh3(p, len) & (ns - 1);
		while (s[h])
			h = (h + 1) & (ns - 1);
		s[h] = id + 1;
	}
	free(c->slots);
	c->slots = s;
	c->nslots = ns;
	return 1;
}

/* The id of string s in column c, interned if new; UINT32_MAX when out of memory. */
static uint32_t intern(struct zn_arrow_col *c, const char *s, size_t len)
{
	if (2 * ((size_t)c->ndict + 1) > c->nslots && !grow_slots(c))
		return UINT32_MAX;
	size_t h = (size_t)zn_xxh3(s, len) & (c->nslots - 1);
	for (; c->slots[h]; h = (h + 1) & (c->nslots - 1)) {
		size_t l;
		const uint8_t *p = dict_str(c, c->slots[h] - 1, &l);
		if (l == len && !memcmp(p, s, len))
			return c->slots[h] - 1;
	}
	uint64_t end = c->dict.n + len;
	if (!ab_put(&c->dict, s, len) || !ab_put(&c->dict_off, &end, 8))
		return UINT32_MAX;
	c->slots[h] = ++c->ndict;
	return c->ndict - 1;
}

void zn_arrow_put_str(struct zn_arrow_table *t, int ci, const char *s, size_t len)
{
	struct zn_arrow_col *c = &t->cols[ci];
	if (t->err)
		return;
	if (len >= INT32_MAX || c->ndict >= INT32_MAX - 1) {
		t->err = ZN_ERR_LIMIT;
		return;
	}
	uint32_t id = intern(c, s ? s : "", s ? len : 0);
	if (id == UINT32_MAX || !ab_put(&c->data, &id, 4)) {
		t->err = ZN_ERR_NOMEM;
		return;
	}
	put_valid(t, c, 1);
}

void zn_arrow_put_u64(struct zn_arrow_table *t, int ci, uint64_t v)
{
	struct zn_arrow_col *c = &t->cols[ci];
	uint32_t v32 = (uint32_t)v;
	if (t->err)
		return;
	if (!ab_put(&c->data, kind_width(c->kind) == 4 ? (void *)&v32 : (void *)&v,
	            (size_t)kind_width(c->kind))) {
		t->err = ZN_ERR_NOMEM;
		return;
	}
	put_valid(t, c, 1);
}

void zn_arrow_put_fsb(struct zn_arrow_table *t, int ci, const uint8_t v[32])
{
	struct zn_arrow_col *c = &t->cols[ci];
	if (t->err)
		return;
	if (!ab_put(&c->data, v, 32)) {
		t->err = ZN_ERR_NOMEM;
		return;
	}
	put_valid(t, c, 1);
}

void zn_arrow_put_null(struct zn_arrow_table *t, int ci)
{
	struct zn_arrow_col *c = &t->cols[ci];
	static const uint8_t zero[32];
	if (t->err)
		return;
	if (!ab_put(&c->data, zero, (size_t)kind_width(c->kind))) {
		t->err = ZN_ERR_NOMEM;
		return;
	}
	put_valid(t, c, 0);
}

void zn_arrow_end_row(struct zn_arrow_table *t)
{
	if (!t->err)
		t->rows++;
}

/* ---- a front-to-back flatbuffer builder ---- */

struct fb {
	struct zn_abuf b;
	int oom;
};

static void fb_bytes(struct fb *f, const void *p, size_t n)
{
	if (!ab_put(&f->b, p, n))
		f->oom = 1;
}

static size_t fb_pad(struct fb *f, size_t align, size_t phase)
{
	static const uint8_t zero[8];
	while (!f->oom && f->b.n % align != phase)
		fb_bytes(f, zero, 1);
	return f->b.n;
}

static void fb_le(struct fb *f, uint64_t v, int size)
{
	uint8_t le[8];
	for (int i = 0; i < size; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	fb_bytes(f, le, (size_t)size);
}

/* Points the offset field at `at` to `target` (which follows it). */
static void fb_patch(struct fb *f, size_t at, size_t target)
{
	if (!f->oom)
		zn_put_le32(f->b.p + at, (uint32_t)(target - at));
}

#define FB_FIELDS_MAX 8

/* A table being described: its fields, then fb_table() writes it. */
struct fb_table {
	int size[FB_FIELDS_MAX]; /* 0: absent */
	uint64_t val[FB_FIELDS_MAX];
	size_t at[FB_FIELDS_MAX]; /* where each field landed (for patching offsets) */
};

static const struct fb_table FB_TABLE0;

static void tab_scalar(struct fb_table *t, int id, int size, uint64_t v)
{
	t->size[id] = size;
	t->val[id] = v;
}

static void tab_offset(struct fb_table *t, int id)
{
	tab_scalar(t, id, 4, 0);
}

/* Writes the vtable and the table; returns the table's position. */
static size_t fb_table(struct fb *f, struct fb_table *t)
{
	int nf = 0, has8 = 0;
	uint16_t off[FB_FIELDS_MAX] = {0};
	size_t pos = 4; /* after the soffset */
	for (int w = 8; w >= 1; w /= 2)
		for (int i = 0; i < FB_FIELDS_MAX; i++)
			if (t->size[i] == w) {
				off[i] = (uint16_t)pos;
				pos += (size_t)w;
				has8 |= w == 8;
				nf = i + 1 > nf ? i + 1 : nf;
			}
	fb_pad(f, 2, 0);
	size_t vt = f->b.n;
	fb_le(f, 4 + 2 * (uint64_t)nf, 2);
	fb_le(f, pos, 2);
	for (int i = 0; i < nf; i++)
		fb_le(f, off[i], 2);
	size_t tp = fb_pad(f, has8 ? 8 : 4, has8 ? 4 : 0);
	fb_le(f, tp - vt, 4);
	for (int w = 8; w >= 1; w /= 2)
		for (int i = 0; i < FB_FIELDS_MAX; i++)
			if (t->size[i] == w) {
				t->at[i] = f->b.n;
				fb_le(f, t->val[i], w);
			}
	return tp;
}

static size_t fb_string(struct fb *f, const char *s)
{
	size_t n = strlen(s), p = fb_pad(f, 4, 0);
	fb_le(f, n, 4);
	fb_bytes(f, s, n + 1);
	return p;
}

/* A vector of n offsets (each patched later at pos + 4 + 4 i). */
static size_t fb_offset_vector(struct fb *f, size_t n)
{
	size_t p = fb_pad(f, 4, 0);
	fb_le(f, n, 4);
	for (size_t i = 0; i < n; i++)
		fb_le(f, 0, 4);
	return p;
}

/* A vector of n structs of 8-byte words (words_each per struct), from w. */
static size_t fb_struct_vector(struct fb *f, const uint64_t *w, size_t n, size_t words_each)
{
	size_t p = fb_pad(f, 8, 4);
	fb_le(f, n, 4);
	for (size_t i = 0; i < n * words_each; i++)
		fb_le(f, w[i], 8);
	return p;
}

/* ---- Arrow metadata ---- */

enum {
	META_V5 = 4,
	HDR_SCHEMA = 1,
	HDR_DICTIONARY = 2,
	HDR_RECORD_BATCH = 3,
	TYPE_INT = 2,
	TYPE_UTF8 = 5,
	TYPE_TIMESTAMP = 10,
	TYPE_FSB = 15,
	UNIT_NANOSECOND = 3,
};

/* The type table of a column (Int, Utf8, Timestamp, FixedSizeBinary); its union tag in *tag. */
static size_t write_type(struct fb *f, int kind, int *tag)
{
	struct fb_table t = FB_TABLE0;
	switch (kind) {
	case ZN_ARROW_UTF8:
		*tag = TYPE_UTF8;
		return fb_table(f, &t);
	case ZN_ARROW_TS_NS: {
		*tag = TYPE_TIMESTAMP;
		tab_scalar(&t, 0, 2, UNIT_NANOSECOND);
		tab_offset(&t, 1);
		size_t p = fb_table(f, &t);
		fb_patch(f, t.at[1], fb_string(f, "UTC"));
		return p;
	}
	case ZN_ARROW_FSB32:
		*tag = TYPE_FSB;
		tab_scalar(&t, 0, 4, 32);
		return fb_table(f, &t);
	default:
		*tag = TYPE_INT;
		tab_scalar(&t, 0, 4, kind == ZN_ARROW_UINT32 ? 32 : 64);
		tab_scalar(&t, 1, 1, kind == ZN_ARROW_INT64 || kind == ZN_ARROW_TS_NS);
		return fb_table(f, &t);
	}
}

/* Field { name, nullable, type_type, type, dictionary, children }. */
static size_t write_field(struct fb *f, const struct zn_arrow_col *c, int dict_id)
{
	struct fb_table t = FB_TABLE0;
	int tag;
	tab_offset(&t, 0);
	tab_scalar(&t, 1, 1, 1);
	tab_scalar(&t, 2, 1, 0); /* patched below, once the type is known */
	tab_offset(&t, 3);
	if (dict_id >= 0)
		tab_offset(&t, 4);
	tab_offset(&t, 5);
	size_t p = fb_table(f, &t);
	size_t tag_at = t.at[2];
	fb_patch(f, t.at[0], fb_string(f, c->name));
	fb_patch(f, t.at[3], write_type(f, c->kind, &tag));
	if (!f->oom)
		f->b.p[tag_at] = (uint8_t)tag;
	if (dict_id >= 0) { /* DictionaryEncoding { id, indexType: Int32 signed } */
		struct fb_table d = FB_TABLE0, it = FB_TABLE0;
		tab_scalar(&d, 0, 8, (uint64_t)dict_id);
		tab_offset(&d, 1);
		fb_patch(f, t.at[4], fb_table(f, &d));
		tab_scalar(&it, 0, 4, 32);
		tab_scalar(&it, 1, 1, 1);
		fb_patch(f, d.at[1], fb_table(f, &it));
	}
	fb_patch(f, t.at[5], fb_offset_vector(f, 0));
	return p;
}

/* Schema { endianness, fields }; dict[i] says whether column i is dictionary-encoded. */
static size_t write_schema(struct fb *f, const struct zn_arrow_table *tb, const uint8_t *dict)
{
	struct fb_table t = FB_TABLE0;
	tab_scalar(&t, 0, 2, 0); /* Little */
	tab_offset(&t, 1);
	size_t p = fb_table(f, &t);
	size_t v = fb_offset_vector(f, (size_t)tb->ncols);
	fb_patch(f, t.at[1], v);
	for (int i = 0; i < tb->ncols; i++)
		fb_patch(f, v + 4 + 4 * (size_t)i, write_field(f, &tb->cols[i], dict[i] ? i : -1));
	return p;
}

/* RecordBatch { length, nodes, buffers }. */
static size_t write_record_batch(struct fb *f, uint64_t rows, const uint64_t *nodes, size_t nn,
                                 const uint64_t *bufs, size_t nb)
{
	struct fb_table t = FB_TABLE0;
	tab_scalar(&t, 0, 8, rows);
	tab_offset(&t, 1);
	tab_offset(&t, 2);
	size_t p = fb_table(f, &t);
	fb_patch(f, t.at[1], fb_struct_vector(f, nodes, nn, 2));
	fb_patch(f, t.at[2], fb_struct_vector(f, bufs, nb, 2));
	return p;
}

/* Starts a Message { version, header_type, header, bodyLength }; the header's offset field is
 * in *hdr_at, to patch with the header table's position. */
static void write_message(struct fb *f, int hdr_type, uint64_t body_len, size_t *hdr_at)
{
	struct fb_table t = FB_TABLE0;
	fb_le(f, 0, 4); /* the root offset, patched to the Message */
	tab_scalar(&t, 0, 2, META_V5);
	tab_scalar(&t, 1, 1, (uint64_t)hdr_type);
	tab_offset(&t, 2);
	tab_scalar(&t, 3, 8, body_len);
	fb_patch(f, 0, fb_table(f, &t));
	*hdr_at = t.at[2];
}

/* ---- output ---- */

struct out {
	int fd;
	uint8_t buf[1 << 16];
	size_t n;
	uint64_t pos; /* bytes written to the file so far, buffered ones included */
	zn_result err;
};

static void out_flush(struct out *o)
{
	size_t done = 0;
	while (!o->err && done < o->n) {
		ssize_t k = write(o->fd, o->buf + done, o->n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			o->err = ZN_ERR_IO;
			break;
		}
		done += (size_t)k;
	}
	o->n = 0;
}

static void out_put(struct out *o, const void *p, size_t n)
{
	const uint8_t *s = p;
	o->pos += n;
	while (n && !o->err) {
		if (o->n == sizeof(o->buf))
			out_flush(o);
		size_t k = ZN_MIN(n, sizeof(o->buf) - o->n);
		memcpy(o->buf + o->n, s, k);
		o->n += k;
		s += k;
		n -= k;
	}
}

static void out_le(struct out *o, uint64_t v, int size)
{
	uint8_t le[8];
	for (int i = 0; i < size; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	out_put(o, le, (size_t)size);
}

static void out_pad8(struct out *o)
{
	static const uint8_t zero[8];
	out_put(o, zero, (8 - o->pos % 8) % 8);
}

/* An encapsulated message: continuation marker, length, the flatbuffer padded to 8. Its block
 * (offset, metadata length) goes to blk[0..1]. */
static void out_message(struct out *o, struct fb *f, uint64_t *blk)
{
	fb_pad(f, 8, 0);
	blk[0] = o->pos;
	blk[1] = 8 + f->b.n;
	out_le(o, 0xffffffffu, 4);
	out_le(o, f->b.n, 4);
	out_put(o, f->b.p, f->b.n);
}

/* ---- record batches ---- */

/* How a string column's rows [r0, r1) are written: plain (its bytes) or as indices. */
static uint64_t plain_bytes(const struct zn_arrow_col *c, uint64_t r0, uint64_t r1)
{
	uint64_t sum = 0;
	for (uint64_t r = r0; r < r1; r++) {
		size_t len = 0;
		if (c->valid.p[r / 8] >> (r % 8) & 1)
			dict_str(c, zn_get_le32(c->data.p + 4 * r), &len);
		sum += len;
	}
	return sum;
}

static uint64_t null_count(const struct zn_arrow_col *c, uint64_t r0, uint64_t r1)
{
	uint64_t k = 0;
	if (!c->nulls)
		return 0;
	for (uint64_t r = r0; r < r1; r++)
		k += !(c->valid.p[r / 8] >> (r % 8) & 1);
	return k;
}

#define PAD8(n) (((n) + 7) & ~(uint64_t)7)

/* The buffers of rows [r0, r1) in field order: (offset, length) pairs into bufs, (length, nulls)
 * into nodes, and the body length. */
static uint64_t plan_batch(const struct zn_arrow_table *t, const uint8_t *dict, uint64_t r0,
                           uint64_t r1, uint64_t *nodes, uint64_t *bufs, size_t *nb)
{
	uint64_t off = 0, rows = r1 - r0;
	*nb = 0;
	for (int i = 0; i < t->ncols; i++) {
		const struct zn_arrow_col *c = &t->cols[i];
		uint64_t nulls = null_count(c, r0, r1);
		nodes[2 * i] = rows;
		nodes[2 * i + 1] = nulls;
		uint64_t lens[3], k = 0;
		lens[k++] = nulls ? (rows + 7) / 8 : 0;
		if (c->kind == ZN_ARROW_UTF8 && !dict[i]) {
			lens[k++] = 4 * (rows + 1);
			lens[k++] = plain_bytes(c, r0, r1);
		} else {
			lens[k++] = rows * (uint64_t)kind_width(c->kind);
		}
		for (uint64_t j = 0; j < k; j++) {
			bufs[2 * *nb] = off;
			bufs[2 * *nb + 1] = lens[j];
			off += PAD8(lens[j]);
			(*nb)++;
		}
	}
	return off;
}

/* The validity bits of rows [r0, r1), from bit 0. */
static void out_validity(struct out *o, const struct zn_arrow_col *c, uint64_t r0, uint64_t r1)
{
	uint8_t byte = 0;
	for (uint64_t r = r0; r < r1; r++) {
		byte |= (uint8_t)((c->valid.p[r / 8] >> (r % 8) & 1) << ((r - r0) % 8));
		if ((r - r0) % 8 == 7 || r + 1 == r1) {
			out_put(o, &byte, 1);
			byte = 0;
		}
	}
	out_pad8(o);
}

static void out_batch_body(struct out *o, const struct zn_arrow_table *t, const uint8_t *dict,
                           uint64_t r0, uint64_t r1)
{
	for (int i = 0; i < t->ncols; i++) {
		const struct zn_arrow_col *c = &t->cols[i];
		if (null_count(c, r0, r1))
			out_validity(o, c, r0, r1);
		size_t w = (size_t)kind_width(c->kind);
		if (c->kind != ZN_ARROW_UTF8 || dict[i]) {
			out_put(o, c->data.p + w * r0, w * (r1 - r0));
			out_pad8(o);
			continue;
		}
		uint32_t sum = 0;
		out_le(o, 0, 4);
		for (uint64_t r = r0; r < r1; r++) { /* offsets, then the bytes */
			size_t len = 0;
			if (c->valid.p[r / 8] >> (r % 8) & 1)
				dict_str(c, zn_get_le32(c->data.p + 4 * r), &len);
			sum += (uint32_t)len;
			out_le(o, sum, 4);
		}
		out_pad8(o);
		for (uint64_t r = r0; r < r1; r++) {
			size_t len = 0;
			const uint8_t *s = NULL;
			if (c->valid.p[r / 8] >> (r % 8) & 1)
				s = dict_str(c, zn_get_le32(c->data.p + 4 * r), &len);
			out_put(o, s, len);
		}
		out_pad8(o);
	}
}

/* The dictionary of column i as a DictionaryBatch: one utf8 column of its distinct values. */
static zn_result out_dictionary(struct out *o, const struct zn_arrow_col *c, int id, uint64_t *blk)
{
	struct fb f = {{0}, 0};
	uint64_t n = c->ndict, data = c->dict.n;
	uint64_t nodes[2] = {n, 0};
	uint64_t bufs[6] = {0, 0, 0, 4 * (n + 1), PAD8(4 * (n + 1)), data};
	uint64_t body = PAD8(4 * (n + 1)) + PAD8(data);
	size_t hdr_at;
	write_message(&f, HDR_DICTIONARY, body, &hdr_at);
	struct fb_table d = FB_TABLE0;
	tab_scalar(&d, 0, 8, (uint64_t)id);
	tab_offset(&d, 1);
	fb_patch(&f, hdr_at, fb_table(&f, &d));
	fb_patch(&f, d.at[1], write_record_batch(&f, n, nodes, 1, bufs, 3));
	if (f.oom) {
		ab_free(&f.b);
		return ZN_ERR_NOMEM;
	}
	out_message(o, &f, blk);
	ab_free(&f.b);
	blk[2] = body;
	for (uint64_t k = 0; k <= n; k++)
		out_le(o, zn_get_le64(c->dict_off.p + 8 * k), 4);
	out_pad8(o);
	out_put(o, c->dict.p, data);
	out_pad8(o);
	return ZN_OK;
}

/* The rows of the batch that starts at r0: up to max, fewer while a plain string column would
 * hold 1 GiB or more (its int32 offsets reach 2 GiB). */
static uint64_t batch_end(const struct zn_arrow_table *t, const uint8_t *dict, uint64_t r0,
                          uint64_t max)
{
	uint64_t r1 = r0 + ZN_MIN(max, t->rows - r0);
	for (int i = 0; i < t->ncols; i++)
		while (t->cols[i].kind == ZN_ARROW_UTF8 && !dict[i] && r1 - r0 > 1 &&
		       plain_bytes(&t->cols[i], r0, r1) >= ((uint64_t)1 << 30))
			r1 = r0 + (r1 - r0) / 2;
	return r1;
}

static zn_result out_batch(struct out *o, const struct zn_arrow_table *t, const uint8_t *dict,
                           uint64_t r0, uint64_t r1, uint64_t *blk)
{
	size_t nb;
	uint64_t *nodes = malloc(sizeof(uint64_t) * 2 * (size_t)t->ncols);
	uint64_t *bufs = malloc(sizeof(uint64_t) * 6 * (size_t)t->ncols);
	struct fb f = {{0}, 0};
	zn_result r = ZN_ERR_NOMEM;
	if (!nodes || !bufs)
		goto out;
	uint64_t body = plan_batch(t, dict, r0, r1, nodes, bufs, &nb);
	size_t hdr_at;
	write_message(&f, HDR_RECORD_BATCH, body, &hdr_at);
	fb_patch(&f, hdr_at, write_record_batch(&f, r1 - r0, nodes, (size_t)t->ncols, bufs, nb));
	if (f.oom)
		goto out;
	out_message(o, &f, blk);
	blk[2] = body;
	uint64_t start = o->pos;
	out_batch_body(o, t, dict, r0, r1);
	ZN_ASSERT(o->err || o->pos - start == body);
	(void)start;
	r = ZN_OK;
out:
	ab_free(&f.b);
	free(nodes);
	free(bufs);
	return r;
}

/* Footer { version, schema, dictionaries, recordBatches }, its length and the magic. */
static zn_result out_footer(struct out *o, const struct zn_arrow_table *t, const uint8_t *dict,
                            const uint64_t *dblk, size_t nd, const uint64_t *rblk, size_t nr)
{
	struct fb f = {{0}, 0};
	struct fb_table ft = FB_TABLE0;
	fb_le(&f, 0, 4);
	tab_scalar(&ft, 0, 2, META_V5);
	tab_offset(&ft, 1);
	tab_offset(&ft, 2);
	tab_offset(&ft, 3);
	fb_patch(&f, 0, fb_table(&f, &ft));
	fb_patch(&f, ft.at[1], write_schema(&f, t, dict));
	fb_patch(&f, ft.at[2], fb_struct_vector(&f, dblk, nd, 3));
	fb_patch(&f, ft.at[3], fb_struct_vector(&f, rblk, nr, 3));
	fb_pad(&f, 8, 0);
	if (f.oom) {
		ab_free(&f.b);
		return ZN_ERR_NOMEM;
	}
	out_put(o, f.b.p, f.b.n);
	out_le(o, f.b.n, 4);
	out_put(o, "ARROW1", 6);
	ab_free(&f.b);
	return ZN_OK;
}

zn_result zn_arrow_write_file(const struct zn_arrow_table *t, int fd, uint64_t batch_rows)
{
	if (t->err)
		return t->err;
	if (!batch_rows)
		batch_rows = 65536;
	static struct out zero_out;
	struct out *o = malloc(sizeof(*o));
	uint8_t *dict = calloc((size_t)t->ncols + 1, 1);
	size_t nbatches = (size_t)((t->rows + batch_rows - 1) / batch_rows), nr = 0, nd = 0;
	/* A batch cut shorter for its strings' sake adds batches: at most one per 1 GiB. */
	size_t cap = nbatches + 64;
	uint64_t *rblk = malloc(sizeof(uint64_t) * 3 * cap);
	uint64_t *dblk = malloc(sizeof(uint64_t) * 3 * ((size_t)t->ncols + 1));
	zn_result r = ZN_ERR_NOMEM;
	if (!o || !dict || !rblk || !dblk)
		goto out;
	*o = zero_out;
	o->fd = fd;
	for (int i = 0; i < t->ncols; i++) /* dictionary-encoded where that is smaller */
		dict[i] = t->cols[i].kind == ZN_ARROW_UTF8 && t->rows &&
		          2 * (uint64_t)t->cols[i].ndict <= t->rows &&
		          t->cols[i].dict.n < ((uint64_t)1 << 30);
	out_put(o, "ARROW1\0\0", 8);
	struct fb f = {{0}, 0};
	size_t hdr_at;
	write_message(&f, HDR_SCHEMA, 0, &hdr_at);
	fb_patch(&f, hdr_at, write_schema(&f, t, dict));
	uint64_t sblk[3];
	if (f.oom) {
		ab_free(&f.b);
		goto out;
	}
	out_message(o, &f, sblk);
	ab_free(&f.b);
	for (int i = 0; i < t->ncols; i++)
		if (dict[i] && (r = out_dictionary(o, &t->cols[i], i, dblk + 3 * nd++)) != ZN_OK)
			goto out;
	for (uint64_t r0 = 0; r0 < t->rows; nr++) {
		uint64_t r1 = batch_end(t, dict, r0, batch_rows);
		if (nr == cap) {
			r = ZN_ERR_LIMIT;
			goto out;
		}
		if ((r = out_batch(o, t, dict, r0, r1, rblk + 3 * nr)) != ZN_OK)
			goto out;
		r0 = r1;
	}
	out_le(o, 0xffffffffu, 4); /* end of stream */
	out_le(o, 0, 4);
	r = out_footer(o, t, dict, dblk, nd, rblk, nr);
	out_flush(o);
	if (r == ZN_OK)
		r = o->err;
out:
	free(o);
	free(dict);
	free(rblk);
	free(dblk);
	return r;
}
