/* SPDX-License-Identifier: MIT */
/* fuzz_pkg_detect.c - libFuzzer target: package detection over a file's bytes (lib/pkg/
 * pkg_detect.c), as create runs it. The first byte picks the file's name (a jar, wheel, zip,
 * crate, npm tarball, sdist or pom, in a Maven-like directory or not), the second how much of it
 * the view holds (all of it; or a head and a tail, as for a file larger than a block); the rest
 * is the content. Whatever it holds, detection must leave bounded, NUL-terminated fields, and
 * the whole view must give what zn_pkg_detect() gives. The detector's state lives on between runs,
 * as it does in create. */
#include <stdint.h>
#include <string.h>

#include "pkg/pkg_internal.h"
#include "znippy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
        "org/example/lib/1.0/lib-1.0.jar",
        "lib/debian/lib-debian.jar",
        "x.war",
        "pkg/demo-1.0-py3-none-any.whl",
        "demo-1.0.zip",
        "crates/demo-0.1.0.crate",
        "npm/demo-1.0.0.tgz",
        "sdist/demo-1.0.tar.gz",
        "org/example/lib/1.0/lib-1.0.pom",
        "x.pom",
        "not-a-package.txt",
};

static void check(const struct zn_pkg_coord *c, zn_result r)
{
	const char *f[3] = {c->group, c->name, c->version};
	for (int i = 0; i < 3; i++)
		if (!memchr(f[i], 0, ZN_PKG_FIELD_MAX))
			__builtin_trap();
	if ((r == ZN_OK) != (c->type != ZN_PKG_NONE) || c->type > ZN_PKG_NPM)
		__builtin_trap();
	if (r != ZN_OK && r != ZN_ERR_NOT_FOUND)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const char *path = names[data[0] % (sizeof(names) / sizeof(names[0]))];
	const size_t len = strlen(path);
	const unsigned split = data[1];
	data += 2;
	size -= 2;

	/* One detector for every run, as create keeps one per thread (a fresh one costs most of a
	 * small input's time); the public call, which makes its own, on a sixteenth of them. */
	static struct pkg_work w;
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	int kind = zn_pkg_file_kind(path, len);
	struct pkg_view v = {.head = data, .head_len = size, .size = size};
	zn_result r = pkg_detect_view(&w, kind, path, len, &v, &c);
	check(&c, r);
	if ((split & 15) == 1) {
		struct zn_pkg_coord whole = {.struct_size = sizeof(whole)};
		zn_result rw = zn_pkg_detect(path, len, data, size, &whole);
		check(&whole, rw);
		if (kind && (r != rw || memcmp(&c, &whole, sizeof(c))))
			__builtin_trap();
	}
	/* The same file with a hole in the middle: a head and a tail, as for a file of several
	 * blocks. */
	if (split && size > 2) {
		uint64_t head = size * (split & 15) / 16, tail = size * (split >> 4) / 16;
		v = (struct pkg_view){.head = data,
		                      .head_len = head,
		                      .tail = data + size - tail,
		                      .tail_off = size - tail,
		                      .size = size};
		check(&c, pkg_detect_view(&w, kind, path, len, &v, &c));
	}
	return 0;
}
