/* SPDX-License-Identifier: MIT */
/* cli_glob.c - globs matched against every prefix or stretch of a path in one pass.
 *
 * The patterns of list, extract and diff select a path when they match it or one of the
 * directories above it, and --exclude patterns match any tail of those (tar's conventions). Asked
 * of fnmatch(3), which tests one string a call and measures it first, that is a pass over the
 * path per directory above it, and per tail of each: K^2 or K^3 work for a path of K components.
 * Nothing bounds K in an archive: a crafted 1.5 KB archive holding one path of 40,000 components
 * kept `list --exclude x` busy for four minutes.
 *
 * Here a pattern is compiled once into a list of tokens and run as a set of token positions (a
 * nondeterministic automaton) over the path, once: a start may be injected at every component
 * boundary (tails) and the set asked at every one whether it accepts (prefixes). The work is
 * pattern length x path length, whatever the number of components.
 *
 * The language is fnmatch's without flags in the C locale, which is the command's (it never calls
 * setlocale): bytes; '*' and '?' match '/' too; '[...]' with '!' or '^', ranges and the POSIX
 * classes; '\' quotes the next byte. Patterns using anything else (equivalence classes,
 * collating symbols, a trailing '\') are not compiled, and the caller falls back to fnmatch.
 * tests/test_cli_glob.c holds this to fnmatch on generated patterns and strings.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { T_BYTE, T_ANY, T_SET, T_STAR };

struct tok {
	unsigned char kind, byte;
	unsigned char set[32]; /* T_SET: bit per byte value */
};

struct cli_glob {
	size_t n;
	struct tok t[];
};

static void set_bit(unsigned char *set, unsigned c)
{
	set[c >> 3] |= (unsigned char)(1u << (c & 7));
}

/* [:name:] at p (just past "[:"): the class's bytes added to set, *end past ":]"; 0 if unknown. */
static int add_class(unsigned char *set, const char *p, const char **end)
{
	static const struct {
		const char *name;
		int (*is)(int);
	} classes[] = {{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank},
	               {"cntrl", iscntrl}, {"digit", isdigit}, {"graph", isgraph},
	               {"lower", islower}, {"print", isprint}, {"punct", ispunct},
	               {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit}};
	const char *close = strstr(p, ":]");
	if (!close)
		return 0;
	for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
		if (strlen(classes[k].name) == (size_t)(close - p) &&
		    !memcmp(classes[k].name, p, (size_t)(close - p))) {
			for (unsigned c = 1; c < 256; c++)
				if (classes[k].is((int)c))
					set_bit(set, c);
			*end = close + 2;
			return 1;
		}
	return 0;
}

/* The bracket expression at p (just past '['): its token, *end past its ']'. 0: no closing ']'
 * (the '[' is then an ordinary byte, as fnmatch takes it); -1: something not compiled here. */
static int parse_set(const char *p, struct tok *t, const char **end)
{
	memset(t, 0, sizeof(*t));
	t->kind = T_SET;
	int negate = *p == '!' || *p == '^';
	p += negate;
	for (int first = 1;; first = 0) {
		unsigned c = (unsigned char)*p++;
		if (!c)
			return 0;
		if (c == ']' && !first)
			break;
		if (c == '[' && (*p == '=' || *p == '.'))
			return -1;
		if (c == '[' && *p == ':') {
			if (!add_class(t->set, p + 1, &p))
				return -1;
			continue;
		}
		if (c == '\\') {
			c = (unsigned char)*p++;
			if (!c)
				return 0;
		}
		if (*p == '-' && p[1] && p[1] != ']') {
			unsigned hi = (unsigned char)p[1];
			p += 2;
			if (hi == '\\') {
				hi = (unsigned char)*p++;
				if (!hi)
					return 0;
			} else if (hi == '[' && (*p == '.' || *p == '=' || *p == ':')) {
				return -1;
			}
			for (unsigned b = c; b <= hi; b++)
				set_bit(t->set, b);
			continue;
		}
		set_bit(t->set, c);
	}
	if (negate)
		for (int k = 0; k < 32; k++)
			t->set[k] = (unsigned char)~t->set[k];
	t->set[0] &= 0xfe; /* never the NUL that ends a string */
	*end = p;
	return 1;
}

struct cli_glob *cli_glob_new(const char *pattern)
{
	struct cli_glob *g = malloc(sizeof(*g) + (strlen(pattern) + 1) * sizeof(struct tok));
	if (!g)
		return NULL;
	g->n = 0;
	for (const char *p = pattern; *p;) {
		struct tok *t = &g->t[g->n];
		unsigned char c = (unsigned char)*p++;
		const char *end;
		int r;
		t->kind = T_BYTE;
		if (c == '*') {
			t->kind = T_STAR;
			if (g->n && g->t[g->n - 1].kind == T_STAR)
				continue; /* "**" is "*" */
		} else if (c == '?') {
			t->kind = T_ANY;
		} else if (c == '[' && (r = parse_set(p, t, &end)) != 0) {
			if (r < 0)
				goto unsupported;
			p = end;
		} else if (c == '\\') {
			if (!*p)
				goto unsupported; /* fnmatch matches nothing with it */
			t->byte = (unsigned char)*p++;
		} else {
			t->kind = T_BYTE; /* also a '[' without its ']' */
			t->byte = c;
		}
		g->n++;
	}
	return g;
unsupported:
	free(g);
	return NULL;
}

void cli_glob_free(struct cli_glob *g)
{
	free(g);
}

/* With state i set, the positions a '*' at i also stands for (matching nothing). */
static void close_stars(const struct cli_glob *g, unsigned char *st)
{
	for (size_t i = 0; i < g->n; i++)
		if (st[i] && g->t[i].kind == T_STAR)
			st[i + 1] = 1;
}

int cli_glob_scan(const struct cli_glob *g, const char *s, size_t len, int tails,
                  int (*ask)(void *ctx, size_t end), void *ctx)
{
	unsigned char stack[2 * 128];
	unsigned char *mem = g->n < 128 ? stack : malloc(2 * (g->n + 1));
	if (!mem)
		return -1;
	unsigned char *cur = mem, *nxt = mem + g->n + 1;
	memset(cur, 0, g->n + 1);
	int hit = 0;
	bool live = false; /* a state set in cur */
	for (size_t e = 0;; e++) {
		/* A tail starts here: at the start, and after each '/' when asked for tails. */
		if (!e || (tails && s[e - 1] == '/')) {
			cur[0] = 1;
			close_stars(g, cur);
			live = true;
		}
		if (live && cur[g->n] && ask(ctx, e)) {
			hit = 1;
			break;
		}
		if (e == len || (!live && !tails))
			break;
		const unsigned c = (unsigned char)s[e];
		memset(nxt, 0, g->n + 1);
		live = false;
		for (size_t i = 0; i < g->n; i++) {
			if (!cur[i])
				continue;
			const struct tok *t = &g->t[i];
			if (t->kind == T_STAR)
				nxt[i] = 1;
			else if (t->kind == T_ANY || (t->kind == T_BYTE && t->byte == c) ||
			         (t->kind == T_SET && (t->set[c >> 3] >> (c & 7) & 1)))
				nxt[i + 1] = 1;
			else
				continue;
			live = true;
		}
		close_stars(g, nxt);
		unsigned char *tmp = cur;
		cur = nxt;
		nxt = tmp;
	}
	if (mem != stack)
		free(mem);
	return hit;
}
