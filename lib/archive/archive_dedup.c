/* SPDX-License-Identifier: MIT */
/* archive_dedup.c - identical files stored once: small files by content, large ones by digest. */
#include "archive_writer.h"

/* Identical small files are stored once
 * ------------------------------------
 * Once a small file's bytes are in its room, the producer looks for an earlier small file with
 * the same content (by XXH3-64, then by the bytes themselves) and, if there is one, takes the
 * room back: the file becomes a row pointing at the first copy's bytes. The comparison is exact:
 * while the first copy's slot has not been filled again its bytes are compared directly, and
 * after that its SHA-256 (harvested when the slot was taken back) is compared with the new
 * file's. Both give the same answer, so the archive does not depend on timing. Without digests
 * the second way is missing, and nothing is deduplicated. Files are judged in the order they
 * were met, and a block is found full only after every file in it is judged (read_batch
 * waits for its reads first; a file that does not fit is read aside and judged before the
 * block is closed: place_aside), so blocks fill exactly as if the copies had never been met,
 * with or without io_uring, and a block that would hold only copies is never written. */

static uint64_t set_key(const struct zn_writer *w, uint64_t idx, int by_sha)
{
	return by_sha ? zn_get_le64(w->ents[idx].sha) : w->packs[idx].ckey;
}

/* Room in an open-addressing set of entries (slots as set_slot makes them, keyed by their ckey,
 * or by their digest) for n of them; -1 if memory is short (the file is then stored again: only
 * space is lost). */
static int grow_set(struct zn_writer *w, uint64_t **set, size_t *cap, size_t n, int by_sha)
{
	if (n * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 4096, ocap = *cap;
	uint64_t *old = *set, *neu = calloc(ncap, sizeof(*neu));
	if (!neu)
		return -1;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i])
			continue;
		size_t h = (size_t)set_key(w, wr_slot_entry(old[i]), by_sha) & (ncap - 1);
		while (neu[h])
			h = (h + 1) & (ncap - 1);
		neu[h] = old[i];
	}
	free(old);
	*set = neu;
	*cap = ncap;
	return 0;
}

/* Whether the content of entry idx (its bytes at `p`) is that of a small file stored earlier;
 * if so, records which, else remembers this one. */
int wr_is_duplicate(struct zn_writer *w, uint64_t idx, const uint8_t *p)
{
	if (w->opt.no_dedup ||
	    grow_set(w, &w->dup.contents, &w->dup.contents_cap, w->dup.ncontents + 1, 0))
		return 0;
	struct went *e = &w->ents[idx];
	const uint64_t ckey = w->packs[idx].ckey = zn_xxh3(p, e->size);
	const size_t mask = w->dup.contents_cap - 1;
	size_t h = (size_t)ckey & mask;
	uint8_t sha[32];
	int hashed = 0;
	for (; w->dup.contents[h]; h = (h + 1) & mask) {
		if (!wr_slot_may_be(w->dup.contents[h], ckey))
			continue;
		const uint64_t oi = wr_slot_entry(w->dup.contents[h]);
		const struct went *o = &w->ents[oi];
		const struct wpack *op = &w->packs[oi];
		if (op->ckey != ckey || o->size != e->size)
			continue;
		const struct slot *os = &w->pipe.slots[op->slot];
		int same;
		if (os->gen == op->gen) {
			same = !memcmp(os->in + o->block_offset, p, e->size);
		} else {
			if (!hashed)
				zn_sha256(p, e->size, sha);
			hashed = 1;
			same = !memcmp(sha, o->sha, 32);
		}
		if (same) {
			e->dup_of = (int64_t)wr_slot_entry(w->dup.contents[h]);
			atomic_fetch_add(&w->pipe.shared_bytes, e->size);
			return 1;
		}
	}
	w->dup.contents[h] = wr_set_slot(ckey, idx);
	w->dup.ncontents++;
	return 0;
}

/* Identical large files are stored once too. A large file's bytes are never all in memory, so
 * the candidates are found before it is read: an earlier large file of the same size whose
 * first and last 4 KiB hash the same (two small reads per large file). Only for such a file is
 * the whole file read and hashed here first, and its digest looked up among those of the large
 * files stored before it, waiting for the workers that hash them if need be (each is waited
 * for once). The answer depends on the contents alone, so the archive does not depend on
 * timing. A file that differs after all is read again to be stored. */
#define SCAN_PIECE (256u << 10) /* hashed in pieces that stay in the cache */

uint8_t *wr_aside_buffer(struct zn_writer *w)
{
	if (!w->dup.aside)
		w->dup.aside = malloc(w->opt.chunk_size);
	return w->dup.aside;
}

static int pread_full(int fd, uint8_t *dst, uint64_t n, uint64_t off)
{
	uint64_t got;
	return wr_pread_upto(fd, dst, n, off, &got) || got < n ? -1 : 0;
}

/* XXH3-64 of a large file's size, first and last 4 KiB (size >= ZN_CHUNK_SIZE_MIN > 8 KiB). */
static int ends_key(const struct source *src, uint64_t size, uint64_t *key)
{
	const uint64_t n = 4096;
	uint8_t buf[8 + 2 * 4096];
	zn_put_le64(buf, size);
	if (src->fd < 0) {
		memcpy(buf + 8, src->mem, n);
		memcpy(buf + 8 + n, src->mem + size - n, n);
	} else if (pread_full(src->fd, buf + 8, n, 0) ||
	           pread_full(src->fd, buf + 8 + n, n, size - n)) {
		return -1;
	}
	*key = zn_xxh3(buf, sizeof(buf));
	return 0;
}

static int whole_sha(struct zn_writer *w, const struct source *src, uint64_t size, uint8_t sha[32])
{
	if (src->fd < 0) {
		zn_sha256(src->mem, size, sha);
		return 0;
	}
	uint8_t *buf = wr_aside_buffer(w);
	if (!buf)
		return -1;
	SHA256_CTX c;
	SHA256_Init(&c);
	const uint64_t piece = ZN_MIN(SCAN_PIECE, w->opt.chunk_size); /* the buffer's size */
	for (uint64_t off = 0; off < size;) {
		uint64_t n = ZN_MIN(piece, size - off);
		if (pread_full(src->fd, buf, n, off))
			return -1;
		SHA256_Update(&c, buf, n);
		off += n;
	}
	SHA256_Final(sha, &c);
	return 0;
}

/* Whether both jobs of slot ctx are through with it (pipe.mu held). */
static int slot_settled(const struct wr_pipe *p, const void *ctx)
{
	(void)p;
	const struct slot *s = ctx;
	return s->worked && s->hashed;
}

/* The SHA-256 of large file o, waiting for the job that hashes its last chunk. */
static int settle_digest(struct zn_writer *w, uint64_t o)
{
	struct went *e = &w->ents[o];
	struct slot *s = &w->pipe.slots[w->packs[o].slot];
	if (s->gen != w->packs[o].gen)
		return 0; /* the slot was taken back since: wr_harvest() gave e its digest */
	pthread_mutex_lock(&w->pipe.mu);
	wr_wait_for(w, slot_settled, s);
	pthread_mutex_unlock(&w->pipe.mu);
	if (atomic_load(&w->pipe.cancel))
		return -1;
	if (s->rerr)
		return 1; /* its last chunk was not read as it was: no original for others */
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].entry == o && s->segs[i].last)
			memcpy(e->sha, s->segs[i].sha, 32);
	return 0;
}

/* Large file idx is stored: it may be the original of a later one. */
static void remember_large(struct zn_writer *w, uint64_t idx)
{
	if (!wr_grow((void **)&w->dup.lwait, &w->dup.lwait_cap, w->dup.nlwait + 1,
	             sizeof(*w->dup.lwait)))
		w->dup.lwait[w->dup.nlwait++] = idx;
}

/* The digests of the large files stored so far, in the set by digest. */
static int settle_larges(struct zn_writer *w)
{
	for (size_t k = 0; k < w->dup.nlwait; k++) {
		uint64_t o = w->dup.lwait[k];
		if (w->ents[o].dropped)
			continue;
		int r = settle_digest(w, o);
		if (r < 0)
			return -1;
		if (r)
			continue;
		if (grow_set(w, &w->dup.lsums, &w->dup.lsums_cap, w->dup.nlsums + 1, 1))
			continue;
		size_t h = (size_t)zn_get_le64(w->ents[o].sha) & (w->dup.lsums_cap - 1);
		while (w->dup.lsums[h])
			h = (h + 1) & (w->dup.lsums_cap - 1);
		w->dup.lsums[h] = wr_set_slot(zn_get_le64(w->ents[o].sha), o);
		w->dup.nlsums++;
	}
	w->dup.nlwait = 0;
	return 0;
}

/* Whether large file idx (its bytes from src, not read yet) has the content of a large file
 * stored earlier; if so, records which, else remembers this one. */
int wr_large_copy(struct zn_writer *w, uint64_t idx, const struct source *src)
{
	struct went *e = &w->ents[idx];
	uint64_t *ckey = &w->packs[idx].ckey;
	if (w->opt.no_dedup || e->size < w->opt.chunk_size || ends_key(src, e->size, ckey) ||
	    grow_set(w, &w->dup.larges, &w->dup.larges_cap, w->dup.nlarges + 1, 0))
		return 0;
	const size_t mask = w->dup.larges_cap - 1;
	size_t h = (size_t)*ckey & mask;
	for (; w->dup.larges[h]; h = (h + 1) & mask) {
		const uint64_t oi = wr_slot_entry(w->dup.larges[h]);
		if (w->packs[oi].ckey == *ckey && w->ents[oi].size == e->size)
			break;
	}
	if (!w->dup.larges[h]) { /* the first of its size and ends: nothing to compare */
		w->dup.larges[h] = wr_set_slot(*ckey, idx);
		w->dup.nlarges++;
		remember_large(w, idx);
		return 0;
	}
	uint8_t sha[32];
	if (whole_sha(w, src, e->size, sha))
		return 0; /* read again to be stored, and any failure reported then */
	if (settle_larges(w))
		return 0;
	const size_t smask = w->dup.lsums_cap - 1;
	for (h = (size_t)zn_get_le64(sha) & smask; w->dup.nlsums && w->dup.lsums[h];
	     h = (h + 1) & smask) {
		uint64_t o = wr_slot_entry(w->dup.lsums[h]);
		if (w->ents[o].size == e->size && !memcmp(w->ents[o].sha, sha, 32)) {
			e->dup_of = (int64_t)o;
			atomic_fetch_add(&w->pipe.shared_bytes, e->size);
			return 1;
		}
	}
	remember_large(w, idx);
	return 0;
}
