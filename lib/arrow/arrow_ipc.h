/* SPDX-License-Identifier: MIT */
/* arrow_ipc.h - a table built row by row in memory and written as an Arrow IPC file. */
#ifndef ZN_ARROW_IPC_H
#define ZN_ARROW_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "znippy.h"

/* The column types the index needs. */
enum zn_arrow_kind {
	ZN_ARROW_UTF8,   /* utf8; dictionary-encoded (int32 indices) where that is smaller */
	ZN_ARROW_UINT64, /* uint64 */
	ZN_ARROW_INT64,  /* int64 */
	ZN_ARROW_UINT32, /* uint32 */
	ZN_ARROW_TS_NS,  /* timestamp[ns, UTC] (int64) */
	ZN_ARROW_FSB32,  /* fixed_size_binary[32] */
};

/* A growable byte buffer. */
struct zn_abuf {
	uint8_t *p;
	size_t n, cap;
};

struct zn_arrow_col {
	const char *name;     /* not copied: must outlive the table */
	int kind;             /* enum zn_arrow_kind */
	struct zn_abuf data;  /* fixed-width values; for UTF8 the int32 ids of the rows */
	struct zn_abuf valid; /* validity bitmap, a bit a row (1: valid) */
	uint64_t nulls;
	/* UTF8: the distinct strings, interned: their bytes, their offsets (uint64, ndict + 1) and
	 * an open-addressing hash table of ids + 1 (0: empty). */
	struct zn_abuf dict, dict_off;
	uint32_t *slots;
	size_t nslots;
	uint32_t ndict;
};

struct zn_arrow_table {
	struct zn_arrow_col *cols;
	int ncols;
	uint64_t rows; /* rows ended */
	zn_result err; /* the first failure of an append (sticky) */
};

/* A table of n columns named and typed as given (names must outlive it). ZN_ERR_NOMEM. */
zn_result zn_arrow_table_init(struct zn_arrow_table *t, const char *const *names, const int *kinds,
                              int n);
void zn_arrow_table_free(struct zn_arrow_table *t);

/* Appends to column c of the row being built: every column once per row, then end_row. A
 * failure (out of memory, a string of 2 GiB or more) is kept in t->err and ends the appends. */
void zn_arrow_put_str(struct zn_arrow_table *t, int c, const char *s, size_t len);
void zn_arrow_put_u64(struct zn_arrow_table *t, int c, uint64_t v); /* any fixed-width integer */
void zn_arrow_put_fsb(struct zn_arrow_table *t, int c, const uint8_t v[32]);
void zn_arrow_put_null(struct zn_arrow_table *t, int c);
void zn_arrow_end_row(struct zn_arrow_table *t);

/* Writes the table to fd as an Arrow IPC file (format version V5): magic, schema, a dictionary
 * batch for each dictionary-encoded column, record batches of at most `batch_rows` rows (0: a
 * default of 65536) and the footer. ZN_ERR_IO (errno set), ZN_ERR_NOMEM, or t->err. */
zn_result zn_arrow_write_file(const struct zn_arrow_table *t, int fd, uint64_t batch_rows);

#endif
