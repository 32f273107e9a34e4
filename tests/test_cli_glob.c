/* SPDX-License-Identifier: MIT */
/* test_cli_glob.c - the command's one-pass globs (programs/cli_glob.c) against fnmatch(3): on
 * hand-picked edge cases and on generated patterns and strings, every prefix and every tail of
 * every prefix must match exactly when fnmatch (no flags, C locale) says it does; and a path of
 * 100,000 components is scanned once, not once per component. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../programs/cli.h"
#include "test_util.h"

enum { MAXS = 24 };

static unsigned char got[MAXS + 1];
static int record(void *ctx, size_t end)
{
	(void)ctx;
	got[end] = 1;
	return 0;
}

static int asks;
static int count(void *ctx, size_t end)
{
	(void)ctx, (void)end;
	asks++;
	return 0;
}

/* Whether fnmatch matches pat to s[b, e). */
static int fn(const char *pat, const char *s, size_t b, size_t e)
{
	char buf[MAXS + 1];
	memcpy(buf, s + b, e - b);
	buf[e - b] = 0;
	return fnmatch(pat, buf, 0) == 0;
}

/* Compares the scan of s with fnmatch for prefixes (tails 0) and tails of prefixes (1). */
static int check(const char *pat, const char *s)
{
	struct cli_glob *g = cli_glob_new(pat);
	if (!g)
		return 0;
	size_t len = strlen(s);
	for (int tails = 0; tails < 2; tails++) {
		memset(got, 0, sizeof(got));
		CHECK(cli_glob_scan(g, s, len, tails, record, NULL) == 0);
		for (size_t e = 0; e <= len; e++) {
			int want = fn(pat, s, 0, e);
			for (size_t j = 0; tails && !want && j < e; j++)
				if (s[j] == '/')
					want = fn(pat, s, j + 1, e);
			if (want != got[e]) {
				fprintf(stderr,
				        "pattern '%s' string '%s' end %zu tails %d: fnmatch %d, "
				        "scan %d\n",
				        pat, s, e, tails, want, got[e]);
				CHECK(want == got[e]);
			}
		}
	}
	cli_glob_free(g);
	return 1;
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_cli_glob");
	static const char *const edge[][2] = {
	        {"", ""},
	        {"", "a"},
	        {"*", ""},
	        {"*", "a/b"},
	        {"a*b", "a/x/b"},
	        {"?", "/"},
	        {"[a-c]", "b"},
	        {"[!a-c]", "d"},
	        {"[^a]", "a"},
	        {"[]]", "]"},
	        {"[]a]", "a"},
	        {"[!]]", "a"},
	        {"[", "["},
	        {"[a", "[a"},
	        {"[]", "[]"},
	        {"a[", "a["},
	        {"\\*", "*"},
	        {"\\*", "a"},
	        {"[\\]]", "]"},
	        {"[a-]", "-"},
	        {"[-a]", "-"},
	        {"[z-a]", "m"},
	        {"[[:digit:]]", "7"},
	        {"[[:alpha:]]", "7"},
	        {"[![:space:]]", " "},
	        {"a/*", "a/b/c"},
	        {"**a", "ba"},
	        {"*a*", "xxaxx"},
	        {"[a-\\]]", "]"},
	        {"[\\a-c]", "b"},
	        {"*.txt", "d/x.txt"},
	        {"x", "a/x"},
	};
	int compiled = 0;
	for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]); k++)
		compiled += check(edge[k][0], edge[k][1]);
	CHECK(compiled == (int)(sizeof(edge) / sizeof(edge[0])));
	/* Not compiled: the caller asks fnmatch. */
	CHECK(!cli_glob_new("a\\") && !cli_glob_new("[[:nope:]]") && !cli_glob_new("[[=a=]]") &&
	      !cli_glob_new("[[.a.]]"));

	/* Generated: short patterns over a small alphabet dense in glob syntax, strings over one
	 * dense in slashes, so that many prefixes and tails match. */
	static const char *const pieces[] = {
	        "a",   "b",   "/",   "*", "*", "?", "[ab]",  "[!a]",        "[a-c]", "[]a]",
	        "[/]", "\\*", "\\a", "[", "]", "-", "[^/b]", "[[:lower:]]", "[!/]"};
	static const char sbytes[] = "ab//*?[]-c";
	struct tu_rng rng;
	tu_rng_seed(&rng, tu_seed);
	long done = 0;
	for (int it = 0; it < 200000; it++) {
		char pat[64] = "", s[MAXS + 1];
		int np = (int)tu_rng_below(&rng, 6);
		for (int k = 0; k < np; k++)
			strcat(pat, pieces[tu_rng_below(&rng, sizeof(pieces) / sizeof(pieces[0]))]);
		size_t len = tu_rng_below(&rng, MAXS / 2 + 1);
		for (size_t k = 0; k < len; k++)
			s[k] = sbytes[tu_rng_below(&rng, sizeof(sbytes) - 1)];
		s[len] = 0;
		done += check(pat, s);
	}
	CHECK(done > 190000);

	/* A path of 100,000 components: one pass, and ask is called once per matching end. */
	size_t n = 100000, len = 2 * n - 1;
	char *deep = malloc(len + 1);
	CHECK(deep);
	for (size_t k = 0; k < len; k++)
		deep[k] = k % 2 ? '/' : 'a';
	deep[len] = 0;
	struct cli_glob *g = cli_glob_new("*a");
	CHECK(g);
	asks = 0;
	CHECK(cli_glob_scan(g, deep, len, 1, count, NULL) == 0);
	CHECK(asks == (int)n); /* every end of a component */
	cli_glob_free(g);
	g = cli_glob_new("x");
	CHECK(g);
	asks = 0;
	CHECK(cli_glob_scan(g, deep, len, 1, count, NULL) == 0 && asks == 0);
	cli_glob_free(g);
	free(deep);
	puts("ok");
	return 0;
}
