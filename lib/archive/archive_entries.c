/* SPDX-License-Identifier: MIT */
/* archive_entries.c - the writer's table of entries: paths, names, owners, hardlinked inodes. */
#include <grp.h>
#include <pwd.h>

#include "archive_writer.h"

/* ------------------------------------------------------------------------------------------------
 * Entries and metadata
 * ---------------------------------------------------------------------------------------------- */

uint32_t wr_intern_name(struct zn_writer *w, const char *name)
{
	for (uint32_t i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i], name))
			return i;
	size_t cap = w->names_cap;
	if (wr_grow((void **)&w->names, &cap, w->nnames + 1, sizeof(char *)))
		return 0;
	w->names_cap = (uint32_t)cap;
	w->names[w->nnames] = strdup(name);
	if (!w->names[w->nnames])
		return 0;
	return w->nnames++;
}

static uint32_t lookup_name(struct zn_writer *w, struct name_cache *c, uint32_t id, int group)
{
	unsigned h = id % 64;
	if (c->used[h] && c->key[h] == id)
		return c->id_of_key[h];
	char buf[4096];
	const char *name = "";
	if (group) {
		struct group gr, *res = NULL;
		if (!getgrgid_r(id, &gr, buf, sizeof(buf), &res) && res)
			name = res->gr_name;
	} else {
		struct passwd pw, *res = NULL;
		if (!getpwuid_r(id, &pw, buf, sizeof(buf), &res) && res)
			name = res->pw_name;
	}
	uint32_t nid = wr_intern_name(w, name);
	c->used[h] = 1;
	c->key[h] = id;
	c->id_of_key[h] = nid;
	return nid;
}

uint64_t wr_set_slot(uint64_t key, uint64_t idx)
{
	return (key & ~SET_IX_MASK) | (idx + 1);
}

uint64_t wr_slot_entry(uint64_t v)
{
	return (v & SET_IX_MASK) - 1;
}

int wr_slot_may_be(uint64_t v, uint64_t key)
{
	return (v & ~SET_IX_MASK) == (key & ~SET_IX_MASK);
}

/* The slot of `path` in the path set: the entry holding it, or the empty slot where it goes;
 * *key gets the path's key (its hash). */
uint64_t *wr_path_slot(struct zn_writer *w, const char *path, size_t len, uint64_t *key)
{
	*key = zn_xxh3(path, len);
	for (size_t h = (size_t)*key & (w->paths_cap - 1);; h = (h + 1) & (w->paths_cap - 1)) {
		uint64_t v = w->paths[h];
		if (!v)
			return &w->paths[h];
		const struct went *e = &w->ents[wr_slot_entry(v)];
		if (wr_slot_may_be(v, *key) && e->path_len == len && !memcmp(e->path, path, len))
			return &w->paths[h];
	}
}

/* Whether entry e is left out: itself, or as a hardlink found on disk whose file could not be
 * read (finish drops such a hardlink; reads are done before add_path returns). */
int wr_left_out(const struct zn_writer *w, const struct went *e)
{
	return e->dropped || (e->link_entry >= 0 && w->ents[e->link_entry].dropped);
}

/* A copy of s[0, n) and a NUL that lives as long as the writer. Strings are packed in chunks
 * that never move: a million paths of 20-odd bytes took 16 MB more as one malloc each (its
 * header and rounding), and a malloc's time each. */
static char *keep_str(struct zn_writer *w, const char *s, size_t n)
{
	enum { CHUNK = 256 << 10 };
	struct strchunk *c = w->strs;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = ZN_MAX((size_t)CHUNK, n + 1);
		if (!(c = malloc(sizeof(*c) + cap)))
			return NULL;
		c->next = w->strs;
		c->used = 0;
		c->cap = cap;
		w->strs = c;
	}
	char *p = c->data + c->used;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	c->used += n + 1;
	return p;
}

/* Nanoseconds in 64 bits reach from 1677 to 2262; times outside are clamped (the
 * multiplication would overflow). */
static int64_t mtime_ns_of(const struct stat *st)
{
	const int64_t lim = INT64_MAX / 1000000000 - 1;
	int64_t sec = st->st_mtim.tv_sec;
	return sec > lim    ? INT64_MAX
	       : sec < -lim ? INT64_MIN
	                    : sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* 32 bits of which file stat names (its device and inode), to tell a file met again from a
 * different one stored under the same path (0 for an entry added from memory). */
static uint32_t file_ident(const struct stat *st)
{
	const uint64_t id[2] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
	return (uint32_t)zn_xxh3(id, sizeof(id)) | 1;
}

/* A new entry for path (*idx), or NO_ENTRY where the path is stored already: the same file
 * met again (overlapping PATHs) is named as a warning, a different one (st, from another -C
 * or PATH) as an input left out; two directories are merged, as their contents would be. */
zn_result wr_new_entry(struct zn_writer *w, const char *path, size_t path_len, int type,
                       const struct stat *st, uint64_t *idx)
{
	if (w->nents * 2 >= w->paths_cap) {
		size_t ncap = w->paths_cap ? w->paths_cap * 2 : 1024;
		uint64_t *old = w->paths;
		size_t ocap = w->paths_cap;
		if (!(w->paths = calloc(ncap, sizeof(*w->paths)))) {
			w->paths = old;
			return ZN_ERR_NOMEM;
		}
		w->paths_cap = ncap;
		for (size_t i = 0; i < ocap; i++) {
			if (!old[i])
				continue;
			const struct went *e = &w->ents[wr_slot_entry(old[i])];
			uint64_t key;
			*wr_path_slot(w, e->path, e->path_len, &key) = old[i];
		}
		free(old);
	}
	uint64_t key, *slot = wr_path_slot(w, path, path_len, &key);
	const struct went *first = *slot ? &w->ents[wr_slot_entry(*slot)] : NULL;
	if (first && !wr_left_out(w, first)) {
		if (st && (type != ZN_TYPE_DIR || first->type != ZN_TYPE_DIR) &&
		    w->packs[wr_slot_entry(*slot)].ident != file_ident(st)) {
			wr_report(w, path, ZN_ERR_EXISTS,
			          "a different file was stored under this path first; not stored");
			w->input_err = ZN_ERR_IO;
		} else if (type != ZN_TYPE_DIR || first->type != ZN_TYPE_DIR) {
			wr_report(w, path, ZN_OK, "given more than once; stored once (the first)");
		}
		*idx = NO_ENTRY;
		return ZN_OK;
	}
	if (wr_grow((void **)&w->ents, &w->ents_cap, w->nents + 1, sizeof(*w->ents)) ||
	    wr_grow((void **)&w->packs, &w->packs_cap, w->nents + 1, sizeof(*w->packs)))
		return ZN_ERR_NOMEM;
	struct went *e = &w->ents[w->nents];
	memset(e, 0, sizeof(*e));
	memset(&w->packs[w->nents], 0, sizeof(*w->packs)); /* slot 0, fill 0 until placed */
	w->packs[w->nents].ident = st ? file_ident(st) : 0;
	if (!(e->path = keep_str(w, path, path_len)))
		return ZN_ERR_NOMEM;
	e->path_len = (uint32_t)path_len;
	e->type = (uint8_t)type;
	if (!w->opt.no_packages && (type == ZN_TYPE_FILE || type == ZN_TYPE_HARDLINK))
		e->pkg_kind = (uint8_t)zn_pkg_file_kind(path, path_len);
	e->link_entry = -1;
	e->dup_of = -1;
	*idx = w->nents++;
	*slot = wr_set_slot(key, *idx);
	return ZN_OK;
}

zn_result wr_set_link(struct zn_writer *w, struct went *e, const char *link, size_t len)
{
	if (!(e->link = keep_str(w, link, len)))
		return ZN_ERR_NOMEM;
	e->link_len = (uint32_t)len;
	return ZN_OK;
}

void wr_fill_stat(struct zn_writer *w, struct went *e, const struct stat *st)
{
	e->mode = st->st_mode & 07777;
	e->uid = st->st_uid;
	e->gid = st->st_gid;
	e->uname = lookup_name(w, &w->ucache, st->st_uid, 0);
	e->gname = lookup_name(w, &w->gcache, st->st_gid, 1);
	e->mtime_ns = mtime_ns_of(st);
	if (e->mtime_ns == INT64_MAX || e->mtime_ns == INT64_MIN)
		wr_report(w, e->path, ZN_OK,
		          "modification time outside 1677-2262; stored as the nearest");
}

/* Hardlinked inodes seen so far: returns the entry that first stored this inode, or -1. */
int64_t wr_inode_lookup(struct zn_writer *w, const struct stat *st, uint64_t entry)
{
	if (w->ninodes * 2 >= w->inodes_cap) {
		size_t ncap = w->inodes_cap ? w->inodes_cap * 2 : 256;
		struct inode_rec *t = calloc(ncap, sizeof(*t));
		if (!t)
			return -1;
		for (size_t i = 0; i < w->inodes_cap; i++) {
			if (!w->inodes[i].ino && !w->inodes[i].dev)
				continue;
			size_t h = (w->inodes[i].ino * 0x9e3779b97f4a7c15ULL) & (ncap - 1);
			while (t[h].ino || t[h].dev)
				h = (h + 1) & (ncap - 1);
			t[h] = w->inodes[i];
		}
		free(w->inodes);
		w->inodes = t;
		w->inodes_cap = ncap;
	}
	size_t h = (st->st_ino * 0x9e3779b97f4a7c15ULL) & (w->inodes_cap - 1);
	while (w->inodes[h].ino || w->inodes[h].dev) {
		if (w->inodes[h].ino == st->st_ino && w->inodes[h].dev == st->st_dev)
			return (int64_t)w->inodes[h].entry;
		h = (h + 1) & (w->inodes_cap - 1);
	}
	w->inodes[h].dev = st->st_dev;
	w->inodes[h].ino = st->st_ino;
	w->inodes[h].entry = entry;
	w->ninodes++;
	return -1;
}
