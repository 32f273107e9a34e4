/* SPDX-License-Identifier: MIT */
/* test_arrow_ipc.c - the Arrow IPC file writer read back by a small flatbuffer reader of its own:
 * the file's framing (magic, 8-byte alignment, continuation markers, footer blocks pointing at
 * their messages), and every value of a random table with nulls, plain and dictionary-encoded
 * strings, cut into batches whose row counts are not multiples of 8. (tests/cli_index_arrow.sh
 * holds the same files to apache-arrow; this test runs without node.) */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow_ipc.h"
#include "common/common.h"
#include "test_util.h"

/* ---- a minimal flatbuffer reader, bounds-checked against the buffer ---- */

struct fbr {
	const uint8_t *p;
	size_t n;
};

static uint32_t u32_at(struct fbr b, size_t at)
{
	CHECK(at + 4 <= b.n);
	return zn_get_le32(b.p + at);
}

/* Position of field `id` of the table at `t`, or 0 when absent. */
static size_t field(struct fbr b, size_t t, int id)
{
	int32_t so = (int32_t)u32_at(b, t);
	size_t vt = (size_t)((int64_t)t - so);
	CHECK(vt + 4 <= b.n);
	uint16_t vsize = zn_get_le16(b.p + vt);
	if (4 + 2 * (size_t)id >= vsize)
		return 0;
	uint16_t off = zn_get_le16(b.p + vt + 4 + 2 * id);
	return off ? t + off : 0;
}

static uint64_t scalar(struct fbr b, size_t t, int id, int size)
{
	size_t at = field(b, t, id);
	if (!at)
		return 0;
	CHECK(at + (size_t)size <= b.n && at % (size_t)size == 0);
	uint64_t v = 0;
	memcpy(&v, b.p + at, (size_t)size);
	return v;
}

/* The object an offset field points at. */
static size_t deref(struct fbr b, size_t t, int id)
{
	size_t at = field(b, t, id);
	CHECK(at);
	return at + u32_at(b, at);
}

/* ---- the table written ---- */

enum { ROWS = 203, NCOLS = 6 };
static const char *const names[NCOLS] = {"s", "d", "u64", "u32", "ts", "h"};
static const int kinds[NCOLS] = {ZN_ARROW_UTF8,   ZN_ARROW_UTF8,  ZN_ARROW_UINT64,
                                 ZN_ARROW_UINT32, ZN_ARROW_TS_NS, ZN_ARROW_FSB32};

struct want {
	char s[ROWS][24], d[ROWS][8];
	uint64_t u64[ROWS];
	int null[ROWS][NCOLS];
};

/* A value's bytes in a batch: buffer k (offset, length) of the body at body. */
static const uint8_t *buffer(const uint8_t *file, size_t body, const uint64_t *bufs, int k,
                             uint64_t *len)
{
	*len = bufs[2 * k + 1];
	CHECK(bufs[2 * k] % 8 == 0);
	return file + body + bufs[2 * k];
}

static int valid_bit(const uint8_t *bitmap, uint64_t len, uint64_t i)
{
	return !len || (bitmap[i / 8] >> (i % 8) & 1);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_arrow_ipc");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	static struct want w;
	struct zn_arrow_table t;
	CHECK_OK(zn_arrow_table_init(&t, names, kinds, NCOLS));
	for (int r = 0; r < ROWS; r++) {
		snprintf(w.s[r], sizeof(w.s[r]), "row-%d-%llu", r,
		         (unsigned long long)tu_rng_below(&g, 1000));
		snprintf(w.d[r], sizeof(w.d[r]), "k%d", (int)tu_rng_below(&g, 5));
		w.u64[r] = tu_rng_next(&g);
		for (int c = 0; c < NCOLS; c++)
			w.null[r][c] = tu_rng_below(&g, 4) == 0;
		uint8_t h[32];
		memset(h, r & 0xff, 32);
		if (w.null[r][0])
			zn_arrow_put_null(&t, 0);
		else
			zn_arrow_put_str(&t, 0, w.s[r], strlen(w.s[r]));
		if (w.null[r][1])
			zn_arrow_put_null(&t, 1);
		else
			zn_arrow_put_str(&t, 1, w.d[r], strlen(w.d[r]));
		for (int c = 2; c < 5; c++)
			if (w.null[r][c])
				zn_arrow_put_null(&t, c);
			else
				zn_arrow_put_u64(&t, c, w.u64[r]);
		if (w.null[r][5])
			zn_arrow_put_null(&t, 5);
		else
			zn_arrow_put_fsb(&t, 5, h);
		zn_arrow_end_row(&t);
	}
	CHECK_OK(t.err);
	char *dir = tu_mkdtemp(), *path = tu_fmt("%s/t.arrow", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_OK(zn_arrow_write_file(&t, fd, 50)); /* batches of 50, 50, 50, 50, 3 */
	close(fd);
	zn_arrow_table_free(&t);
	size_t n;
	uint8_t *f = tu_read_file(path, &n);
	CHECK(f && n > 32 && !memcmp(f, "ARROW1\0\0", 8) && !memcmp(f + n - 6, "ARROW1", 6));

	/* The footer: its schema names the columns; its blocks point at messages. */
	uint32_t flen = zn_get_le32(f + n - 10);
	CHECK(flen % 8 == 0 && flen + 10 < n);
	struct fbr fb = {f + n - 10 - flen, flen};
	size_t root = u32_at(fb, 0);
	CHECK(scalar(fb, root, 0, 2) == 4); /* V5 */
	size_t schema = deref(fb, root, 1), fields = deref(fb, schema, 1);
	CHECK(u32_at(fb, fields) == NCOLS);
	int dict_col = -1;
	for (int c = 0; c < NCOLS; c++) {
		size_t fpos = fields + 4 + 4 * (size_t)c, fl = fpos + u32_at(fb, fpos);
		size_t nm = deref(fb, fl, 0);
		CHECK(u32_at(fb, nm) == strlen(names[c]) &&
		      !memcmp(fb.p + nm + 4, names[c], strlen(names[c])));
		if (field(fb, fl, 4))
			dict_col = c;
	}
	CHECK(dict_col == 1); /* 5 distinct values of 203: encoded; 203 distinct: plain */
	size_t dblocks = deref(fb, root, 2), rblocks = deref(fb, root, 3);
	CHECK(u32_at(fb, dblocks) == 1 && u32_at(fb, rblocks) == 5);

	/* The dictionary batch: its values. */
	const uint8_t *db = fb.p + dblocks + 4;
	uint64_t doff = zn_get_le64(db), dmeta = zn_get_le32(db + 8);
	CHECK(doff % 8 == 0 && zn_get_le32(f + doff) == 0xffffffffu);
	struct fbr dm = {f + doff + 8, zn_get_le32(f + doff + 4)};
	CHECK(dmeta == 8 + dm.n);
	size_t dmsg = u32_at(dm, 0), dbatch = deref(dm, dmsg, 2), drb = deref(dm, dbatch, 1);
	CHECK(scalar(dm, dmsg, 1, 1) == 2 && scalar(dm, dbatch, 0, 8) == 1);
	uint64_t ndict = scalar(dm, drb, 0, 8);
	size_t dbufs = deref(dm, drb, 2);
	uint64_t dlen, olen;
	const uint8_t *doffs =
	        buffer(f, doff + dmeta, (const uint64_t *)(dm.p + dbufs + 4), 1, &olen);
	const uint8_t *dchars =
	        buffer(f, doff + dmeta, (const uint64_t *)(dm.p + dbufs + 4), 2, &dlen);
	CHECK(ndict == 5 && olen == 4 * (ndict + 1));

	/* Every record batch: every value. */
	uint64_t row = 0;
	for (int b = 0; b < 5; b++) {
		const uint8_t *blk = fb.p + rblocks + 4 + 24 * (size_t)b;
		uint64_t off = zn_get_le64(blk), meta = zn_get_le32(blk + 8),
		         body = zn_get_le64(blk + 16);
		CHECK(off % 8 == 0 && body % 8 == 0 && zn_get_le32(f + off) == 0xffffffffu);
		struct fbr m = {f + off + 8, zn_get_le32(f + off + 4)};
		CHECK(meta == 8 + m.n && off + meta + body <= n);
		size_t msg = u32_at(m, 0), rb = deref(m, msg, 2);
		CHECK(scalar(m, msg, 1, 1) == 3 && scalar(m, msg, 3, 8) == body);
		uint64_t rows = scalar(m, rb, 0, 8);
		CHECK(rows == (b < 4 ? 50 : 3));
		const uint64_t *nodes = (const uint64_t *)(m.p + deref(m, rb, 1) + 4);
		const uint64_t *bufs = (const uint64_t *)(m.p + deref(m, rb, 2) + 4);
		CHECK(u32_at(m, deref(m, rb, 2)) == 2 * NCOLS + 1);
		int k = 0;
		for (int c = 0; c < NCOLS; c++) {
			uint64_t vlen, len, nulls = 0;
			const uint8_t *valid = buffer(f, off + meta, bufs, k++, &vlen);
			CHECK(nodes[2 * c] == rows);
			for (uint64_t i = 0; i < rows; i++) {
				int ok = valid_bit(valid, vlen, i);
				CHECK(ok == !w.null[row + i][c]);
				nulls += !ok;
			}
			CHECK(nodes[2 * c + 1] == nulls);
			const uint8_t *data = buffer(f, off + meta, bufs, k++, &len);
			const uint8_t *chars =
			        c == 0 ? buffer(f, off + meta, bufs, k++, &len) : NULL;
			for (uint64_t i = 0; i < rows; i++) {
				uint64_t r = row + i;
				if (w.null[r][c])
					continue;
				if (c == 0) {
					uint32_t s0 = zn_get_le32(data + 4 * i),
					         s1 = zn_get_le32(data + 4 * i + 4);
					CHECK(s1 - s0 == strlen(w.s[r]) &&
					      !memcmp(chars + s0, w.s[r], s1 - s0));
				} else if (c == 1) {
					uint32_t id = zn_get_le32(data + 4 * i);
					CHECK(id < ndict);
					uint32_t s0 = zn_get_le32(doffs + 4 * id),
					         s1 = zn_get_le32(doffs + 4 * id + 4);
					CHECK(s1 <= dlen && s1 - s0 == strlen(w.d[r]) &&
					      !memcmp(dchars + s0, w.d[r], s1 - s0));
				} else if (c == 3) {
					CHECK(zn_get_le32(data + 4 * i) == (uint32_t)w.u64[r]);
				} else if (c == 5) {
					for (int j = 0; j < 32; j++)
						CHECK(data[32 * i + (uint64_t)j] == (r & 0xff));
				} else {
					CHECK(zn_get_le64(data + 8 * i) == w.u64[r]);
				}
			}
		}
		row += rows;
	}
	CHECK(row == ROWS);
	free(f);

	/* An empty table is a valid file with no batches; a write error is ZN_ERR_IO. */
	CHECK_OK(zn_arrow_table_init(&t, names, kinds, NCOLS));
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK_OK(zn_arrow_write_file(&t, fd, 0));
	close(fd);
	f = tu_read_file(path, &n);
	CHECK(f && !memcmp(f + n - 6, "ARROW1", 6));
	free(f);
	fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		CHECK(zn_arrow_write_file(&t, fd, 0) == ZN_ERR_IO);
		close(fd);
	}
	zn_arrow_table_free(&t);
	tu_rmtree(dir);
	free(dir);
	free(path);
	printf("test_arrow_ipc: ok\n");
	return 0;
}
