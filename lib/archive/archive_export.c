/* SPDX-License-Identifier: MIT */
/* archive_export.c - the index of one or many archives as one table: Arrow IPC, JSON Lines, CSV.
 *
 * Rows come from the reader's public iteration (zn_reader_entry_lost), one archive after another,
 * each in path order. JSON Lines and CSV are written as they come through a 64 KiB buffer; an
 * Arrow file needs its dictionaries before its batches, so its rows are held in a
 * struct zn_arrow_table (lib/arrow) and written by zn_exporter_finish(). The package columns are
 * the archive's own (create found them in each package's metadata); an archive made before they
 * existed gets the path-only fallbacks of lib/pkg for files whose names are package files, as
 * reading each package's members here would decode content.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archive_internal.h"
#include "arrow/arrow_ipc.h"
#include "common/common.h"

enum {
	C_PATH,
	C_TYPE,
	C_SIZE,
	C_MODE,
	C_MTIME,
	C_SHA256,
	C_PKG_TYPE,
	C_PKG_GROUP,
	C_PKG_NAME,
	C_PKG_VERSION,
	C_REPO,
	C_ARCHIVE,
	C_COUNT
};

static const char *const col_names[C_COUNT] = {
        "path",   "type",         "size",          "mode",         "mtime",
        "sha256", "package_type", "package_group", "package_name", "package_version",
        "repo",   "archive",
};

static const int col_kinds[C_COUNT] = {
        ZN_ARROW_UTF8,  ZN_ARROW_UTF8,  ZN_ARROW_UINT64, ZN_ARROW_UINT32,
        ZN_ARROW_TS_NS, ZN_ARROW_FSB32, ZN_ARROW_UTF8,   ZN_ARROW_UTF8,
        ZN_ARROW_UTF8,  ZN_ARROW_UTF8,  ZN_ARROW_UTF8,   ZN_ARROW_UTF8,
};

struct zn_exporter {
	int fd, format;
	uint64_t rows;
	zn_result err;
	struct zn_arrow_table t; /* ZN_EXPORT_ARROW */
	size_t n;                /* bytes in buf (text formats) */
	int64_t last_sec;        /* iso_time's cache */
	char last_date[32];
	char buf[1 << 16];
};

/* One row's values, as the formats take them; a NULL string is null. */
struct row {
	const char *path;
	size_t path_len;
	const char *type;
	uint64_t size;
	uint32_t mode;
	int64_t mtime_ns;
	const uint8_t *sha256;
	int has_mode, has_mtime;
	const char *pkg[4]; /* type, group, name, version */
	const char *repo, *archive;
};

/* ---- text output ---- */

static void flush_text(struct zn_exporter *x)
{
	size_t done = 0;
	while (x->err == ZN_OK && done < x->n) {
		ssize_t k = write(x->fd, x->buf + done, x->n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			x->err = ZN_ERR_IO;
			break;
		}
		done += (size_t)k;
	}
	x->n = 0;
}

static void put(struct zn_exporter *x, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		if (x->n == sizeof(x->buf))
			flush_text(x);
		size_t k = ZN_MIN(n, sizeof(x->buf) - x->n);
		memcpy(x->buf + x->n, s, k);
		x->n += k;
		s += k;
		n -= k;
	}
}

static void puts_(struct zn_exporter *x, const char *s)
{
	put(x, s, strlen(s));
}

/* The length of the UTF-8 character at s (n bytes left), 0 when it is not one (RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
	if (!k || k > n || (k == 2 && c < 0xc2) || c > 0xf4)
		return 0;
	for (size_t j = 1; j < k; j++)
		if ((s[j] & 0xc0) != 0x80)
			return 0;
	unsigned char c1 = k > 1 ? s[1] : 0;
	if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) ||
	    (c == 0xf4 && c1 > 0x8f))
		return 0;
	return k;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_str(struct zn_exporter *x, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	put(x, "\"", 1);
	size_t plain = 0; /* the common case: printable ASCII, written at once */
	while (plain < n && u[plain] >= 0x20 && u[plain] < 0x80 && u[plain] != '"' &&
	       u[plain] != '\\')
		plain++;
	put(x, u, plain);
	for (size_t i = plain; i < n;) {
		size_t k = utf8_len(u + i, n - i);
		char esc[8];
		if (!k) {
			puts_(x, "\\ufffd");
			i++;
		} else if (u[i] == '"' || u[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)u[i++];
			put(x, esc, 2);
		} else if (u[i] < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", u[i++]);
			put(x, esc, 6);
		} else {
			put(x, u + i, k);
			i += k;
		}
	}
	put(x, "\"", 1);
}

/* A CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF. */
static void csv_str(struct zn_exporter *x, const char *s, size_t n)
{
	if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) &&
	    !memchr(s, '\r', n)) {
		put(x, s, n);
		return;
	}
	put(x, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			put(x, "\"", 1);
		put(x, s + i, 1);
	}
	put(x, "\"", 1);
}

/* 2026-12-04T22:45:00.123456789Z. The date of the last second asked for is kept: the entries of
 * a tree mostly share a few. */
static void iso_time(int64_t ns, char out[48], int64_t *last_sec, char last_date[32])
{
	int64_t sec = ns / 1000000000, rest = ns % 1000000000;
	if (rest < 0)
		rest += 1000000000, sec--;
	if (sec != *last_sec || !last_date[0]) {
		time_t t = (time_t)sec;
		struct tm tm;
		strcpy(last_date, "?");
		if (gmtime_r(&t, &tm))
			strftime(last_date, 32, "%Y-%m-%dT%H:%M:%S", &tm);
		*last_sec = sec;
	}
	size_t k = strlen(last_date);
	memcpy(out, last_date, k);
	out[k++] = '.';
	for (int d = 8; d >= 0; d--, rest /= 10)
		out[k + (size_t)d] = (char)('0' + rest % 10);
	memcpy(out + k + 9, "Z", 2);
}

/* The text of every column but path, as JSON and CSV show them ("" with *null for a null). */
static const char *cell(struct zn_exporter *x, const struct row *w, int c, char tmp[72], int *null)
{
	*null = 0;
	switch (c) {
	case C_TYPE:
		return w->type;
	case C_SIZE:
		snprintf(tmp, 72, "%llu", (unsigned long long)w->size);
		return tmp;
	case C_MODE:
		*null = !w->has_mode;
		snprintf(tmp, 72, "%04o", w->mode);
		return *null ? "" : tmp;
	case C_MTIME:
		*null = !w->has_mtime;
		iso_time(w->mtime_ns, tmp, &x->last_sec, x->last_date);
		return *null ? "" : tmp;
	case C_SHA256:
		*null = !w->sha256;
		for (int k = 0; k < 32 && w->sha256; k++) {
			tmp[2 * k] = "0123456789abcdef"[w->sha256[k] >> 4];
			tmp[2 * k + 1] = "0123456789abcdef"[w->sha256[k] & 15];
		}
		tmp[64] = 0;
		return *null ? "" : tmp;
	case C_REPO:
	case C_ARCHIVE: {
		const char *s = c == C_REPO ? w->repo : w->archive;
		*null = !s;
		return s ? s : "";
	}
	default: {
		const char *s = w->pkg[c - C_PKG_TYPE];
		*null = !s;
		return s ? s : "";
	}
	}
}

static void row_jsonl(struct zn_exporter *x, const struct row *w)
{
	puts_(x, "{\"path\":");
	json_str(x, w->path, w->path_len);
	for (int c = C_TYPE; c < C_COUNT; c++) {
		char tmp[72];
		int null;
		const char *v = cell(x, w, c, tmp, &null);
		put(x, ",\"", 2);
		puts_(x, col_names[c]);
		put(x, "\":", 2);
		if (null)
			puts_(x, "null");
		else if (c == C_SIZE)
			puts_(x, v);
		else
			json_str(x, v, strlen(v));
	}
	put(x, "}\n", 2);
}

static void row_csv(struct zn_exporter *x, const struct row *w)
{
	csv_str(x, w->path, w->path_len);
	for (int c = C_TYPE; c < C_COUNT; c++) {
		char tmp[72];
		int null;
		const char *v = cell(x, w, c, tmp, &null);
		put(x, ",", 1);
		csv_str(x, v, strlen(v));
	}
	put(x, "\r\n", 2);
}

static void arrow_str(struct zn_arrow_table *t, int c, const char *s)
{
	if (s)
		zn_arrow_put_str(t, c, s, strlen(s));
	else
		zn_arrow_put_null(t, c);
}

static void row_arrow(struct zn_arrow_table *t, const struct row *w)
{
	zn_arrow_put_str(t, C_PATH, w->path, w->path_len);
	arrow_str(t, C_TYPE, w->type);
	zn_arrow_put_u64(t, C_SIZE, w->size);
	if (w->has_mode)
		zn_arrow_put_u64(t, C_MODE, w->mode);
	else
		zn_arrow_put_null(t, C_MODE);
	if (w->has_mtime)
		zn_arrow_put_u64(t, C_MTIME, (uint64_t)w->mtime_ns);
	else
		zn_arrow_put_null(t, C_MTIME);
	if (w->sha256)
		zn_arrow_put_fsb(t, C_SHA256, w->sha256);
	else
		zn_arrow_put_null(t, C_SHA256);
	for (int k = 0; k < 4; k++)
		arrow_str(t, C_PKG_TYPE + k, w->pkg[k]);
	arrow_str(t, C_REPO, w->repo);
	arrow_str(t, C_ARCHIVE, w->archive);
	zn_arrow_end_row(t);
}

/* ---- the exporter ---- */

zn_result zn_exporter_open(struct zn_exporter **out, int fd, int format)
{
	*out = NULL;
	if (fd < 0 || format < ZN_EXPORT_ARROW || format > ZN_EXPORT_CSV)
		return ZN_ERR_INVALID_ARG;
	struct zn_exporter *x = calloc(1, sizeof(*x));
	if (!x)
		return ZN_ERR_NOMEM;
	x->fd = fd;
	x->format = format;
	if (format == ZN_EXPORT_ARROW) {
		zn_result r = zn_arrow_table_init(&x->t, col_names, col_kinds, C_COUNT);
		if (r != ZN_OK) {
			free(x);
			return r;
		}
	} else if (format == ZN_EXPORT_CSV) {
		for (int c = 0; c < C_COUNT; c++) {
			if (c)
				put(x, ",", 1);
			puts_(x, col_names[c]);
		}
		put(x, "\r\n", 2);
	}
	*out = x;
	return ZN_OK;
}

static const char *type_name(uint32_t t)
{
	static const char *const names[] = {"file", "dir", "symlink", "hardlink"};
	return t < 4 ? names[t] : "unknown";
}

zn_result zn_exporter_add(struct zn_exporter *x, struct zn_reader *r, const char *archive,
                          const char *repo)
{
	uint64_t n = zn_reader_count(r);
	int damaged = 0;
	/* The archive's own package columns, if it has them, and its repository name unless one
	 * is given. */
	const int stored = r->cols[ZN_COL_PKG_TYPE].present;
	char own_repo[256];
	if (!repo && zn_reader_repo(r, own_repo))
		repo = own_repo;
	for (uint64_t i = 0; i < n && x->err == ZN_OK; i++) {
		struct zn_entry e;
		unsigned lost = 0;
		if (zn_reader_entry_lost(r, i, &e, &lost) != ZN_OK) {
			damaged = 1;
			continue;
		}
		/* A file below the archive's digest_min_size: its digest from its content. */
		if (e.type == ZN_TYPE_FILE && !e.has_digest &&
		    e.size < zn_reader_digest_min_size(r) && !(lost & ZN_LOST_DIGEST)) {
			if (zn_reader_digest(r, i, e.sha256) == ZN_OK)
				e.has_digest = 1;
			else
				damaged = 1;
		}
		struct row w = {e.path,
		                e.path_len,
		                type_name(e.type),
		                e.size,
		                e.mode,
		                e.mtime_ns,
		                e.has_digest ? e.sha256 : NULL,
		                !(lost & ZN_LOST_MODE),
		                !(lost & ZN_LOST_MTIME),
		                {NULL, NULL, NULL, NULL},
		                repo,
		                archive};
		struct zn_pkg_coord pc = {.struct_size = sizeof(pc)};
		int kind =
		        stored || e.type != ZN_TYPE_FILE ? 0 : zn_pkg_file_kind(e.path, e.path_len);
		if (stored)
			damaged |= zn_reader_package(r, i, &pc) != ZN_OK;
		else if (kind) /* pc stays empty where it fails */
			zn_pkg_from_path(kind, e.path, e.path_len, &pc);
		if (pc.type != ZN_PKG_NONE) {
			w.pkg[0] = zn_pkg_type_name(pc.type);
			w.pkg[1] = pc.group[0] ? pc.group : NULL;
			w.pkg[2] = pc.name;
			w.pkg[3] = pc.version;
		}
		damaged |= lost != 0;
		if (x->format == ZN_EXPORT_ARROW) {
			row_arrow(&x->t, &w);
			x->err = x->t.err;
		} else if (x->format == ZN_EXPORT_JSONL) {
			row_jsonl(x, &w);
		} else {
			row_csv(x, &w);
		}
		x->rows += x->err == ZN_OK;
	}
	if (x->err != ZN_OK)
		return x->err;
	return damaged ? ZN_ERR_DAMAGED : ZN_OK;
}

zn_result zn_exporter_finish(struct zn_exporter *x, uint64_t *rows)
{
	uint64_t batch = 0; /* the default */
#ifdef ZN_TEST_HOOKS
	/* Small batches, so that a test of a few rows reads a file of several. */
	if (getenv("ZN_ARROW_BATCH_ROWS"))
		batch = strtoull(getenv("ZN_ARROW_BATCH_ROWS"), NULL, 10);
#endif
	if (x->err == ZN_OK && x->format == ZN_EXPORT_ARROW)
		x->err = zn_arrow_write_file(&x->t, x->fd, batch);
	else
		flush_text(x);
	if (rows)
		*rows = x->rows;
	return x->err;
}

void zn_exporter_free(struct zn_exporter *x)
{
	if (!x)
		return;
	if (x->format == ZN_EXPORT_ARROW)
		zn_arrow_table_free(&x->t);
	free(x);
}
