/* SPDX-License-Identifier: MIT */
/* pkg_detect.c - a package file's coordinates from its bytes.
 *
 * A ZIP (jar, wheel, zip sdist) is read through its central directory: the end record is found
 * in the last 64 KiB, every directory record's name is ranked (zn_pkg_member_rank) and the best
 * member's data is taken from where its local header says, stored or inflated, and checked by
 * its CRC-32. A gzip'd tar (crate, npm tarball, sdist) has no directory: it is decoded from its
 * start, its headers walked (ustar, GNU long names, pax paths) until a member of the best rank
 * there can be (or the decode budget, TAR_OUT_MAX and TAR_RATIO) is reached. A .pom is its own
 * metadata.
 *
 * The bytes are untrusted. Every offset is checked against the view, sizes against
 * ZN_PKG_META_MAX, the directory walk against its declared size and the tar decode against
 * TAR_OUT_MAX, so the work is bounded by the bytes the file has and never fails the caller: what
 * cannot be read falls back to the path's coordinates where the name alone says what the file is
 * (a jar, pom, wheel or crate: not a .tar.gz, .zip or .tgz, names any archive may have), or none.
 */
#include <stdlib.h>
#include <string.h>

#include "common/sized.h"
#include "pkg_internal.h"

/* Decoded tar bytes a detector reads at most before it gives up on finding the member: 64 MiB,
 * and no more than TAR_RATIO times the compressed bytes (1 MiB at least), so that a small gzip
 * bomb named .tgz costs no more than a real package of its size. */
#define TAR_OUT_MAX ((uint64_t)64 << 20)
#define TAR_RATIO   32

void pkg_work_release(struct pkg_work *w)
{
	zn_inflater_free(w->raw);
	zn_inflater_free(w->gz);
	free(w->buf);
	*w = (struct pkg_work){0};
}

static int work_buf(struct pkg_work *w, size_t n)
{
	if (n <= w->cap)
		return 1;
	size_t cap = n < 4096 ? 4096 : n;
	uint8_t *b = realloc(w->buf, cap);
	if (!b)
		return 0;
	w->buf = b;
	w->cap = cap;
	return 1;
}

/* [off, off + n) of the file, if the view holds all of it; else NULL. */
static const uint8_t *view_at(const struct pkg_view *v, uint64_t off, uint64_t n)
{
	if (off > v->size || n > v->size - off)
		return NULL;
	if (off + n <= v->head_len)
		return v->head + off;
	if (v->tail && off >= v->tail_off)
		return v->tail + (off - v->tail_off);
	return NULL;
}

/* ------------------------------------------------------------------------------------------------
 * ZIP
 * ---------------------------------------------------------------------------------------------- */

struct zip_dir {
	uint64_t count, size, off; /* the central directory's records, bytes and offset */
	uint64_t base;             /* where offset 0 of the archive is in the file (a prefix) */
};

/* The end records: ZIP64's where the classic one's fields are saturated. */
static int zip_end(const struct pkg_view *v, struct zip_dir *d)
{
	uint64_t lo = v->size > 22 + 65535 ? v->size - 22 - 65535 : 0;
	for (uint64_t at = v->size >= 22 ? v->size - 22 + 1 : 0; at-- > lo;) {
		const uint8_t *e = view_at(v, at, 22);
		if (!e)
			return 0;
		if (zn_get_le32(e) != 0x06054b50u || at + 22 + zn_get_le16(e + 20) > v->size)
			continue;
		uint64_t end = at; /* where the directory ends */
		d->count = zn_get_le16(e + 10);
		d->size = zn_get_le32(e + 12);
		d->off = zn_get_le32(e + 16);
		if (d->count == 0xffff || d->size == 0xffffffffu || d->off == 0xffffffffu) {
			const uint8_t *l = at >= 20 ? view_at(v, at - 20, 20) : NULL;
			if (!l || zn_get_le32(l) != 0x07064b50u)
				return 0;
			uint64_t e64 = zn_get_le64(l + 8);
			const uint8_t *r = view_at(v, e64, 56);
			if (!r || zn_get_le32(r) != 0x06064b50u)
				return 0;
			d->count = zn_get_le64(r + 32);
			d->size = zn_get_le64(r + 40);
			d->off = zn_get_le64(r + 48);
			end = e64; /* offsets still count from the archive's start: see base */
		}
		if (d->size > end || d->off > end - d->size)
			return 0;
		d->base = end - d->size - d->off;
		return 1;
	}
	return 0;
}

struct zip_member {
	uint64_t csize, usize, local;
	uint32_t crc;
	uint16_t method, flags;
	int meta;
};

/* ZIP64's sizes and offset from the extra field, for those the record saturates. */
static void zip64_extra(const uint8_t *x, uint32_t n, struct zip_member *m)
{
	for (uint32_t i = 0; i + 4 <= n;) {
		uint16_t id = zn_get_le16(x + i), len = zn_get_le16(x + i + 2);
		if (len > n - i - 4)
			return;
		if (id == 1) {
			const uint8_t *p = x + i + 4, *end = p + len;
			uint64_t *f[3] = {&m->usize, &m->csize, &m->local};
			for (int k = 0; k < 3; k++)
				if (*f[k] == 0xffffffffu && p + 8 <= end) {
					*f[k] = zn_get_le64(p);
					p += 8;
				}
			return;
		}
		i += 4 + len;
	}
}

/* The best-ranked metadata member of the directory (the first among equals): its rank, 0 if
 * none. */
static int zip_best(const struct pkg_view *v, const struct zip_dir *d, int kind, const char *path,
                    size_t len, struct zip_member *best)
{
	const uint8_t *p = view_at(v, d->base + d->off, d->size);
	if (!p)
		return 0;
	int best_rank = 0;
	uint64_t at = 0;
	for (uint64_t i = 0; i < d->count && d->size - at >= 46; i++) {
		const uint8_t *r = p + at;
		if (zn_get_le32(r) != 0x02014b50u)
			break;
		uint32_t nlen = zn_get_le16(r + 28), xlen = zn_get_le16(r + 30);
		uint64_t rec = 46ull + nlen + xlen + zn_get_le16(r + 32);
		if (rec > d->size - at)
			break;
		int meta;
		int rank = zn_pkg_member_rank(kind, path, len, (const char *)r + 46, nlen, &meta);
		if (rank > best_rank) {
			*best = (struct zip_member){
			        .csize = zn_get_le32(r + 20),
			        .usize = zn_get_le32(r + 24),
			        .local = zn_get_le32(r + 42),
			        .crc = zn_get_le32(r + 16),
			        .method = zn_get_le16(r + 10),
			        .flags = zn_get_le16(r + 8),
			        .meta = meta,
			};
			zip64_extra(r + 46 + nlen, xlen, best);
			best_rank = rank;
		}
		at += rec;
	}
	return best_rank;
}

/* The member's bytes, decoded into w->buf; its length in *n. */
static zn_result zip_read(struct pkg_work *w, const struct pkg_view *v, const struct zip_dir *d,
                          const struct zip_member *m, size_t *n)
{
	if (m->usize > ZN_PKG_META_MAX || m->csize > v->size || (m->flags & 1))
		return ZN_ERR_LIMIT;
	const uint8_t *l = view_at(v, d->base + m->local, 30);
	if (!l || zn_get_le32(l) != 0x04034b50u)
		return ZN_ERR_CORRUPT;
	uint64_t data = d->base + m->local + 30 + zn_get_le16(l + 26) + zn_get_le16(l + 28);
	const uint8_t *in = view_at(v, data, m->csize);
	if (!in)
		return ZN_ERR_CORRUPT;
	if (!work_buf(w, m->usize + 1))
		return ZN_ERR_NOMEM;
	if (m->method == 0) {
		if (m->csize != m->usize)
			return ZN_ERR_CORRUPT;
		memcpy(w->buf, in, m->usize);
	} else if (m->method == 8) {
		if (!w->raw && zn_inflater_new(&w->raw, ZN_FORMAT_RAW) != ZN_OK)
			return ZN_ERR_NOMEM;
		struct zn_inflate_info info = {.struct_size = sizeof(info)};
		zn_result r = zn_inflate(w->raw, in, m->csize, w->buf, m->usize, &info);
		if (r != ZN_OK || info.out_len != m->usize)
			return ZN_ERR_CORRUPT;
	} else {
		return ZN_ERR_UNSUPPORTED;
	}
	if (zn_crc32(0, w->buf, m->usize) != m->crc)
		return ZN_ERR_CHECKSUM;
	*n = m->usize;
	return ZN_OK;
}

static zn_result from_zip(struct pkg_work *w, const struct pkg_view *v, int kind, const char *path,
                          size_t len, struct zn_pkg_coord *out)
{
	struct zip_dir d;
	struct zip_member m;
	int rank = zip_end(v, &d) ? zip_best(v, &d, kind, path, len, &m) : 0;
	/* A jar in a repository layout whose pom.properties name neither its artifact directory
	 * nor its file (rank 1) holds only those of dependencies bundled into it (guice's holds
	 * cglib's): they are not its own, and its path says what it is. */
	struct zn_pkg_coord by_path = {.struct_size = sizeof(by_path)};
	if (rank == 1 && kind == ZN_PKGF_JAR &&
	    zn_pkg_from_path(kind, path, len, &by_path) == ZN_OK)
		rank = 0;
	if (!rank)
		return ZN_ERR_NOT_FOUND;
	size_t n;
	zn_result r = zip_read(w, v, &d, &m, &n);
	return r != ZN_OK ? r : zn_pkg_parse(m.meta, w->buf, n, out);
}

/* ------------------------------------------------------------------------------------------------
 * gzip'd tar
 * ---------------------------------------------------------------------------------------------- */

#define TAR_NAME_MAX 4096

/* A push parser over the decoded tar stream. */
struct tar_walk {
	struct pkg_work *w;
	int kind, top_rank;
	const char *path;
	size_t path_len;
	uint8_t hdr[512];
	size_t hdr_fill;
	uint64_t skip;      /* bytes of the current member (and padding) still to pass */
	uint64_t take, got; /* of the member being taken into w->buf (take: its size) */
	int taking;         /* 1: the metadata member, 2: a GNU long name, 3: a pax header */
	char name[TAR_NAME_MAX];
	size_t name_len; /* a long name or pax path for the next member; 0: none */
	int best_rank, best_meta;
	size_t best_len;
	int done;
	int seen; /* a member's top directory was checked (top_dir_fits) */
};

/* Whether the top directory of a tar's first member (name, nl bytes) is what the kind's packages
 * have: "package" for an npm tarball, the file's own name without .crate or .tar.gz for a crate
 * or sdist. A tarball that is no package is thus told after its first header, not by decoding
 * all of it (the `mixed` corpus's -dist.tgz files took 10% of its create time). */
static int top_dir_fits(const struct tar_walk *t, const char *name, size_t nl)
{
	const char *slash = memchr(name, '/', nl);
	size_t top = slash ? (size_t)(slash - name) : nl;
	if (t->kind == ZN_PKGF_NPM_TGZ)
		return top == 7 && !memcmp(name, "package", 7);
	size_t b = t->path_len;
	while (b && t->path[b - 1] != '/')
		b--;
	size_t stem = t->path_len - b - (t->kind == ZN_PKGF_CRATE ? 6 : 7); /* .crate, .tar.gz */
	return t->path_len - b > stem && top == stem && !memcmp(name, t->path + b, top);
}

static uint64_t tar_size(const uint8_t *f)
{
	if (f[0] & 0x80) { /* base-256 */
		uint64_t v = 0;
		for (int i = 1; i < 12; i++) {
			if (v >> 55)
				return UINT64_MAX;
			v = v << 8 | f[i];
		}
		return v;
	}
	uint64_t v = 0;
	for (int i = 0; i < 12 && f[i] >= '0' && f[i] <= '7'; i++)
		v = v << 3 | (uint64_t)(f[i] - '0');
	return v;
}

/* The path= record of a pax header, in w->buf[0, n), into t->name. */
static void tar_pax_path(struct tar_walk *t, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t rl = 0, k = i;
		while (k < n && p[k] >= '0' && p[k] <= '9' && rl < n)
			rl = rl * 10 + (size_t)(p[k++] - '0');
		if (k >= n || p[k] != ' ' || rl <= k - i || rl > n - i)
			return;
		const uint8_t *kv = p + k + 1, *end = p + i + rl - 1; /* without the '\n' */
		if (end - kv > 5 && !memcmp(kv, "path=", 5) &&
		    (size_t)(end - kv - 5) < TAR_NAME_MAX) {
			t->name_len = (size_t)(end - kv - 5);
			memcpy(t->name, kv + 5, t->name_len);
		}
		i += rl;
	}
}

/* A whole header in t->hdr: what to do with the member's data. */
static void tar_header(struct tar_walk *t)
{
	const uint8_t *h = t->hdr;
	if (h[0] == 0) { /* the end (or padding): nothing more to find */
		t->done = 1;
		return;
	}
	uint64_t size = tar_size(h + 124);
	if (size > TAR_OUT_MAX) {
		t->done = 1;
		return;
	}
	uint8_t type = h[156];
	t->skip = (size + 511) & ~(uint64_t)511;
	t->take = size;
	t->got = 0;
	t->taking = 0;
	if (type == 'L' || type == 'x') {
		t->taking = size < (type == 'L' ? TAR_NAME_MAX : ZN_PKG_META_MAX)
		                    ? (type == 'L' ? 2 : 3)
		                    : 0;
		return;
	}
	char name[TAR_NAME_MAX];
	size_t nl;
	if (t->name_len) {
		memcpy(name, t->name, t->name_len);
		nl = t->name_len;
	} else {
		size_t pl = 0, bl = strnlen((const char *)h, 100);
		if (!memcmp(h + 257, "ustar", 5) && h[345]) {
			pl = strnlen((const char *)h + 345, 155);
			memcpy(name, h + 345, pl);
			name[pl++] = '/';
		}
		memcpy(name + pl, h, bl);
		nl = pl + bl;
	}
	t->name_len = 0;
	if (type == 'g') /* a pax global header (git archive's first): no member */
		return;
	while (nl > 2 && name[0] == '.' && name[1] == '/') /* "./pkg/..." */
		memmove(name, name + 2, nl -= 2);
	if (!t->seen++ && !top_dir_fits(t, name, nl)) {
		t->done = 1;
		return;
	}
	if (type != '0' && type != 0 && type != '7')
		return;
	int meta, rank = zn_pkg_member_rank(t->kind, t->path, t->path_len, name, nl, &meta);
	if (rank > t->best_rank && size <= ZN_PKG_META_MAX) {
		t->taking = 1;
		t->best_rank = rank;
		t->best_meta = meta;
		t->best_len = 0;
	}
}

/* Data of a member being taken (taking) arrived. */
static int tar_take(struct tar_walk *t, const uint8_t *p, size_t n)
{
	if (!work_buf(t->w, t->take + 1))
		return 0;
	memcpy(t->w->buf + t->got, p, n);
	t->got += n;
	if (t->got < t->take)
		return 1;
	if (t->taking == 1) {
		t->best_len = t->got;
		t->done = t->best_rank >= t->top_rank;
	} else if (t->taking == 2) {
		size_t nl = strnlen((const char *)t->w->buf, t->got);
		memcpy(t->name, t->w->buf, nl);
		t->name_len = nl;
	} else {
		tar_pax_path(t, t->w->buf, t->got);
	}
	t->taking = 0;
	return 1;
}

/* Feeds decoded bytes; 0 on a failed allocation. */
static int tar_feed(struct tar_walk *t, const uint8_t *p, size_t n)
{
	while (n && !t->done) {
		if (t->skip) {
			size_t k = n < t->skip ? n : (size_t)t->skip;
			uint64_t data_left = t->take > t->got ? t->take - t->got : 0;
			if (t->taking && !tar_take(t, p, k < data_left ? k : (size_t)data_left))
				return 0;
			t->skip -= k;
			p += k;
			n -= k;
			continue;
		}
		size_t k = 512 - t->hdr_fill < n ? 512 - t->hdr_fill : n;
		memcpy(t->hdr + t->hdr_fill, p, k);
		t->hdr_fill += k;
		p += k;
		n -= k;
		if (t->hdr_fill == 512) {
			t->hdr_fill = 0;
			tar_header(t);
			if (t->taking && t->take == 0 && !tar_take(t, p, 0))
				return 0;
		}
	}
	return 1;
}

static zn_result from_tgz(struct pkg_work *w, const struct pkg_view *v, int kind, const char *path,
                          size_t len, struct zn_pkg_coord *out)
{
	if (!w->gz && zn_inflater_new(&w->gz, ZN_FORMAT_GZIP) != ZN_OK)
		return ZN_ERR_NOMEM;
	struct tar_walk t = {.w = w, .kind = kind, .path = path, .path_len = len};
	t.top_rank = kind == ZN_PKGF_NPM_TGZ ? 2 : 1;
	/* The first header alone, decoded into 512 bytes (the stream would give 256 KiB at once):
	 * most tarballs that are no package are told by it. */
	uint8_t first[512];
	struct zn_inflate_info info = {.struct_size = sizeof(info)};
	zn_result fr = zn_inflate(w->gz, v->head, (size_t)v->head_len, first, sizeof(first), &info);
	if ((fr == ZN_OK || fr == ZN_ERR_OUTPUT_FULL) && info.out_len == sizeof(first)) {
		const char *name = (const char *)first;
		size_t nl = strnlen(name, 100);
		while (nl > 2 && name[0] == '.' && name[1] == '/')
			name += 2, nl -= 2;
		const int ustar_prefix = !memcmp(first + 257, "ustar", 5) && first[345];
		if (first[156] != 'x' && first[156] != 'g' && first[156] != 'L' && first[0] &&
		    !ustar_prefix && !top_dir_fits(&t, name, nl))
			return ZN_ERR_NOT_FOUND;
	}
	zn_inflate_stream_reset(w->gz);
	const uint8_t *in = v->head;
	size_t left = (size_t)v->head_len;
	uint64_t total = 0,
	         most = ZN_MIN(TAR_OUT_MAX, ZN_MAX((uint64_t)1 << 20, v->size * TAR_RATIO));
	while (!t.done && total < most) {
		size_t used, n;
		const void *o;
		int end;
		zn_result r = zn_inflate_stream(w->gz, in, left, v->head_len == v->size, &used, &o,
		                                &n, &end);
		if (r != ZN_OK)
			break;
		in += used;
		left -= used;
		total += n;
		if (!tar_feed(&t, o, n))
			return ZN_ERR_NOMEM;
		if (end || (!n && !used))
			break;
	}
	if (!t.best_rank || t.taking == 1) /* none, or it was cut off */
		return ZN_ERR_NOT_FOUND;
	return zn_pkg_parse(t.best_meta, w->buf, t.best_len, out);
}

/* ------------------------------------------------------------------------------------------------
 * Either, and the path
 * ---------------------------------------------------------------------------------------------- */

/* Whether a kind's file name alone says it is a package: not a .tar.gz, .zip or .tgz, which any
 * tarball or archive may be named (an sdist or npm tarball is told by its metadata). */
static int name_is_enough(int kind)
{
	return kind == ZN_PKGF_JAR || kind == ZN_PKGF_POM || kind == ZN_PKGF_WHEEL ||
	       kind == ZN_PKGF_CRATE;
}

zn_result pkg_detect_view(struct pkg_work *w, int kind, const char *path, size_t len,
                          const struct pkg_view *v, struct zn_pkg_coord *out, int *from_meta)
{
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	zn_result r = ZN_ERR_NOT_FOUND;
	switch (kind) {
	case ZN_PKGF_JAR:
	case ZN_PKGF_WHEEL:
	case ZN_PKGF_SDIST_ZIP:
		r = from_zip(w, v, kind, path, len, &c);
		break;
	case ZN_PKGF_CRATE:
	case ZN_PKGF_NPM_TGZ:
	case ZN_PKGF_SDIST_TGZ:
		if (v->head_len >= 2 && v->head[0] == 0x1f && v->head[1] == 0x8b)
			r = from_tgz(w, v, kind, path, len, &c);
		break;
	case ZN_PKGF_POM:
		if (v->head_len == v->size)
			r = zn_pkg_parse(ZN_PKGM_POM_XML, v->head, (size_t)v->size, &c);
		break;
	default:
		break;
	}
	if (r == ZN_ERR_NOMEM)
		return r;
	if (from_meta)
		*from_meta = r == ZN_OK;
	if (r != ZN_OK && (!name_is_enough(kind) || zn_pkg_from_path(kind, path, len, &c) != ZN_OK))
		memset((char *)&c + sizeof(c.struct_size), 0, sizeof(c) - sizeof(c.struct_size));
	memcpy((char *)out + sizeof(out->struct_size), (char *)&c + sizeof(c.struct_size),
	       sizeof(c) - sizeof(c.struct_size));
	return c.type != ZN_PKG_NONE ? ZN_OK : ZN_ERR_NOT_FOUND;
}

zn_result zn_pkg_detect(const char *path, size_t len, const void *data, uint64_t size,
                        struct zn_pkg_coord *out)
{
	/* One layout so far: the caller's must hold all of it. */
	if (!out || zn_sized_len(out, ZN_FIRST_SIZE_pkg_coord) < sizeof(*out) || (!data && size))
		return ZN_ERR_INVALID_ARG;
	int kind = zn_pkg_file_kind(path, len);
	if (!kind) {
		memset((char *)out + sizeof(out->struct_size), 0, sizeof(*out) - sizeof(size_t));
		return ZN_ERR_NOT_FOUND;
	}
	struct pkg_work w = {0};
	struct pkg_view v = {.head = data, .head_len = size, .size = size};
	zn_result r = pkg_detect_view(&w, kind, path, len, &v, out, NULL);
	pkg_work_release(&w);
	return r;
}
