/* SPDX-License-Identifier: MIT */
/* test_pkg_detect.c - package detection over a file's bytes (zn_pkg_detect, pkg_detect_view):
 * ZIPs made here (stored and deflated members, a prefix, ZIP64 end records, several
 * pom.properties ranked by the repository path), gzip'd tars (ustar, GNU long names, pax paths,
 * members past the metadata), a .pom, views that hold only a file's head and tail as create keeps
 * them for files larger than a block, every truncation of each, corrupt members (falling back to
 * the path), and Debian's own wheels. zlib makes the DEFLATE streams. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "gzip_test_util.h"
#include "pkg/pkg_internal.h"
#include "test_util.h"

struct member {
	const char *name;
	const char *data;
	size_t len; /* 0: strlen(data) */
};

/* A ZIP of the members after `prefix` bytes of junk; deflated where `deflate`, with ZIP64 end
 * records where `zip64`. */
static struct tu_buf make_zip(const struct member *m, int n, int deflate, int zip64, size_t prefix)
{
	struct tu_buf b = {0}, cd = {0};
	for (size_t i = 0; i < prefix; i++)
		tu_put(&b, "J", 1);
	for (int i = 0; i < n; i++) {
		size_t len = m[i].len ? m[i].len : strlen(m[i].data);
		uint8_t *z = malloc(len * 2 + 64);
		size_t zn = deflate ? compress_zlib((const uint8_t *)m[i].data, len, z,
		                                    len * 2 + 64, 6, -15, 0)
		                    : len;
		if (!deflate)
			memcpy(z, m[i].data, len);
		uint32_t crc = zn_crc32(0, m[i].data, len), off = (uint32_t)(b.len - prefix);
		size_t nl = strlen(m[i].name);
		tu_put32(&b, 0x04034b50);
		tu_put16(&b, 20), tu_put16(&b, 0), tu_put16(&b, deflate ? 8 : 0), tu_put32(&b, 0);
		tu_put32(&b, crc), tu_put32(&b, (uint32_t)zn), tu_put32(&b, (uint32_t)len);
		tu_put16(&b, (uint32_t)nl), tu_put16(&b, 0);
		tu_put(&b, m[i].name, nl);
		tu_put(&b, z, zn);
		tu_put32(&cd, 0x02014b50);
		tu_put16(&cd, 20), tu_put16(&cd, 20), tu_put16(&cd, 0),
		        tu_put16(&cd, deflate ? 8 : 0);
		tu_put32(&cd, 0), tu_put32(&cd, crc), tu_put32(&cd, (uint32_t)zn),
		        tu_put32(&cd, (uint32_t)len);
		tu_put16(&cd, (uint32_t)nl), tu_put16(&cd, 0), tu_put16(&cd, 0), tu_put16(&cd, 0),
		        tu_put16(&cd, 0);
		tu_put32(&cd, 0), tu_put32(&cd, off);
		tu_put(&cd, m[i].name, nl);
		free(z);
	}
	uint64_t cd_off = b.len - prefix;
	tu_put(&b, cd.p, cd.len);
	if (zip64) {
		uint64_t at = b.len - prefix;
		tu_put32(&b, 0x06064b50), tu_put64(&b, 44), tu_put16(&b, 45), tu_put16(&b, 45);
		tu_put32(&b, 0), tu_put32(&b, 0), tu_put64(&b, (uint64_t)n),
		        tu_put64(&b, (uint64_t)n);
		tu_put64(&b, cd.len), tu_put64(&b, cd_off);
		tu_put32(&b, 0x07064b50), tu_put32(&b, 0), tu_put64(&b, at + prefix),
		        tu_put32(&b, 1);
	}
	tu_put32(&b, 0x06054b50), tu_put16(&b, 0), tu_put16(&b, 0);
	tu_put16(&b, zip64 ? 0xffff : (uint32_t)n), tu_put16(&b, zip64 ? 0xffff : (uint32_t)n);
	tu_put32(&b, zip64 ? 0xffffffffu : (uint32_t)cd.len);
	tu_put32(&b, zip64 ? 0xffffffffu : (uint32_t)cd_off);
	tu_put16(&b, 0);
	free(cd.p);
	return b;
}

/* A ustar header for `name` (with a GNU 'L' record or a pax 'x' record before it when longer
 * than 100 bytes: how = 'L' or 'x'). */
static void tar_header(struct tu_buf *b, const char *name, size_t size, char type)
{
	uint8_t h[512] = {0};
	memcpy(h, name, strnlen(name, 100));
	snprintf((char *)h + 100, 8, "0000644");
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	h[156] = (uint8_t)type;
	memcpy(h + 257,
	       "ustar\0"
	       "00",
	       8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	tu_put(b, h, 512);
}

static void tar_data(struct tu_buf *b, const void *p, size_t n)
{
	static const uint8_t zeros[512];
	tu_put(b, p, n);
	tu_put(b, zeros, (512 - n % 512) % 512);
}

static void tar_member(struct tu_buf *b, const char *name, const char *data, char how)
{
	size_t nl = strlen(name);
	if (nl >= 100 && how == 'L') {
		tar_header(b, "././@LongLink", nl + 1, 'L');
		tar_data(b, name, nl + 1);
	} else if (nl >= 100) {
		char rec[4200];
		int k = snprintf(rec, sizeof(rec), "%d path=%s\n", 0,
		                 name); /* length found below */
		int len = k;
		for (int d = 1; d < 6; d++) { /* the record's length counts its own digits */
			len = snprintf(rec, sizeof(rec), "%d path=%s\n", len, name);
		}
		tar_header(b, "PaxHeaders/x", (size_t)len, 'x');
		tar_data(b, rec, (size_t)len);
	}
	tar_header(b, name, strlen(data), '0');
	tar_data(b, data, strlen(data));
}

static struct tu_buf make_tgz(const struct member *m, int n, char how)
{
	struct tu_buf t = {0};
	for (int i = 0; i < n; i++)
		tar_member(&t, m[i].name, m[i].data, how);
	static const uint8_t end[1024];
	tu_put(&t, end, sizeof(end));
	struct tu_buf g = {0};
	g.cap = t.len + t.len / 2 + 1024;
	g.p = malloc(g.cap);
	g.len = compress_zlib(t.p, t.len, g.p, g.cap, 6, 31, 0);
	free(t.p);
	return g;
}

static void expect_coord(const char *path, const void *data, size_t n, zn_result want,
                         const char *g, const char *name, const char *v)
{
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	zn_result r = zn_pkg_detect(path, strlen(path), data, n, &c);
	if (r != want || strcmp(c.group, g) || strcmp(c.name, name) || strcmp(c.version, v)) {
		fprintf(stderr, "%s: got %s [%s] [%s] [%s], want %s [%s] [%s] [%s]\n", path,
		        zn_result_name(r), c.group, c.name, c.version, zn_result_name(want), g,
		        name, v);
		CHECK(0);
	}
}

/* Every prefix of the file: never a crash, and always either the full answer or the path's. */
static void truncations(const char *path, const struct tu_buf *b)
{
	struct zn_pkg_coord full = {.struct_size = sizeof(full)}, fb = {.struct_size = sizeof(fb)};
	CHECK(zn_pkg_detect(path, strlen(path), b->p, b->len, &full) == ZN_OK);
	int kind = zn_pkg_file_kind(path, strlen(path));
	/* the path's, for the kinds whose name alone tells (not .tar.gz, .zip, .tgz) */
	zn_result fr =
	        kind == ZN_PKGF_NPM_TGZ || kind == ZN_PKGF_SDIST_TGZ || kind == ZN_PKGF_SDIST_ZIP
	                ? ZN_ERR_NOT_FOUND
	                : zn_pkg_from_path(kind, path, strlen(path), &fb);
	for (size_t n = 0; n < b->len; n += 1 + n / 64) {
		uint8_t *p = tu_guard_alloc(n);
		memcpy(p, b->p, n);
		struct zn_pkg_coord c = {.struct_size = sizeof(c)};
		zn_result r = zn_pkg_detect(path, strlen(path), p, n, &c);
		tu_guard_free(p, n);
		int same_full = r == ZN_OK && !memcmp(&c, &full, sizeof(c));
		int same_path = r == fr && !memcmp(&c, &fb, sizeof(c));
		CHECK(same_full || same_path || (r == ZN_ERR_NOT_FOUND && fr != ZN_OK));
	}
}

/* The views create keeps of a file larger than a block: its head and its tail. */
static void views(const char *path, const struct tu_buf *b, uint64_t head, uint64_t tail,
                  const char *want_version)
{
	struct pkg_work w = {0};
	struct pkg_view v = {
	        .head = b->p,
	        .head_len = ZN_MIN(head, b->len),
	        .tail = b->p + (b->len - ZN_MIN(tail, b->len)),
	        .tail_off = b->len - ZN_MIN(tail, b->len),
	        .size = b->len,
	};
	struct zn_pkg_coord c = {.struct_size = sizeof(c)};
	int kind = zn_pkg_file_kind(path, strlen(path));
	pkg_detect_view(&w, kind, path, strlen(path), &v, &c, NULL);
	if (strcmp(c.version, want_version)) {
		fprintf(stderr, "%s head %llu tail %llu: version [%s], want [%s]\n", path,
		        (unsigned long long)head, (unsigned long long)tail, c.version,
		        want_version);
		CHECK(0);
	}
	pkg_work_release(&w);
}

static const char props_a[] = "groupId=org.example\nartifactId=lib\nversion=1.0\n";
static const char props_b[] = "groupId=other.group\nartifactId=dep\nversion=9.9\n";

static void test_zip(void)
{
	char big[20000];
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + (i * 7919) % 26);
	big[sizeof(big) - 1] = 0;
	const struct member m[] = {
	        {"META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n", 0},
	        {"META-INF/maven/other.group/dep/pom.properties", props_b, 0},
	        {"org/example/Big.class", big, 0},
	        {"META-INF/maven/org.example/lib/pom.properties", props_a, 0},
	};
	for (int deflate = 0; deflate < 2; deflate++)
		for (int zip64 = 0; zip64 < 2; zip64++)
			for (size_t prefix = 0; prefix < 200; prefix += 150) {
				struct tu_buf b = make_zip(m, 4, deflate, zip64, prefix);
				/* the pom.properties the repository path names wins */
				expect_coord("org/example/lib/1.0/lib-1.0.jar", b.p, b.len, ZN_OK,
				             "org.example", "lib", "1.0");
				expect_coord("other/group/dep/2/dep-2.jar", b.p, b.len, ZN_OK,
				             "other.group", "dep", "9.9");
				/* none named: the first of the best (equal ranks) */
				expect_coord("x.jar", b.p, b.len, ZN_OK, "other.group", "dep",
				             "9.9");
				if (!deflate && !zip64 && !prefix)
					truncations("org/example/lib/1.0/lib-1.0.jar", &b);
				/* head and tail: the member at the end is in the tail; with
				 * neither holding the directory, the path answers */
				views("org/example/lib/1.0/lib-1.0.jar", &b, 64, 4096, "1.0");
				views("org/example/lib/1.0/lib-1.0.jar", &b, 64, 100, "1.0");
				views("org/example/lib/debian/lib-debian.jar", &b, 64, 100,
				      "debian");
				free(b.p);
			}
	/* Only a bundled dependency's pom.properties: in a repository layout the path says what the
	 * jar is; elsewhere they are all there is. */
	struct tu_buf d = make_zip(m + 1, 1, 1, 0, 0);
	expect_coord("org/example/lib/1.0/lib-1.0.jar", d.p, d.len, ZN_OK, "org.example", "lib",
	             "1.0");
	expect_coord("lib/x.jar", d.p, d.len, ZN_OK, "other.group", "dep", "9.9");
	free(d.p);
	/* A corrupt member (its CRC) falls back to the path; a wheel's METADATA. */
	struct tu_buf b = make_zip(m + 3, 1, 0, 0, 0);
	b.p[30 + strlen(m[3].name)] ^= 1;
	expect_coord("org/example/lib/debian/lib-debian.jar", b.p, b.len, ZN_OK, "org.example",
	             "lib", "debian");
	expect_coord("lib.jar", b.p, b.len, ZN_ERR_NOT_FOUND, "", "", "");
	free(b.p);
	const struct member w[] = {
	        {"demo/__init__.py", "x = 1\n", 0},
	        {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
	         0},
	};
	b = make_zip(w, 2, 1, 0, 0);
	expect_coord("demo-0.9-py3-none-any.whl", b.p, b.len, ZN_OK, "", "demo", "1.0");
	truncations("demo-0.9-py3-none-any.whl", &b);
	free(b.p);
}

static void test_tgz(void)
{
	char longdir[300];
	memset(longdir, 'd', sizeof(longdir));
	memcpy(longdir, "package/", 8);
	strcpy(longdir + 200, "/x.js");
	const struct member npm[] = {
	        {"package/README.md", "# demo\n", 0},
	        {longdir, "1", 0},
	        {"package/package.json", "{\"name\": \"@scope/demo\", \"version\": \"1.0.0\"}", 0},
	        {"package/lib/package.json", "{\"name\": \"inner\", \"version\": \"0\"}", 0},
	};
	for (int how = 0; how < 2; how++) {
		struct tu_buf b = make_tgz(npm, 4, how ? 'L' : 'x');
		expect_coord("npm/demo-0.0.1.tgz", b.p, b.len, ZN_OK, "scope", "demo", "1.0.0");
		truncations("npm/demo-0.0.1.tgz", &b);
		views("npm/demo-0.0.1.tgz", &b, b.len, 0, "1.0.0"); /* a head is all it needs */
		views("npm/demo-0.0.1.tgz", &b, 40, 0, ""); /* too short, and a .tgz's name says
		                                                nothing */
		free(b.p);
	}
	const struct member crate[] = {
	        {"demo-0.1.0/.cargo_vcs_info.json", "{}", 0},
	        {"demo-0.1.0/Cargo.toml", "[package]\nname = \"demo-real\"\nversion = \"0.1.0\"\n",
	         0},
	};
	struct tu_buf b = make_tgz(crate, 2, 'x');
	expect_coord("crates/demo-0.1.0.crate", b.p, b.len, ZN_OK, "", "demo-real", "0.1.0");
	/* a top directory that is not the file's name: no crate's, so its path's */
	expect_coord("crates/demo-0.0.9.crate", b.p, b.len, ZN_OK, "", "demo", "0.0.9");
	/* not gzip at all, and not a tar inside */
	expect_coord("crates/demo-0.0.9.crate", "plain text", 10, ZN_OK, "", "demo", "0.0.9");
	free(b.p);
	const struct member sdist[] = {
	        {"demo-1.0/PKG-INFO", "Metadata-Version: 1.1\nName: demo\nVersion: 1.0\n", 0},
	};
	b = make_tgz(sdist, 1, 'x');
	expect_coord("demo-1.0.tar.gz", b.p, b.len, ZN_OK, "", "demo", "1.0");
	expect_coord("demo-0.5.tar.gz", b.p, b.len, ZN_ERR_NOT_FOUND, "", "", "");
	/* A tarball, zip or .tgz that is no package: its name proves nothing. */
	expect_coord("demo-0.5.tar.gz", "plain text", 10, ZN_ERR_NOT_FOUND, "", "", "");
	expect_coord("demo-0.5.zip", "plain text", 10, ZN_ERR_NOT_FOUND, "", "", "");
	expect_coord("npm/demo-0.0.1.tgz", "plain text", 10, ZN_ERR_NOT_FOUND, "", "", "");
	free(b.p);
}

static void test_pom_and_others(void)
{
	const char pom[] = "<project><parent><groupId>g</groupId><version>2</version></parent>"
	                   "<artifactId>a</artifactId></project>";
	expect_coord("x/a-1.pom", pom, strlen(pom), ZN_OK, "g", "a", "2");
	expect_coord("notes.txt", pom, strlen(pom), ZN_ERR_NOT_FOUND, "", "", "");
	struct zn_pkg_coord c = {.struct_size = 8};
	CHECK(zn_pkg_detect("a.jar", 5, "", 0, &c) == ZN_ERR_INVALID_ARG);
}

/* Debian's wheels: what their own METADATA says (test_pkg_meta reads it directly). */
static void test_debian_wheels(void)
{
	const char *dir = "/usr/share/python-wheels";
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		size_t nl = strlen(e->d_name);
		if (nl < 5 || strcmp(e->d_name + nl - 4, ".whl"))
			continue;
		char *path = tu_fmt("%s/%s", dir, e->d_name);
		size_t n;
		uint8_t *data = tu_read_file(path, &n);
		struct zn_pkg_coord c = {.struct_size = sizeof(c)};
		CHECK(zn_pkg_detect(e->d_name, nl, data, n, &c) == ZN_OK);
		/* NAME-VERSION-... : the name's and version's own METADATA agree here */
		char *want = tu_fmt("%s-%s-", c.name, c.version);
		CHECK(!strncmp(e->d_name, want, strlen(want)));
		free(want);
		free(data);
		free(path);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_pkg_detect");
	test_zip();
	test_tgz();
	test_pom_and_others();
	test_debian_wheels();
	return 0;
}
