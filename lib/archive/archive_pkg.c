/* SPDX-License-Identifier: MIT */
/* archive_pkg.c - the writer's package detection: coordinates read from the bytes being archived.
 *
 * A package file (zn_pkg_file_kind of its path) is read by lib/pkg from memory the pipeline holds
 * anyway, never from the file again:
 *   - a file wholly in one block (nearly every jar, wheel, crate and npm tarball under the chunk
 *     size) by its block's compression job, beside its SHA-256: in parallel, from the slot;
 *   - a file of several blocks by the output job, which passes its pieces in order: it keeps the
 *     file's first PKG_HEAD_MAX and last PKG_TAIL_MAX bytes (a ZIP's directory is at its end,
 *     its metadata member most often near either end; a tar.gz is read from its start) and
 *     detects once the last piece has passed. Those copies, 512 KiB at most, are made only for
 *     package files larger than a block.
 * Either way the result lands on the file's last seg, and harvest moves it to the entry. Files
 * stored once for several paths and hardlinks take their original's at finish (wr_pkg_finish)
 * where its content gave them, else their own path's; a jar that told only its path takes the
 * coordinates of the .pom beside it.
 * Whatever a file holds, detection only leaves its coordinates empty.
 */
#include "archive_writer.h"

/* The coordinates as the writer keeps them: one allocation, the type's byte, whether they are the
 * metadata's (1) or the path's (0), then group, name and version, each NUL-terminated. NULL for
 * none, or when memory ran out (they are then left out). */
static char *pkg_pack(const struct zn_pkg_coord *c, int from_meta)
{
	size_t g = strlen(c->group), n = strlen(c->name), v = strlen(c->version);
	char *s = malloc(2 + g + 1 + n + 1 + v + 1);
	if (!s)
		return NULL;
	s[0] = (char)c->type;
	s[1] = (char)from_meta;
	memcpy(s + 2, c->group, g + 1);
	memcpy(s + 3 + g, c->name, n + 1);
	memcpy(s + 4 + g + n, c->version, v + 1);
	return s;
}

void wr_pkg_unpack(const char *s, struct wr_pkg_fields *f)
{
	f->type = (uint8_t)s[0];
	f->from_meta = (uint8_t)s[1];
	f->group = s + 2;
	f->name = f->group + strlen(f->group) + 1;
	f->version = f->name + strlen(f->name) + 1;
}

/* A copy of pkg_pack's string (NULs inside: not strdup). */
static char *pkg_copy(const char *s)
{
	struct wr_pkg_fields f;
	wr_pkg_unpack(s, &f);
	size_t n = (size_t)(f.version - s) + strlen(f.version) + 1;
	char *c = malloc(n);
	return c ? memcpy(c, s, n) : NULL;
}

static char *detect(struct pkg_work *pw, const struct seg *g, const struct pkg_view *v)
{
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	int from_meta;
	if (pkg_detect_view(pw, g->pkg_kind, g->path, g->path_len, v, &c, &from_meta) != ZN_OK)
		return NULL;
	return pkg_pack(&c, from_meta);
}

void wr_pkg_whole(struct slot *s, struct pkg_work *pw)
{
	for (size_t i = 0; i < s->nsegs; i++) {
		struct seg *g = &s->segs[i];
		if (g->pkg_kind && g->first && g->last) {
			struct pkg_view v = {
			        .head = s->in + g->off, .head_len = g->len, .size = g->len};
			g->pkg = detect(pw, g, &v);
		}
	}
}

/* Copies the part of [at, at + n) of the file (at p) that falls in [lo, lo + cap) to buf. */
static void keep_part(uint8_t *buf, uint64_t lo, uint64_t cap, uint64_t at, const uint8_t *p,
                      uint64_t n)
{
	uint64_t from = ZN_MAX(at, lo), to = ZN_MIN(at + n, lo + cap);
	if (from < to)
		memcpy(buf + (from - lo), p + (from - at), to - from);
}

void wr_pkg_pieces(struct zn_writer *w, struct slot *s)
{
	struct wr_pipe *p = &w->pipe;
	for (size_t i = 0; i < s->nsegs; i++) {
		struct seg *g = &s->segs[i];
		if (!g->pkg_kind || (g->first && g->last && s->rfd < 0))
			continue; /* no package, or its compression job's */
		if (!p->pkg_head)
			p->pkg_head = malloc(PKG_HEAD_MAX);
		if (!p->pkg_tail)
			p->pkg_tail = malloc(PKG_TAIL_MAX);
		if (!p->pkg_head || !p->pkg_tail)
			return; /* no memory: no coordinates, nothing else lost */
		if (g->first)
			p->pkg_pos = 0;
		uint64_t tail_off = g->fsize > PKG_TAIL_MAX ? g->fsize - PKG_TAIL_MAX : 0;
		keep_part(p->pkg_head, 0, PKG_HEAD_MAX, p->pkg_pos, s->in + g->off, g->len);
		keep_part(p->pkg_tail, tail_off, PKG_TAIL_MAX, p->pkg_pos, s->in + g->off, g->len);
		p->pkg_pos += g->len;
		if (!g->last || p->pkg_pos != g->fsize || s->rerr)
			continue;
		struct pkg_view v = {
		        .head = p->pkg_head,
		        .head_len = ZN_MIN(g->fsize, PKG_HEAD_MAX),
		        .tail = p->pkg_tail,
		        .tail_off = tail_off,
		        .size = g->fsize,
		};
		g->pkg = detect(&p->pkg_work, g, &v);
	}
}

/* The entry whose bytes, or whose target's, entry i's are; i itself for most. */
static uint64_t content_of(const struct zn_writer *w, uint64_t i)
{
	const struct went *e = &w->ents[i];
	if (e->link_entry >= 0)
		e = &w->ents[e->link_entry];
	return e->dup_of >= 0 ? (uint64_t)e->dup_of : (uint64_t)(e - w->ents);
}

/* The .pom beside a jar whose coordinates came from its path: ARTIFACT-VERSION.pom in the same
 * directory, if it is in the archive and told its own. */
static const char *sibling_pom(struct zn_writer *w, const struct went *e)
{
	struct wr_pkg_fields f;
	wr_pkg_unpack(e->pkg, &f);
	size_t dir = e->path_len;
	while (dir && e->path[dir - 1] != '/')
		dir--;
	size_t n = dir + strlen(f.name) + 1 + strlen(f.version) + 4;
	char *want = malloc(n + 1);
	if (!want)
		return NULL;
	snprintf(want, n + 1, "%.*s%s-%s.pom", (int)dir, e->path, f.name, f.version);
	uint64_t key, *slot = wr_path_slot(w, want, n, &key);
	free(want);
	if (!*slot)
		return NULL;
	const struct went *pom = &w->ents[wr_slot_entry(*slot)];
	return pom->type == ZN_TYPE_FILE && !pom->dropped && pom->pkg ? pom->pkg : NULL;
}

/* Entry e's coordinates from its own path. */
static char *from_own_path(const struct went *e)
{
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	if (e->pkg_kind == ZN_PKGF_SDIST_TGZ || e->pkg_kind == ZN_PKGF_SDIST_ZIP ||
	    e->pkg_kind == ZN_PKGF_NPM_TGZ ||
	    zn_pkg_from_path(e->pkg_kind, e->path, e->path_len, &c) != ZN_OK)
		return NULL; /* as pkg_detect_view: these names alone say nothing */
	return pkg_pack(&c, 0);
}

void wr_pkg_finish(struct zn_writer *w)
{
	/* A copy stored once, or a hardlink: the original's coordinates where its content gave
	 * them, else those of its own path (a jar without pom.properties under two versions). */
	for (uint64_t i = 0; i < w->nents; i++) {
		struct went *e = &w->ents[i];
		if (e->pkg || !e->pkg_kind || e->dropped)
			continue;
		const struct went *o = &w->ents[content_of(w, i)];
		struct wr_pkg_fields f;
		if (o == e)
			continue;
		if (o->pkg && (wr_pkg_unpack(o->pkg, &f), f.from_meta))
			e->pkg = pkg_copy(o->pkg); /* NULL on no memory: left out */
		else
			e->pkg = from_own_path(e);
	}
	/* A jar that told only its path: the coordinates of the .pom beside it, if it has them. */
	for (uint64_t i = 0; i < w->nents; i++) {
		struct went *e = &w->ents[i];
		struct wr_pkg_fields f;
		if (!e->pkg || e->pkg_kind != ZN_PKGF_JAR ||
		    (wr_pkg_unpack(e->pkg, &f), f.from_meta))
			continue;
		const char *pom = sibling_pom(w, e);
		char *c = pom ? pkg_copy(pom) : NULL;
		if (c) {
			free(e->pkg);
			e->pkg = c;
		}
	}
}
