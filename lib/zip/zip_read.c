/* SPDX-License-Identifier: MIT */
/* zip_read.c - ZIP central directory: the end record, ZIP64, entries, local-header checks.
 *
 * The central directory is authoritative (as Info-ZIP takes it): the end of central directory
 * record (EOCD) is searched backwards from the end of the input, through a comment of up to
 * 64 KiB; a ZIP64 locator just before it leads to the ZIP64 record. The directory's real place
 * is where it ends, just before the EOCD (or the ZIP64 record): the difference from the offset
 * it records is a prefix (a self-extracting stub that `zip -A` did not adjust for), added to
 * every offset. Each entry's local header is then read and compared with the directory: a
 * disagreement damages the entry (its reads fail), not the archive.
 *
 * Hostile directories are refused whole at open, before anything is extracted: more entries
 * than the directory's bytes can hold, entries whose data lie outside the input or inside the
 * directory, and entries whose [local header, end of data) ranges overlap. That last is the
 * overlapping zip bomb (many entries sharing one compressed stream): sorting the ranges by start
 * and checking each against the next finds it in O(n log n) and memory the size of the table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checksum/checksum.h"
#include "common/sized.h"
#include "zip/zip_internal.h"

#define SIG_LOCAL   0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD    0x06054b50u
#define SIG_EOCD64  0x06064b50u
#define SIG_LOC64   0x07064b50u
#define EOCD_LEN    22u
#define EOCD64_LEN  56u
#define LOC64_LEN   20u
#define CENTRAL_LEN 46u
#define LOCAL_LEN   30u
#define WHY_LEN     160

/* What open found: the directory's place and size, the entry count, the prefix. */
struct eocd {
	uint64_t cd_pos, cd_size, count, prefix, end; /* end: where the directory must end */
	const uint8_t *comment;
	uint32_t comment_len;
};

static zn_result fail(char *why, zn_result r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static zn_result fail(char *why, zn_result r, const char *fmt, ...)
{
	if (why) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, WHY_LEN, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* The ZIP64 end record, from the locator at loc (already checked): fills e, or an error. The
 * record is where the locator says, or (with a prefix) just before the locator. */
static zn_result read_eocd64(const uint8_t *b, uint64_t len, uint64_t loc, struct eocd *e,
                             char *why)
{
	uint64_t at = zn_get_le64(b + loc + 8);
	if (zn_get_le32(b + loc + 4) != 0 || zn_get_le32(b + loc + 16) > 1)
		return fail(why, ZN_ERR_UNSUPPORTED, "a split (multi-disk) archive");
	uint64_t pos = at;
	if (pos > loc || loc - pos < EOCD64_LEN || zn_get_le32(b + pos) != SIG_EOCD64) {
		if (loc < EOCD64_LEN || zn_get_le32(b + loc - EOCD64_LEN) != SIG_EOCD64)
			return fail(why, ZN_ERR_CORRUPT,
			            "ZIP64 end of central directory not found");
		pos = loc - EOCD64_LEN;
	}
	const uint8_t *r = b + pos;
	if (zn_get_le32(r + 16) != 0 || zn_get_le32(r + 20) != 0)
		return fail(why, ZN_ERR_UNSUPPORTED, "a split (multi-disk) archive");
	e->count = zn_get_le64(r + 32);
	e->cd_size = zn_get_le64(r + 40);
	uint64_t cd_off = zn_get_le64(r + 48);
	if (e->cd_size > pos)
		return fail(why, ZN_ERR_CORRUPT, "central directory larger than the archive");
	e->cd_pos = pos - e->cd_size;
	e->end = pos;
	if (cd_off > e->cd_pos)
		return fail(why, ZN_ERR_CORRUPT, "central directory offset beyond its place");
	e->prefix = e->cd_pos - cd_off;
	(void)len;
	return ZN_OK;
}

/* Interpret an EOCD candidate at p: ZN_OK with e filled, or why it does not fit. */
static zn_result take_eocd(const uint8_t *b, uint64_t len, uint64_t p, struct eocd *e, char *why)
{
	const uint8_t *r = b + p;
	uint16_t disk = zn_get_le16(r + 4), cd_disk = zn_get_le16(r + 6);
	uint64_t n_disk = zn_get_le16(r + 8), n = zn_get_le16(r + 10);
	uint64_t size = zn_get_le32(r + 12), off = zn_get_le32(r + 16);
	e->comment = r + EOCD_LEN;
	e->comment_len = zn_get_le16(r + 20);
	if (p >= LOC64_LEN && zn_get_le32(b + p - LOC64_LEN) == SIG_LOC64)
		return read_eocd64(b, len, p - LOC64_LEN, e, why);
	if (n == 0xffff || size == 0xffffffffu || off == 0xffffffffu)
		return fail(why, ZN_ERR_CORRUPT, "ZIP64 archive without its locator");
	if (disk != 0 || cd_disk != 0 || n_disk != n)
		return fail(why, ZN_ERR_UNSUPPORTED, "a split (multi-disk) archive");
	if (size > p)
		return fail(why, ZN_ERR_CORRUPT, "central directory larger than the archive");
	e->count = n;
	e->cd_size = size;
	e->cd_pos = p - size;
	e->end = p;
	if (off > e->cd_pos)
		return fail(why, ZN_ERR_CORRUPT, "central directory offset beyond its place");
	e->prefix = e->cd_pos - off;
	return ZN_OK;
}

/* Search backwards for the EOCD: the last signature whose directory makes sense, first among
 * records whose comment ends exactly at the end of the input, then among those with bytes after
 * it (Info-ZIP accepts those too). A false record inside a comment is passed over when the real
 * one also fits; the first failure is the one reported. */
static zn_result find_eocd(const uint8_t *b, uint64_t len, struct eocd *e, char *why)
{
	if (len < EOCD_LEN)
		return fail(why, ZN_ERR_CORRUPT, "not a ZIP archive (too short)");
	uint64_t last = len - EOCD_LEN;
	uint64_t first = last > 0xffff ? last - 0xffff : 0;
	zn_result bad = ZN_OK;
	char first_why[WHY_LEN] = "";
	for (int exact = 1; exact >= 0; exact--)
		for (uint64_t p = last + 1; p-- > first;) {
			if (b[p] != 'P' || zn_get_le32(b + p) != SIG_EOCD)
				continue;
			uint64_t end = p + EOCD_LEN + zn_get_le16(b + p + 20);
			if (exact ? end != len : end >= len)
				continue; /* each candidate is tried in one pass only */
			zn_result r = take_eocd(b, len, p, e, why);
			if (r == ZN_OK)
				return r;
			if (bad == ZN_OK && why)
				snprintf(first_why, sizeof(first_why), "%s", why);
			if (bad == ZN_OK)
				bad = r;
		}
	if (bad == ZN_OK)
		return fail(why, ZN_ERR_CORRUPT,
		            "not a ZIP archive (no end of central directory record)");
	if (why)
		memcpy(why, first_why, WHY_LEN);
	return bad;
}

/* DOS date and time (local) to seconds since 1970, as Info-ZIP's mktime does. */
static int64_t dos_time(uint16_t date, uint16_t time)
{
	struct tm tm = {0};
	tm.tm_year = ((date >> 9) & 0x7f) + 80;
	tm.tm_mon = ((date >> 5) & 0xf) - 1;
	tm.tm_mday = date & 0x1f;
	tm.tm_hour = (time >> 11) & 0x1f;
	tm.tm_min = (time >> 5) & 0x3f;
	tm.tm_sec = (time & 0x1f) * 2;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	return t == (time_t)-1 ? 0 : (int64_t)t;
}

/* The extra fields of a central entry: ZIP64 sizes and offset (each present only where the fixed
 * field is all ones), the extended timestamp (0x5455), the Unicode path (0x7075, taken when its
 * CRC is that of the stored name). */
static zn_result parse_extra(const uint8_t *x, uint32_t xlen, struct zip_ent *e, uint32_t raw_size,
                             uint32_t raw_csize, uint32_t raw_local, uint16_t raw_disk)
{
	while (xlen >= 4) {
		uint16_t id = zn_get_le16(x), n = zn_get_le16(x + 2);
		if ((uint32_t)n + 4 > xlen)
			break; /* a torn last field: Info-ZIP ignores it too */
		const uint8_t *d = x + 4;
		if (id == 0x0001) {
			uint32_t k = 0;
			if (raw_size == 0xffffffffu) {
				SAFETY_CHECK(k + 8 <= n, ZN_ERR_CORRUPT);
				e->size = zn_get_le64(d + k), k += 8;
			}
			if (raw_csize == 0xffffffffu) {
				SAFETY_CHECK(k + 8 <= n, ZN_ERR_CORRUPT);
				e->csize = zn_get_le64(d + k), k += 8;
			}
			if (raw_local == 0xffffffffu) {
				SAFETY_CHECK(k + 8 <= n, ZN_ERR_CORRUPT);
				e->local = zn_get_le64(d + k), k += 8;
			}
			if (raw_disk == 0xffff) {
				SAFETY_CHECK(k + 4 <= n, ZN_ERR_CORRUPT);
				SAFETY_CHECK(zn_get_le32(d + k) == 0, ZN_ERR_UNSUPPORTED);
			}
		} else if (id == 0x5455 && n >= 5 && (d[0] & 1)) {
			e->mtime = (int32_t)zn_get_le32(d + 1);
		} else if (id == 0x7075 && n >= 5 && d[0] == 1 &&
		           zn_get_le32(d + 1) == zn_crc32(0, e->name, e->name_len)) {
			e->name = d + 5;
			e->name_len = n - 5u;
		}
		x += 4 + n, xlen -= 4 + n;
	}
	return ZN_OK;
}

/* Type and mode from the external attributes: Unix ones (host 3, or any host that set them, as
 * Info-ZIP takes them), else a directory by its trailing '/' or the DOS attribute. */
static void set_mode(struct zip_ent *e, uint16_t made_by, uint32_t ext)
{
	uint32_t m = ext >> 16;
	unsigned host = made_by >> 8;
	int slash = e->name_len && e->name[e->name_len - 1] == '/';
	if ((host == 3 || host == 19) && m) {
		e->unix_mode = 1;
		uint32_t t = m & 0170000u;
		if (t != 0040000u && t != 0120000u)
			t = slash ? 0040000u : 0100000u;
		e->mode = t | (m & 07777u);
		return;
	}
	if (slash || (ext & 0x10))
		e->mode = 0040000u | 0755u;
	else
		e->mode = 0100000u | ((ext & 1) ? 0444u : 0644u);
}

/* One central entry at p (n bytes left in the directory): fills e, returns its length. */
static zn_result parse_central(const uint8_t *p, uint64_t n, struct zip_ent *e, uint64_t *used)
{
	SAFETY_CHECK(n >= CENTRAL_LEN, ZN_ERR_TRUNCATED);
	SAFETY_CHECK(zn_get_le32(p) == SIG_CENTRAL, ZN_ERR_CORRUPT);
	uint32_t nlen = zn_get_le16(p + 28), xlen = zn_get_le16(p + 30), clen = zn_get_le16(p + 32);
	SAFETY_CHECK(CENTRAL_LEN + (uint64_t)nlen + xlen + clen <= n, ZN_ERR_TRUNCATED);
	memset(e, 0, sizeof(*e));
	e->flags = zn_get_le16(p + 8);
	e->method = zn_get_le16(p + 10);
	e->crc = zn_get_le32(p + 16);
	uint32_t csize = zn_get_le32(p + 20), size = zn_get_le32(p + 24),
	         local = zn_get_le32(p + 42);
	e->csize = csize, e->size = size, e->local = local;
	e->name = e->stored = p + CENTRAL_LEN;
	e->name_len = e->stored_len = nlen;
	e->mtime = dos_time(zn_get_le16(p + 14), zn_get_le16(p + 12));
	set_mode(e, zn_get_le16(p + 4), zn_get_le32(p + 38));
	RETURN_IF_ERROR(parse_extra(p + CENTRAL_LEN + nlen, xlen, e, size, csize, local,
	                            zn_get_le16(p + 34)));
	*used = CENTRAL_LEN + (uint64_t)nlen + xlen + clen;
	return ZN_OK;
}

enum {
	DMG_NONE,
	DMG_LOCAL_SIG,
	DMG_LOCAL_NAME,
	DMG_LOCAL_METHOD,
	DMG_RATIO,
	DMG_STORE_SIZE,
	DMG_LOCAL_CRC,
	DMG_DESCRIPTOR,
};
static const char *const damage_what[] = {
        "",
        "local header missing",
        "local header's name differs from the directory's",
        "local header's method or flags differ from the directory's",
        "declared size impossible for its compressed size (a zip bomb?)",
        "stored entry whose sizes differ",
        "local header's CRC-32 or sizes differ from the directory's",
        "data descriptor's CRC-32 differs from the directory's",
};

static void damage(struct zip_ent *e, zn_result r, int kind)
{
	if (!e->damage)
		e->damage = (uint8_t)r, e->damage_kind = (uint8_t)kind;
}

/* Without a data descriptor, the local header repeats CRC and sizes (all ones for ZIP64 sizes);
 * with one, the descriptor after the data (signature optional) repeats the CRC. */
static void check_repeats(const uint8_t *l, struct zip_ent *e, const uint8_t *b, uint64_t end)
{
	if (!(e->flags & ZIP_FLAG_DESCRIPTOR)) {
		uint32_t cs = zn_get_le32(l + 18), us = zn_get_le32(l + 22);
		if (zn_get_le32(l + 14) != e->crc || (cs != 0xffffffffu && cs != e->csize) ||
		    (us != 0xffffffffu && us != e->size))
			damage(e, ZN_ERR_CORRUPT, DMG_LOCAL_CRC);
		return;
	}
	uint64_t at = e->data + e->csize;
	if (end - at >= 8 && zn_get_le32(b + at) == 0x08074b50u &&
	    zn_get_le32(b + at + 4) == e->crc)
		return;
	if (end - at >= 4 && zn_get_le32(b + at) == e->crc)
		return;
	damage(e, ZN_ERR_CORRUPT, DMG_DESCRIPTOR);
}

/* Compare e with its local header; find where its data starts. Returns an error only for what
 * makes the archive unusable (data outside it); disagreements damage the entry. */
static zn_result check_local(const struct zn_zip *z, struct zip_ent *e, uint64_t cd_pos)
{
	const uint8_t *b = z->base;
	if (e->local > cd_pos || cd_pos - e->local < LOCAL_LEN)
		return ZN_ERR_CORRUPT;
	const uint8_t *l = b + e->local;
	uint64_t data = e->local + LOCAL_LEN + zn_get_le16(l + 26) + (uint64_t)zn_get_le16(l + 28);
	if (zn_get_le32(l) != SIG_LOCAL) {
		damage(e, ZN_ERR_CORRUPT, DMG_LOCAL_SIG);
		data = e->local + LOCAL_LEN;
	} else {
		if (data > cd_pos)
			return ZN_ERR_CORRUPT;
		if (zn_get_le16(l + 26) != e->stored_len ||
		    memcmp(l + LOCAL_LEN, e->stored, e->stored_len))
			damage(e, ZN_ERR_CORRUPT, DMG_LOCAL_NAME);
		if (zn_get_le16(l + 8) != e->method ||
		    ((zn_get_le16(l + 6) ^ e->flags) & ZIP_FLAG_ENCRYPTED))
			damage(e, ZN_ERR_CORRUPT, DMG_LOCAL_METHOD);
	}
	e->data = data;
	if (data > cd_pos || cd_pos - data < e->csize)
		return ZN_ERR_CORRUPT;
	if (zn_get_le32(l) == SIG_LOCAL)
		check_repeats(l, e, b, cd_pos);
	if (e->method == ZIP_METHOD_STORE && !(e->flags & ZIP_FLAG_ENCRYPTED) &&
	    e->size != e->csize)
		damage(e, ZN_ERR_CORRUPT, DMG_STORE_SIZE);
	/* DEFLATE expands at most 1032:1 (258 bytes from a 2-bit match code), zstd 32768:1 (an
	 * RLE block: 128 KiB from 4 bytes). bzip2's bound (a block's 900 kB of runs, each 5 bytes
	 * for 255, from some 40 bytes) is too loose to tell anything; its decoder, as the others,
	 * stops at the declared size. */
	if ((e->method == ZIP_METHOD_DEFLATE && e->size / 1032 > e->csize + 64) ||
	    (e->method == ZIP_METHOD_ZSTD && e->size / 32768 > e->csize + 64))
		damage(e, ZN_ERR_LIMIT, DMG_RATIO);
	return ZN_OK;
}

static int cmp_local(const void *a, const void *b, void *ctx)
{
	const struct zip_ent *t = ctx;
	uint64_t x = t[*(const uint64_t *)a].local, y = t[*(const uint64_t *)b].local;
	return x < y ? -1 : x > y;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const struct zip_ent *t = ctx;
	uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
	const struct zip_ent *x = t + i, *y = t + j;
	uint32_t n = ZN_MIN(x->name_len, y->name_len);
	int c = n ? memcmp(x->name, y->name, n) : 0;
	if (c)
		return c;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The overlap check: entries' [local header, end of data) ranges, sorted by start, must not
 * overlap. Also marks all but the last of entries with one name as shadowed. */
static zn_result check_ranges(struct zn_zip *z, char *why)
{
	uint64_t n = z->count, *ord = z->by_name;
	for (uint64_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), cmp_local, z->ents);
	for (uint64_t k = 1; k < n; k++) {
		const struct zip_ent *a = z->ents + ord[k - 1], *b = z->ents + ord[k];
		if (a->data + a->csize > b->local)
			return fail(
			        why, ZN_ERR_CORRUPT, "entries %llu and %llu overlap (a zip bomb?)",
			        (unsigned long long)ord[k - 1] + 1, (unsigned long long)ord[k] + 1);
	}
	for (uint64_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), cmp_name, z->ents);
	for (uint64_t k = 1; k < n; k++) {
		struct zip_ent *a = z->ents + ord[k - 1], *b = z->ents + ord[k];
		if (a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len))
			a->shadowed = 1;
	}
	return ZN_OK;
}

/* Parse the whole directory into z->ents. */
static zn_result read_directory(struct zn_zip *z, const struct eocd *e, char *why)
{
	if (e->count > e->cd_size / CENTRAL_LEN)
		return fail(why, ZN_ERR_CORRUPT,
		            "%llu entries claimed, more than its directory of %llu bytes holds",
		            (unsigned long long)e->count, (unsigned long long)e->cd_size);
	z->count = e->count;
	z->ents = calloc(e->count ? e->count : 1, sizeof(*z->ents));
	z->by_name = calloc(e->count ? e->count : 1, sizeof(*z->by_name));
	if (!z->ents || !z->by_name)
		return fail(why, ZN_ERR_NOMEM, "out of memory");
	const uint8_t *p = z->base + e->cd_pos;
	uint64_t left = e->cd_size;
	for (uint64_t i = 0; i < e->count; i++) {
		uint64_t used = 0;
		struct zip_ent *x = z->ents + i;
		zn_result r = parse_central(p, left, x, &used);
		if (r != ZN_OK)
			return fail(why, r, "central directory entry %llu: %s",
			            (unsigned long long)i + 1, zn_result_message(r));
		if (x->local > UINT64_MAX - e->prefix)
			return fail(why, ZN_ERR_CORRUPT, "entry %llu: offset out of range",
			            (unsigned long long)i + 1);
		x->local += e->prefix;
		if (check_local(z, x, e->cd_pos) != ZN_OK)
			return fail(why, ZN_ERR_CORRUPT,
			            "entry %llu (%.*s): its data lie outside the archive",
			            (unsigned long long)i + 1, (int)ZN_MIN(x->name_len, 80u),
			            x->name);
		p += used, left -= used;
	}
	return check_ranges(z, why);
}

zn_result zn_zip_open_memory(struct zn_zip **out, const void *data, uint64_t len, char *why)
{
	if (why)
		why[0] = 0;
	if (!out || (!data && len))
		return fail(why, ZN_ERR_INVALID_ARG, "invalid argument");
	*out = NULL;
	struct zn_zip *z = calloc(1, sizeof(*z));
	if (!z)
		return fail(why, ZN_ERR_NOMEM, "out of memory");
	z->base = data, z->len = len;
	struct eocd e = {0};
	zn_result r = find_eocd(z->base, len, &e, why);
	if (r == ZN_OK) {
		z->comment = e.comment, z->comment_len = e.comment_len;
		z->prefix = e.prefix;
		r = read_directory(z, &e, why);
	}
	if (r != ZN_OK) {
		zn_zip_free(z);
		return r;
	}
	*out = z;
	return ZN_OK;
}

zn_result zn_zip_open_fd(struct zn_zip **out, int fd, char *why)
{
	if (why)
		why[0] = 0;
	if (!out || fd < 0)
		return fail(why, ZN_ERR_INVALID_ARG, "invalid argument");
	*out = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return fail(why, ZN_ERR_IO, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return fail(why, ZN_ERR_INVALID_ARG, "not a regular file");
	uint64_t len = (uint64_t)st.st_size;
	void *map = NULL;
	if (len) {
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			return fail(why, ZN_ERR_IO, "cannot map: %s", strerror(errno));
	}
	zn_result r = zn_zip_open_memory(out, map ? map : (const void *)"", len, why);
	if (r != ZN_OK) {
		if (map)
			munmap(map, len);
		return r;
	}
	(*out)->map = map;
	return ZN_OK;
}

void zn_zip_free(struct zn_zip *z)
{
	if (!z)
		return;
	if (z->map)
		munmap(z->map, z->len);
	free(z->ents);
	free(z->by_name);
	free(z);
}

uint64_t zn_zip_count(const struct zn_zip *z)
{
	return z ? z->count : 0;
}

static void fill_entry(const struct zip_ent *e, struct zn_zip_entry *out)
{
	out->name = (const char *)e->name;
	out->name_len = e->name_len;
	uint32_t t = e->mode & 0170000u;
	out->type = t == 0040000u ? ZN_TYPE_DIR : t == 0120000u ? ZN_TYPE_SYMLINK : ZN_TYPE_FILE;
	out->mode = e->mode & 07777u;
	out->unix_mode = e->unix_mode;
	out->mtime = e->mtime;
	out->size = e->size;
	out->csize = e->csize;
	out->crc = e->crc;
	out->method = e->method;
	out->flags = e->flags;
	out->supported = zip_supported(e);
	out->shadowed = e->shadowed;
	out->offset = e->data;
}

zn_result zn_zip_entry(const struct zn_zip *z, uint64_t i, struct zn_zip_entry *out)
{
	if (!z || !out || i >= z->count || !zn_sized_len(out, ZN_FIRST_SIZE_zip_entry))
		return ZN_ERR_INVALID_ARG;
	struct zn_zip_entry full = {.struct_size = sizeof(full)};
	fill_entry(z->ents + i, &full);
	zn_sized_out(out, &full, sizeof(full), ZN_FIRST_SIZE_zip_entry);
	return ZN_OK;
}

void zn_zip_comment(const struct zn_zip *z, const char **comment, size_t *len)
{
	*comment = z && z->comment_len ? (const char *)z->comment : "";
	*len = z ? z->comment_len : 0;
}

uint64_t zn_zip_prefix(const struct zn_zip *z)
{
	return z ? z->prefix : 0;
}

zn_result zn_zip_find(const struct zn_zip *z, const char *name, size_t len, uint64_t *index)
{
	if (!z || (!name && len))
		return ZN_ERR_INVALID_ARG;
	uint64_t lo = 0, hi = z->count; /* first entry whose name is greater */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct zip_ent *e = z->ents + z->by_name[mid];
		size_t n = ZN_MIN(len, (size_t)e->name_len);
		int c = n ? memcmp(e->name, name, n) : 0;
		if (!c)
			c = e->name_len < len ? -1 : e->name_len > len;
		if (c <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return ZN_ERR_NOT_FOUND;
	const struct zip_ent *e = z->ents + z->by_name[lo - 1];
	if (e->name_len != len || (len && memcmp(e->name, name, len)))
		return ZN_ERR_NOT_FOUND;
	if (index)
		*index = z->by_name[lo - 1];
	return ZN_OK;
}

zn_result zn_zip_entry_damage(const struct zn_zip *z, uint64_t i, char *why)
{
	if (!z || i >= z->count)
		return ZN_ERR_INVALID_ARG;
	const struct zip_ent *e = z->ents + i;
	if (why)
		snprintf(why, WHY_LEN, "%s", damage_what[e->damage_kind]);
	return (zn_result)e->damage;
}
