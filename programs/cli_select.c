/* SPDX-License-Identifier: MIT */
/* cli_select.c - which entries a command works on: --exclude and -X (create's walk, extract and
 * list) and the PATTERNs of extract, list and diff. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct cli_exclude {
	char *glob;         /* in the form stored paths have */
	struct cli_glob *g; /* glob compiled, or NULL: fnmatch */
	int anchored;       /* given with a leading '/': the whole stored path only */
	int dir_only;       /* given with a trailing '/': directories only */
};

/* The ends of a path an exclude may match it at: its own end (a directory's only, for a pattern
 * naming directories) and, with `above`, each directory above it. */
struct exclude_ends {
	const char *path;
	size_t len;
	int is_dir, dir_only, above;
};

static int exclude_end(void *ctx, size_t end)
{
	const struct exclude_ends *a = ctx;
	if (end == a->len)
		return a->is_dir || !a->dir_only;
	return a->above && a->path[end] == '/';
}

/* fnmatch's answer for the NUL-terminated path, for a pattern cli_glob does not compile. */
static int fn_excluded(const struct cli_exclude *e, const char *rel, int is_dir)
{
	if (e->dir_only && !is_dir)
		return 0;
	for (const char *tail = rel; tail;
	     tail = e->anchored ? NULL : strchr(tail, '/'), tail = tail ? tail + 1 : NULL)
		if (!fnmatch(e->glob, tail, 0))
			return 1;
	return 0;
}

/* Whether e excludes path (len bytes, NUL-terminated), or with `above` a directory above it: one
 * pass over the path for every tail of every directory (cli_glob.c says why); -1 when out of
 * memory. Only fnmatch's way with `above` writes to path (a NUL for each '/', put back). */
static int excluded(const struct cli_exclude *e, char *path, size_t len, int is_dir, int above)
{
	struct exclude_ends a = {path, len, is_dir, e->dir_only, above};
	if (e->g)
		return cli_glob_scan(e->g, path, len, !e->anchored, exclude_end, &a);
	int hit = fn_excluded(e, path, is_dir);
	for (size_t k = 0; above && !hit && k < len; k++)
		if (path[k] == '/') {
			path[k] = 0;
			hit = fn_excluded(e, path, 1);
			path[k] = '/';
		}
	return hit;
}

/* As tar's --exclude: a pattern matches the stored path or any tail of it that starts at a
 * component ("a/b" excludes "t/a/b"), '*' matches '/' too, and an excluded directory takes
 * its contents with it (it is not walked). A pattern with a leading '/' is anchored: it must
 * match the whole stored path (which has no leading '/'), as for a PATH given absolute; so is
 * one with a leading "./" (tar's "./build" leaves "./src/build" in, its names starting "./"); one
 * with a trailing '/' matches directories only. */
int cli_exclude_filter(void *ctx, const char *rel, int is_dir)
{
	struct cli_excludes *x = ctx;
	for (int i = 0; i < x->n; i++)
		if (excluded(&x->pats[i], (char *)rel, strlen(rel), is_dir, 0))
			return 0; /* out of memory too: leaves out rather than stores what it would
			             not */
	return 1;
}

/* Adds one --exclude: "./t/a", "t//a" and "/abs/t/a/" become "t/a" (the first anchored) and
 * "abs/t/a" (anchored, directories only), matching the names PATHs are stored under. */
int cli_exclude_add(struct cli_excludes *x, const char *arg)
{
	if (x->n == x->cap) {
		struct cli_exclude *np =
		        realloc(x->pats, (size_t)(x->cap = x->cap * 2 + 16) * sizeof(*np));
		if (!np)
			return -1;
		x->pats = np;
	}
	struct cli_exclude *e = &x->pats[x->n];
	e->anchored = arg[0] == '/' || (arg[0] == '.' && arg[1] == '/');
	while (arg[0] == '/' && arg[1])
		arg++;
	if (!(e->glob = cli_pattern(arg, &e->dir_only)))
		return -1;
	e->g = cli_glob_new(e->glob);
	x->n++;
	return 0;
}

/* --exclude-from: one pattern per line; empty lines are none. */
static int exclude_from(struct cli_excludes *x, const char *cmd, const char *name)
{
	size_t len;
	int rc = 0;
	char *buf = cli_read_list(cmd, name, &len, &rc);
	if (!buf)
		return rc;
	for (char *line = buf, *end; line < buf + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len;
		*end = 0;
		/* Trailing blanks and a CR (a file written on Windows) are not part of the
		 * pattern, as with tar -X. */
		for (char *t = end; t > line && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r');)
			*--t = 0;
		if (*line && cli_exclude_add(x, line)) {
			free(buf);
			return EXIT_SYSTEM;
		}
	}
	free(buf); /* cli_pattern made copies */
	return 0;
}

int cli_exclude_option(struct cli_excludes *x, const char *cmd, int from_file, const char *arg)
{
	if (!from_file)
		return cli_exclude_add(x, arg) ? EXIT_SYSTEM : 0;
	return exclude_from(x, cmd, arg);
}

/* Marks in sel the entries the PATTERNs select among those `allowed` marks (NULL: all; what
 * --exclude leaves out is not found, as with tar); returns how many PATTERNs selected nothing
 * (each named), or -1 when out of memory (said). */
int cli_select_entries(struct zn_reader *r, char **pats, int npats, uint8_t *sel,
                       const uint8_t *allowed)
{
	/* Each PATTERN in the form the archive stores paths, whether it names only directories
	 * ("d/", as with tar: a file then matches only through a directory above it), and whether
	 * it matched. Messages name the PATTERN as given. */
	struct pat {
		char *norm;
		struct cli_glob *g; /* norm compiled, or NULL: fnmatch */
		int dir_only, hit;
	} *p = sel ? calloc((size_t)npats + 1, sizeof(*p)) : NULL;
	int missing = 0;
	for (int k = 0; p && k < npats; k++) {
		if (!(p[k].norm = cli_pattern(pats[k], &p[k].dir_only))) {
			missing = -1;
			break;
		}
		p[k].g = cli_glob_new(p[k].norm);
	}
	if (!p || missing) {
		cli_error("out of memory");
		missing = -1;
		goto out;
	}
	uint64_t n = zn_reader_count(r), unreadable = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (allowed && !allowed[i])
			continue;
		struct zn_entry e;
		unsigned lost; /* an entry that lost only its metadata is extracted by its path */
		if (zn_reader_entry_lost(r, i, &e, &lost) != ZN_OK) {
			sel[i] = 1; /* let the extractor report it */
			unreadable++;
			continue;
		}
		/* The part of the path a directory-only pattern may match: its parent. */
		size_t parent = e.path_len;
		while (parent && e.path[parent - 1] != '/')
			parent--;
		parent = parent ? parent - 1 : 0;
		for (int k = 0; k < npats; k++) {
			int via_parent = p[k].dir_only && e.type != ZN_TYPE_DIR;
			if (via_parent && !parent)
				continue;
			if (cli_path_matches(p[k].norm, p[k].g, e.path,
			                     via_parent ? parent : e.path_len)) {
				sel[i] = 1;
				p[k].hit = 1;
			}
		}
	}
	for (int k = 0; k < npats; k++) {
		if (!p[k].hit && unreadable) {
			cli_error("%s: not found among the entries that can be read (%llu of the "
			          "index's entries are damaged)",
			          pats[k], (unsigned long long)unreadable);
			missing++;
		} else if (!p[k].hit) {
			cli_error("%s: not found in archive", pats[k]);
			missing++;
		}
	}
out:
	for (int k = 0; p && k < npats; k++) {
		free(p[k].norm);
		cli_glob_free(p[k].g);
	}
	free(p);
	return missing;
}

/* --exclude and -X when extracting or listing, as tar's: an entry a pattern matches (as create
 * matches them: the path or a tail of it from a '/' on) is left out, and so is everything below
 * a directory one matches. *sel is made (all selected) if it was NULL. */
static int apply_excludes(struct zn_reader *r, struct cli_excludes *x, uint8_t **sel)
{
	uint64_t n = zn_reader_count(r);
	if (!*sel && (*sel = malloc(n + 1)))
		memset(*sel, 1, n + 1);
	char *buf = NULL;
	size_t cap = 0;
	for (uint64_t i = 0; *sel && i < n; i++) {
		struct zn_entry e;
		unsigned lost;
		if (!(*sel)[i] || zn_reader_entry_lost(r, i, &e, &lost) != ZN_OK)
			continue;
		if (e.path_len + 1 > cap) {
			free(buf);
			cap = e.path_len + 256;
			if (!(buf = malloc(cap)))
				break;
		}
		memcpy(buf, e.path, e.path_len);
		buf[e.path_len] = 0;
		int keep = 1; /* and out of memory leaves out, as in cli_exclude_filter */
		for (int k = 0; keep && k < x->n; k++)
			keep = !excluded(&x->pats[k], buf, e.path_len, e.type == ZN_TYPE_DIR, 1);
		(*sel)[i] = (uint8_t)keep;
	}
	int ok = *sel && (buf || !cap);
	free(buf);
	if (!ok)
		cli_error("out of memory");
	return ok ? 0 : EXIT_SYSTEM;
}

/* What extract and list work on: the entries the PATTERNs select (all without any) among those
 * --exclude leaves, in *sel (NULL: every entry). Returns as cli_select_entries: how many PATTERNs
 * selected nothing, or -1 when out of memory (said). */
int cli_select_kept(struct zn_reader *r, struct cli_excludes *x, char **pats, int npats,
                    uint8_t **sel)
{
	uint8_t *kept = NULL;
	*sel = NULL;
	if ((x->n && apply_excludes(r, x, &kept)) || cli_package_filter(r, x, &kept)) {
		free(kept);
		return -1;
	}
	if (!npats) {
		*sel = kept;
		return 0;
	}
	*sel = calloc(zn_reader_count(r) + 1, 1);
	int missing = cli_select_entries(r, pats, npats, *sel, kept);
	free(kept);
	return missing;
}
