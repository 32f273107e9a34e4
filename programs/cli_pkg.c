/* SPDX-License-Identifier: MIT */
/* cli_pkg.c - list's and extract's package filters: --package-type, --package and --repo. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_package_option(struct cli_excludes *x, const char *cmd, int which, const char *arg)
{
	if (which == CLI_PKG_TYPE) {
		static const char *const types[] = {"maven", "pypi", "cargo", "npm"};
		for (unsigned t = 0; t < 4; t++)
			if (!strcmp(arg, types[t])) {
				x->pkg_type = t + 1;
				return 0;
			}
		return cli_usage_error(
		        cmd, "invalid --package-type '%s' (maven, pypi, cargo or npm)", arg);
	}
	if (which == CLI_PKG_REPO) {
		x->repo = arg;
		return 0;
	}
	/* GROUP:NAME:VERSION, NAME:VERSION or NAME */
	char *s = strdup(arg);
	if (!s) {
		cli_error("out of memory");
		return EXIT_SYSTEM;
	}
	char *part[4] = {0};
	int n = 0;
	for (char *p = s; n < 4; n++) {
		part[n] = p;
		if (!(p = strchr(p, ':')))
			break;
		*p++ = 0;
	}
	if (n++ >= 3) {
		free(s);
		return cli_usage_error(cmd, "invalid --package '%s' (GROUP:NAME:VERSION globs)",
		                       arg);
	}
	int at = n == 3 ? 0 : 1; /* without a group: NAME[:VERSION] */
	x->pkg[0] = x->pkg[1] = x->pkg[2] = NULL;
	for (int k = 0; k < n; k++)
		x->pkg[at + k] = part[k];
	x->pkg_text = s;
	x->has_pkg = 1;
	return 0;
}

static int field_matches(const char *glob, const char *s)
{
	return !glob || !fnmatch(glob, s, 0);
}

/* Whether entry i passes the package filters (out of memory or damage: it does not). */
static int package_passes(struct zn_reader *r, const struct cli_excludes *x, uint64_t i)
{
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	if (zn_reader_package(r, i, &c) != ZN_OK || c.type == ZN_PKG_NONE)
		return 0;
	if (x->pkg_type && c.type != x->pkg_type)
		return 0;
	return !x->has_pkg ||
	       (field_matches(x->pkg[0], c.group) && field_matches(x->pkg[1], c.name) &&
	        field_matches(x->pkg[2], c.version));
}

int cli_package_filter(struct zn_reader *r, const struct cli_excludes *x, uint8_t **sel)
{
	if (!x->pkg_type && !x->has_pkg && !x->repo)
		return 0;
	uint64_t n = zn_reader_count(r);
	if (!*sel && (*sel = malloc(n + 1)))
		memset(*sel, 1, n + 1);
	if (!*sel) {
		cli_error("out of memory");
		return EXIT_SYSTEM;
	}
	char repo[256];
	zn_reader_repo(r, repo);
	int repo_ok = !x->repo || !fnmatch(x->repo, repo, 0);
	for (uint64_t i = 0; i < n; i++)
		if ((*sel)[i])
			(*sel)[i] = repo_ok &&
			            ((!x->pkg_type && !x->has_pkg) || package_passes(r, x, i));
	return 0;
}
