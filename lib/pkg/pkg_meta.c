/* SPDX-License-Identifier: MIT */
/* pkg_meta.c - package coordinates from metadata bytes: pom.properties, POM XML, PKG-INFO,
 * Cargo.toml, package.json, and from package file names.
 *
 * Every parser here reads untrusted bytes that a create run found inside some file, so each is a
 * single forward scan with no recursion, no allocation and no entity or property expansion: the
 * work is linear in the bytes given, and those are capped at ZN_PKG_META_MAX. Values land in the
 * caller's struct zn_pkg_coord, whose fields are fixed arrays; a value that does not fit is
 * ZN_ERR_LIMIT, not a truncated coordinate. The grammars are the subsets package metadata uses:
 *   - Java properties as java.util.Properties.load reads them (comments, escapes, \uXXXX, line
 *     continuations, key=value, key:value and key value);
 *   - XML as far as a POM needs: elements, attributes skipped, comments, CDATA, processing
 *     instructions and a DOCTYPE (its internal subset skipped, never interpreted), the five
 *     predefined entities and character references; any other entity reference makes the value
 *     unknown (so an "XML bomb" costs one pass over its text and yields nothing);
 *   - RFC 822 headers (the Core Metadata of Python packages);
 *   - TOML tables, bare/quoted/dotted keys, basic and literal strings (multi-line too), arrays and
 *     inline tables skipped with a depth counter;
 *   - JSON, with values other than the wanted ones skipped by counting brackets.
 */
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "common/sized.h"

/* A bounded output string. `bad` is set on overflow or on a value that cannot be known. */
struct sbuf {
	char *s;
	size_t n, cap;
	int over, unknown;
};

static void sb_init(struct sbuf *b, char *s, size_t cap)
{
	b->s = s;
	b->n = 0;
	b->cap = cap;
	b->over = b->unknown = 0;
	s[0] = 0;
}

static void sb_putc(struct sbuf *b, unsigned c)
{
	if (!c) { /* a NUL cannot be in a coordinate (its fields are C strings) */
		b->unknown = 1;
		return;
	}
	if (b->n + 1 >= b->cap) {
		b->over = 1;
		return;
	}
	b->s[b->n++] = (char)c;
	b->s[b->n] = 0;
}

/* Code point cp as UTF-8 (surrogates and values above U+10FFFF as U+FFFD). */
static void sb_put_utf8(struct sbuf *b, uint32_t cp)
{
	if ((cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		sb_putc(b, cp);
	} else if (cp < 0x800) {
		sb_putc(b, 0xc0 | (cp >> 6));
		sb_putc(b, 0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		sb_putc(b, 0xe0 | (cp >> 12));
		sb_putc(b, 0x80 | ((cp >> 6) & 0x3f));
		sb_putc(b, 0x80 | (cp & 0x3f));
	} else {
		sb_putc(b, 0xf0 | (cp >> 18));
		sb_putc(b, 0x80 | ((cp >> 12) & 0x3f));
		sb_putc(b, 0x80 | ((cp >> 6) & 0x3f));
		sb_putc(b, 0x80 | (cp & 0x3f));
	}
}

static void sb_trim(struct sbuf *b)
{
	size_t i = 0;
	while (b->n && (b->s[b->n - 1] == ' ' || b->s[b->n - 1] == '\t' || b->s[b->n - 1] == '\r' ||
	                b->s[b->n - 1] == '\n'))
		b->s[--b->n] = 0;
	while (i < b->n &&
	       (b->s[i] == ' ' || b->s[i] == '\t' || b->s[i] == '\r' || b->s[i] == '\n'))
		i++;
	if (i) {
		memmove(b->s, b->s + i, b->n - i + 1);
		b->n -= i;
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void coord_clear(struct zn_pkg_coord *out)
{
	out->type = ZN_PKG_NONE;
	out->group[0] = out->name[0] = out->version[0] = 0;
}

/* The result for the fields found: a field that overflowed is ZN_ERR_LIMIT, a missing or
 * unknowable one ZN_ERR_NOT_FOUND; on any failure the coordinates are cleared. */
static zn_result finish(struct zn_pkg_coord *out, uint32_t type, struct sbuf *g, struct sbuf *n,
                        struct sbuf *v)
{
	zn_result r = ZN_OK;
	struct sbuf *all[3] = {g, n, v};
	for (int i = 0; i < 3; i++) {
		if (!all[i])
			continue;
		if (all[i]->over)
			r = ZN_ERR_LIMIT;
		else if (r == ZN_OK && (all[i]->unknown || !all[i]->n))
			r = ZN_ERR_NOT_FOUND;
	}
	if (r != ZN_OK) {
		coord_clear(out);
		return r;
	}
	out->type = type;
	return ZN_OK;
}

const char *zn_pkg_type_name(uint32_t type)
{
	static const char *const names[] = {"", "maven", "pypi", "cargo", "npm"};
	return type < ZN_ARRAY_LEN(names) ? names[type] : "";
}

/* ---- Java properties ---- */

struct rd {
	const uint8_t *p;
	size_t n, i;
};

enum { PC_EOL = -1 };

/* The next character of a logical line of a properties file: PC_EOL at its end (the terminator
 * consumed), else the character, with *esc 1 when it came from an escape. A backslash before a
 * line break joins the next line, less its leading white space. */
static int32_t prop_getc(struct rd *r, int *esc)
{
	for (;;) {
		*esc = 0;
		if (r->i >= r->n)
			return PC_EOL;
		uint8_t c = r->p[r->i++];
		if (c == '\n')
			return PC_EOL;
		if (c == '\r') {
			if (r->i < r->n && r->p[r->i] == '\n')
				r->i++;
			return PC_EOL;
		}
		if (c != '\\')
			return c;
		if (r->i >= r->n)
			return PC_EOL;
		c = r->p[r->i++];
		if (c == '\n' || c == '\r') {
			if (c == '\r' && r->i < r->n && r->p[r->i] == '\n')
				r->i++;
			while (r->i < r->n &&
			       (r->p[r->i] == ' ' || r->p[r->i] == '\t' || r->p[r->i] == '\f'))
				r->i++;
			continue;
		}
		*esc = 1;
		switch (c) {
		case 't':
			return '\t';
		case 'n':
			return '\n';
		case 'r':
			return '\r';
		case 'f':
			return '\f';
		case 'u':
			if (r->i + 4 <= r->n) {
				int32_t v = 0;
				int k;
				for (k = 0; k < 4 && hexval(r->p[r->i + k]) >= 0; k++)
					v = v * 16 + hexval(r->p[r->i + k]);
				if (k == 4) {
					r->i += 4;
					return v;
				}
			}
			return 'u'; /* Java refuses a malformed \u; we take the letter */
		default:
			return c;
		}
	}
}

static int is_prop_space(int32_t c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

/* Reads one key/value pair; 0 at the end of the input. Keys longer than the buffer are marked. */
static int prop_next(struct rd *r, struct sbuf *key, struct sbuf *val)
{
	for (;;) {
		while (r->i < r->n &&
		       (r->p[r->i] == ' ' || r->p[r->i] == '\t' || r->p[r->i] == '\f'))
			r->i++;
		if (r->i >= r->n)
			return 0;
		uint8_t c = r->p[r->i];
		if (c == '\n' || c == '\r') {
			r->i++;
			continue;
		}
		if (c == '#' || c == '!') { /* a comment: to the end of this physical line */
			while (r->i < r->n && r->p[r->i] != '\n' && r->p[r->i] != '\r')
				r->i++;
			continue;
		}
		break;
	}
	key->n = val->n = 0;
	key->over = val->over = 0;
	key->s[0] = val->s[0] = 0;
	int esc;
	int32_t c;
	while ((c = prop_getc(r, &esc)) != PC_EOL) {
		if (!esc && (c == '=' || c == ':' || is_prop_space(c)))
			break;
		sb_put_utf8(key, (uint32_t)c);
	}
	if (c == PC_EOL)
		return 1;
	/* White space, at most one '=' or ':', white space, then the value. */
	int sep = !is_prop_space(c);
	for (;;) {
		size_t save = r->i;
		c = prop_getc(r, &esc);
		if (c == PC_EOL)
			return 1;
		if (!esc && is_prop_space(c))
			continue;
		if (!esc && !sep && (c == '=' || c == ':')) {
			sep = 1;
			continue;
		}
		r->i = save;
		break;
	}
	while ((c = prop_getc(r, &esc)) != PC_EOL)
		sb_put_utf8(val, (uint32_t)c);
	return 1;
}

static zn_result parse_pom_properties(const uint8_t *p, size_t n, struct zn_pkg_coord *out)
{
	struct rd r = {p, n, 0};
	char kbuf[64], vbuf[ZN_PKG_FIELD_MAX];
	struct sbuf key, val, g, a, v;
	sb_init(&key, kbuf, sizeof(kbuf));
	sb_init(&val, vbuf, sizeof(vbuf));
	sb_init(&g, out->group, sizeof(out->group));
	sb_init(&a, out->name, sizeof(out->name));
	sb_init(&v, out->version, sizeof(out->version));
	while (prop_next(&r, &key, &val)) {
		struct sbuf *dst = NULL;
		if (key.over)
			continue;
		if (!strcmp(kbuf, "groupId"))
			dst = &g;
		else if (!strcmp(kbuf, "artifactId"))
			dst = &a;
		else if (!strcmp(kbuf, "version"))
			dst = &v;
		if (!dst)
			continue;
		/* The last one counts, as in java.util.Properties. */
		dst->n = 0;
		dst->s[0] = 0;
		dst->over = val.over;
		if (!val.over) {
			memcpy(dst->s, vbuf, val.n + 1);
			dst->n = val.n;
		}
	}
	return finish(out, ZN_PKG_MAVEN, &g, &a, &v);
}

/* ---- POM XML ---- */

/* Skips to just past `end` (a NUL-terminated string); 0 if the input ends first. */
static int skip_past(struct rd *r, const char *end)
{
	size_t k = strlen(end);
	while (r->i + k <= r->n) {
		const void *hit = memchr(r->p + r->i, end[0], r->n - r->i);
		if (!hit)
			break;
		r->i = (size_t)((const uint8_t *)hit - r->p);
		if (r->i + k <= r->n && !memcmp(r->p + r->i, end, k)) {
			r->i += k;
			return 1;
		}
		r->i++;
	}
	r->i = r->n;
	return 0;
}

static int starts(const struct rd *r, const char *s)
{
	size_t k = strlen(s);
	return r->i + k <= r->n && !memcmp(r->p + r->i, s, k);
}

static int xml_name_char(uint8_t c)
{
	return !(c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '/' || c == '>' ||
	         c == '=' || c == '<' || c == '"' || c == '\'');
}

/* A DOCTYPE: to its '>', passing over an internal subset in [...] and quoted strings in it. */
static void skip_doctype(struct rd *r)
{
	int in_subset = 0;
	while (r->i < r->n) {
		uint8_t c = r->p[r->i++];
		if (c == '"' || c == '\'') {
			const void *q = memchr(r->p + r->i, c, r->n - r->i);
			r->i = q ? (size_t)((const uint8_t *)q - r->p) + 1 : r->n;
		} else if (c == '[') {
			in_subset = 1;
		} else if (c == ']') {
			in_subset = 0;
		} else if (c == '>' && !in_subset) {
			return;
		}
	}
}

/* Text between tags, or an attribute value, into b: character references and the five predefined
 * entities decoded; any other reference makes the value unknown (never expanded). */
static void xml_text(struct sbuf *b, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '&') {
			sb_putc(b, s[i]);
			continue;
		}
		const uint8_t *semi = memchr(s + i, ';', ZN_MIN(n - i, (size_t)12));
		if (!semi) {
			b->unknown = 1;
			return;
		}
		size_t k = (size_t)(semi - (s + i)); /* "&...;" is s[i..i+k] */
		const char *ent = (const char *)s + i + 1;
		static const char *const names[] = {"lt", "gt", "amp", "apos", "quot"};
		static const char chars[] = "<>&'\"";
		int done = 0;
		for (int e = 0; e < 5 && !done; e++)
			if (strlen(names[e]) == k - 1 && !memcmp(ent, names[e], k - 1)) {
				sb_putc(b, (uint8_t)chars[e]);
				done = 1;
			}
		if (!done && k >= 3 && ent[0] == '#') {
			uint32_t cp = 0;
			int hex = ent[1] == 'x', ok = 1;
			for (size_t j = 1 + (size_t)hex; j < k - 1; j++) {
				int d = hex                              ? hexval(ent[j])
				        : ent[j] >= '0' && ent[j] <= '9' ? ent[j] - '0'
				                                         : -1;
				if (d < 0 || cp > 0x10ffff) {
					ok = 0;
					break;
				}
				cp = cp * (hex ? 16 : 10) + (uint32_t)d;
			}
			if (ok && k - 1 > (size_t)(1 + hex)) {
				sb_put_utf8(b, cp);
				done = 1;
			}
		}
		if (!done) {
			b->unknown = 1;
			return;
		}
		i += k;
	}
}

/* The elements a POM's coordinates are in: project/{groupId,artifactId,version} and
 * project/parent/{groupId,version}. */
enum { X_G, X_A, X_V, X_PG, X_PV, X_NFIELDS };

struct pom {
	struct sbuf f[X_NFIELDS];
	int seen[X_NFIELDS];
	char store[X_NFIELDS][ZN_PKG_FIELD_MAX];
	int depth;      /* elements open */
	int in_parent;  /* depth 2 element open is <parent> */
	int in_project; /* the root element is <project> */
	int cur;        /* field whose element is open at depth 3 (or 2), else -1 */
};

/* Local name of a tag (a namespace prefix dropped). */
static void local_name(const uint8_t *s, size_t n, const uint8_t **ln, size_t *lnn)
{
	const uint8_t *colon = memchr(s, ':', n);
	if (colon) {
		n -= (size_t)(colon + 1 - s);
		s = colon + 1;
	}
	*ln = s;
	*lnn = n;
}

static int name_is(const uint8_t *s, size_t n, const char *want)
{
	return strlen(want) == n && !memcmp(s, want, n);
}

/* A start tag <name ...> at depth+1: which field, if any, it opens. */
static void pom_open(struct pom *pm, const uint8_t *s, size_t n)
{
	const uint8_t *ln;
	size_t lnn;
	local_name(s, n, &ln, &lnn);
	pm->depth++;
	pm->cur = -1;
	if (pm->depth == 1) {
		pm->in_project = name_is(ln, lnn, "project");
	} else if (pm->depth == 2 && pm->in_project) {
		pm->in_parent = name_is(ln, lnn, "parent");
		if (name_is(ln, lnn, "groupId"))
			pm->cur = X_G;
		else if (name_is(ln, lnn, "artifactId"))
			pm->cur = X_A;
		else if (name_is(ln, lnn, "version"))
			pm->cur = X_V;
	} else if (pm->depth == 3 && pm->in_parent) {
		if (name_is(ln, lnn, "groupId"))
			pm->cur = X_PG;
		else if (name_is(ln, lnn, "version"))
			pm->cur = X_PV;
	}
	if (pm->cur >= 0) {
		if (pm->seen[pm->cur]) /* a second one: keep the first */
			pm->cur = -1;
		else
			pm->seen[pm->cur] = 1;
	}
}

static void pom_close(struct pom *pm)
{
	if (pm->cur >= 0)
		sb_trim(&pm->f[pm->cur]);
	pm->cur = -1;
	if (pm->depth == 2)
		pm->in_parent = 0;
	if (pm->depth > 0)
		pm->depth--;
}

/* A tag starting at r->i (just past '<'): start, end or empty-element tag. */
static void pom_tag(struct pom *pm, struct rd *r)
{
	int end_tag = r->i < r->n && r->p[r->i] == '/';
	r->i += (size_t)end_tag;
	size_t b = r->i;
	while (r->i < r->n && xml_name_char(r->p[r->i]))
		r->i++;
	size_t e = r->i;
	/* Attributes: skip to '>' outside quotes. */
	int empty = 0;
	while (r->i < r->n && r->p[r->i] != '>') {
		uint8_t c = r->p[r->i++];
		if (c == '"' || c == '\'') {
			const void *q = memchr(r->p + r->i, c, r->n - r->i);
			r->i = q ? (size_t)((const uint8_t *)q - r->p) + 1 : r->n;
		}
		empty = c == '/';
	}
	if (r->i < r->n)
		r->i++;
	if (end_tag) {
		pom_close(pm);
		return;
	}
	pom_open(pm, r->p + b, e - b);
	if (empty)
		pom_close(pm);
}

/* ${project.parent.version} and the like name the parent's value; other properties are unknown. */
static void pom_resolve(struct sbuf *f, struct sbuf *parent_f, const char *what)
{
	if (!memchr(f->s, '$', f->n))
		return;
	char want1[64], want2[64];
	snprintf(want1, sizeof(want1), "${project.parent.%s}", what);
	snprintf(want2, sizeof(want2), "${parent.%s}", what);
	if ((!strcmp(f->s, want1) || !strcmp(f->s, want2)) && parent_f && !parent_f->unknown &&
	    !parent_f->over && parent_f->n && !memchr(parent_f->s, '$', parent_f->n)) {
		memcpy(f->s, parent_f->s, parent_f->n + 1);
		f->n = parent_f->n;
		return;
	}
	f->unknown = 1;
}

static zn_result parse_pom_xml(const uint8_t *p, size_t n, struct zn_pkg_coord *out)
{
	static struct pom zero;
	struct pom pm = zero;
	for (int k = 0; k < X_NFIELDS; k++)
		sb_init(&pm.f[k], pm.store[k], sizeof(pm.store[k]));
	pm.cur = -1;
	struct rd r = {p, n, 0};
	while (r.i < r.n) {
		const uint8_t *lt = memchr(r.p + r.i, '<', r.n - r.i);
		size_t text_end = lt ? (size_t)(lt - r.p) : r.n;
		if (pm.cur >= 0)
			xml_text(&pm.f[pm.cur], r.p + r.i, text_end - r.i);
		r.i = text_end;
		if (!lt)
			break;
		r.i++;
		if (starts(&r, "!--")) {
			skip_past(&r, "-->");
		} else if (starts(&r, "![CDATA[")) {
			size_t b = r.i + 8;
			r.i = b;
			int closed = skip_past(&r, "]]>");
			size_t e = closed ? r.i - 3 : r.n;
			if (pm.cur >= 0)
				for (size_t k = b; k < e; k++)
					sb_putc(&pm.f[pm.cur], r.p[k]);
		} else if (starts(&r, "?")) {
			skip_past(&r, "?>");
		} else if (starts(&r, "!")) {
			skip_doctype(&r);
		} else {
			pom_tag(&pm, &r);
		}
	}
	struct sbuf *g = &pm.f[X_G], *v = &pm.f[X_V];
	/* A POM inherits its group and version from the parent when it does not give them. */
	pom_resolve(g, &pm.f[X_PG], "groupId");
	pom_resolve(v, &pm.f[X_PV], "version");
	if (!pm.seen[X_G])
		g = &pm.f[X_PG];
	if (!pm.seen[X_V])
		v = &pm.f[X_PV];
	if (memchr(g->s, '$', g->n))
		g->unknown = 1;
	if (memchr(v->s, '$', v->n))
		v->unknown = 1;
	if (memchr(pm.f[X_A].s, '$', pm.f[X_A].n))
		pm.f[X_A].unknown = 1;
	memcpy(out->group, g->s, g->n + 1);
	memcpy(out->name, pm.f[X_A].s, pm.f[X_A].n + 1);
	memcpy(out->version, v->s, v->n + 1);
	return finish(out, ZN_PKG_MAVEN, g, &pm.f[X_A], v);
}

/* ---- RFC 822 headers (Python Core Metadata) ------------------------------------------------- */

/* The value of header `name` (case-insensitive) of the first one in the header block (which ends
 * at the first empty line), folded continuation lines joined by a space. */
static void header_value(const uint8_t *p, size_t n, const char *name, struct sbuf *out)
{
	size_t nl = strlen(name), i = 0;
	int in_it = 0;
	while (i < n) {
		size_t e = i;
		while (e < n && p[e] != '\n')
			e++;
		size_t le = e > i && p[e - 1] == '\r' ? e - 1 : e; /* line is p[i, le) */
		if (le == i)
			break; /* the end of the headers */
		if (p[i] == ' ' || p[i] == '\t') {
			if (in_it) {
				sb_putc(out, ' ');
				for (size_t k = i; k < le; k++)
					sb_putc(out, p[k]);
			}
		} else if (in_it) {
			break;
		} else if (le - i > nl && p[i + nl] == ':' &&
		           !strncasecmp((const char *)p + i, name, nl)) {
			in_it = 1;
			for (size_t k = i + nl + 1; k < le; k++)
				sb_putc(out, p[k]);
		}
		i = e + 1;
	}
	sb_trim(out);
}

static zn_result parse_pypi(const uint8_t *p, size_t n, struct zn_pkg_coord *out)
{
	struct sbuf nm, v;
	sb_init(&nm, out->name, sizeof(out->name));
	sb_init(&v, out->version, sizeof(out->version));
	header_value(p, n, "Name", &nm);
	header_value(p, n, "Version", &v);
	return finish(out, ZN_PKG_PYPI, NULL, &nm, &v);
}

/* ---- TOML (Cargo.toml) ---- */

#define NEST_MAX 256 /* arrays and inline tables deeper than this: ZN_ERR_LIMIT */

static void skip_ws(struct rd *r)
{
	while (r->i < r->n && (r->p[r->i] == ' ' || r->p[r->i] == '\t'))
		r->i++;
}

static void skip_line(struct rd *r)
{
	const void *nl = memchr(r->p + r->i, '\n', r->n - r->i);
	r->i = nl ? (size_t)((const uint8_t *)nl - r->p) + 1 : r->n;
}

/* A TOML string at r->i (at its opening quote) into b (NULL: skipped). Basic strings decode
 * escapes; literal strings take bytes as they are; both have a multi-line form. 0 when
 * unterminated. */
static int toml_string(struct rd *r, struct sbuf *b)
{
	uint8_t q = r->p[r->i];
	int multi = r->i + 3 <= r->n && r->p[r->i + 1] == q && r->p[r->i + 2] == q;
	r->i += multi ? 3 : 1;
	if (multi && r->i < r->n && r->p[r->i] == '\n') /* a newline right after """ is trimmed */
		r->i++;
	while (r->i < r->n) {
		uint8_t c = r->p[r->i];
		if (c == q &&
		    (!multi || (r->i + 3 <= r->n && r->p[r->i + 1] == q && r->p[r->i + 2] == q))) {
			r->i += multi ? 3 : 1;
			while (multi && r->i < r->n &&
			       r->p[r->i] == q) { /* """a"""" ends with a quote */
				if (b)
					sb_putc(b, q);
				r->i++;
			}
			return 1;
		}
		if (c == '\n' && !multi)
			return 0;
		r->i++;
		if (c != '\\' || q == '\'') {
			if (b)
				sb_putc(b, c);
			continue;
		}
		if (r->i >= r->n)
			return 0;
		c = r->p[r->i++];
		uint32_t cp = c;
		if (c == 'u' || c == 'U') {
			size_t k = c == 'u' ? 4 : 8;
			cp = 0;
			for (size_t j = 0; j < k; j++, r->i++) {
				if (r->i >= r->n || hexval(r->p[r->i]) < 0)
					return 0;
				cp = cp * 16 + (uint32_t)hexval(r->p[r->i]);
			}
		} else if (c == 'n') {
			cp = '\n';
		} else if (c == 't') {
			cp = '\t';
		} else if (c == 'r') {
			cp = '\r';
		} else if (c == 'b') {
			cp = '\b';
		} else if (c == 'f') {
			cp = '\f';
		} else if (multi && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
			/* a line-ending backslash: white space up to the next text is dropped */
			while (r->i < r->n && (r->p[r->i] == ' ' || r->p[r->i] == '\t' ||
			                       r->p[r->i] == '\r' || r->p[r->i] == '\n'))
				r->i++;
			continue;
		}
		if (b)
			sb_put_utf8(b, cp);
	}
	return 0;
}

/* A value at r->i: into b when it is a string, else passed over (arrays and inline tables by
 * counting brackets, strings and comments inside them included). 0 on malformed input, -1 when
 * nested too deep. *was_string says which it was. */
static int toml_value(struct rd *r, struct sbuf *b, int *was_string)
{
	*was_string = 0;
	if (r->i >= r->n)
		return 0;
	uint8_t c = r->p[r->i];
	if (c == '"' || c == '\'') {
		*was_string = 1;
		return toml_string(r, b);
	}
	if (c != '[' && c != '{') {
		while (r->i < r->n && r->p[r->i] != '\n' && r->p[r->i] != '#')
			r->i++;
		return 1;
	}
	int depth = 0;
	while (r->i < r->n) {
		c = r->p[r->i];
		if (c == '"' || c == '\'') {
			if (!toml_string(r, NULL))
				return 0;
			continue;
		}
		if (c == '#') {
			skip_line(r);
			continue;
		}
		r->i++;
		if (c == '[' || c == '{') {
			if (++depth > NEST_MAX)
				return -1;
		} else if ((c == ']' || c == '}') && --depth == 0) {
			return 1;
		}
	}
	return 0;
}

static int bare_key_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* A key (bare, quoted, dotted) at r->i into k, the parts joined by '.'; 0 when malformed. */
static int toml_key(struct rd *r, struct sbuf *k)
{
	k->n = 0;
	k->s[0] = 0;
	k->over = 0;
	for (;;) {
		skip_ws(r);
		if (r->i >= r->n)
			return 0;
		uint8_t c = r->p[r->i];
		if (c == '"' || c == '\'') {
			if (!toml_string(r, k))
				return 0;
		} else {
			size_t b = r->i;
			while (r->i < r->n && bare_key_char(r->p[r->i]))
				sb_putc(k, r->p[r->i++]);
			if (r->i == b)
				return 0;
		}
		skip_ws(r);
		if (r->i < r->n && r->p[r->i] == '.') {
			sb_putc(k, '.');
			r->i++;
			continue;
		}
		return 1;
	}
}

static zn_result parse_cargo(const uint8_t *p, size_t n, struct zn_pkg_coord *out)
{
	struct rd r = {p, n, 0};
	char kbuf[128];
	struct sbuf key, nm, v;
	sb_init(&key, kbuf, sizeof(kbuf));
	sb_init(&nm, out->name, sizeof(out->name));
	sb_init(&v, out->version, sizeof(out->version));
	int in_package = 0;
	while (r.i < r.n) {
		skip_ws(&r);
		if (r.i >= r.n)
			break;
		uint8_t c = r.p[r.i];
		if (c == '\n' || c == '\r' || c == '#') {
			skip_line(&r);
			continue;
		}
		if (c == '[') { /* [table] or [[array of tables]] */
			int arr = r.i + 1 < r.n && r.p[r.i + 1] == '[';
			r.i += arr ? 2 : 1;
			if (!toml_key(&r, &key)) {
				coord_clear(out);
				return ZN_ERR_CORRUPT;
			}
			in_package = !arr && !key.over && !strcmp(kbuf, "package");
			skip_line(&r);
			continue;
		}
		if (!toml_key(&r, &key) || r.i >= r.n || r.p[r.i] != '=') {
			coord_clear(out);
			return ZN_ERR_CORRUPT;
		}
		r.i++;
		skip_ws(&r);
		struct sbuf *dst = NULL;
		if (in_package && !key.over && !strcmp(kbuf, "name"))
			dst = &nm;
		else if (in_package && !key.over && !strcmp(kbuf, "version"))
			dst = &v;
		else if (in_package && !key.over && !strncmp(kbuf, "version.", 8))
			v.unknown = 1; /* version.workspace = true: inherited, not known here */
		if (dst) {
			dst->n = 0;
			dst->s[0] = 0;
		}
		int was_string, ok = toml_value(&r, dst, &was_string);
		if (ok <= 0) {
			coord_clear(out);
			return ok < 0 ? ZN_ERR_LIMIT : ZN_ERR_CORRUPT;
		}
		if (dst && !was_string)
			dst->unknown = 1; /* version = { workspace = true } */
		skip_line(&r);
	}
	return finish(out, ZN_PKG_CARGO, NULL, &nm, &v);
}

/* ---- JSON (package.json) ---- */

static void skip_json_ws(struct rd *r)
{
	while (r->i < r->n && (r->p[r->i] == ' ' || r->p[r->i] == '\t' || r->p[r->i] == '\r' ||
	                       r->p[r->i] == '\n'))
		r->i++;
}

/* A JSON string at r->i (its opening quote) into b (NULL: skipped); 0 when malformed. */
static int json_string(struct rd *r, struct sbuf *b)
{
	r->i++;
	uint32_t hi = 0; /* a high surrogate waiting for its low half */
	while (r->i < r->n) {
		uint8_t c = r->p[r->i++];
		if (c == '"')
			return 1;
		if (c < 0x20)
			return 0;
		if (c != '\\') {
			if (b)
				sb_putc(b, c);
			continue;
		}
		if (r->i >= r->n)
			return 0;
		c = r->p[r->i++];
		static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
		const char *e = c ? strchr(esc_in, c) : NULL;
		if (e) {
			if (b)
				sb_putc(b, (uint8_t)esc_out[e - esc_in]);
			continue;
		}
		if (c != 'u' || r->i + 4 > r->n)
			return 0;
		uint32_t cp = 0;
		for (int k = 0; k < 4; k++) {
			int d = hexval(r->p[r->i++]);
			if (d < 0)
				return 0;
			cp = cp * 16 + (uint32_t)d;
		}
		if (cp >= 0xd800 && cp < 0xdc00) {
			hi = cp;
			continue;
		}
		if (cp >= 0xdc00 && cp < 0xe000 && hi)
			cp = 0x10000 + ((hi - 0xd800) << 10) + (cp - 0xdc00);
		hi = 0;
		if (b)
			sb_put_utf8(b, cp);
	}
	return 0;
}

/* Passes over one JSON value; 0 when malformed, -1 when nested too deep. */
static int json_skip(struct rd *r)
{
	int depth = 0;
	do {
		skip_json_ws(r);
		if (r->i >= r->n)
			return 0;
		uint8_t c = r->p[r->i];
		if (c == '"') {
			if (!json_string(r, NULL))
				return 0;
		} else if (c == '{' || c == '[') {
			if (++depth > NEST_MAX)
				return -1;
			r->i++;
		} else if (c == '}' || c == ']') {
			if (--depth < 0)
				return 0;
			r->i++;
		} else if (c == ',' || c == ':') {
			if (!depth)
				return 0;
			r->i++;
		} else {
			size_t b = r->i;
			while (r->i < r->n && strchr("+-.0123456789eEtruefalsn", r->p[r->i]) &&
			       r->p[r->i])
				r->i++;
			if (r->i == b)
				return 0;
		}
	} while (depth > 0);
	return 1;
}

/* "@scope/name" into group "scope" and name "name". */
static void npm_split(struct zn_pkg_coord *out, struct sbuf *nm, struct sbuf *g)
{
	if (nm->n < 2 || nm->s[0] != '@')
		return;
	char *slash = memchr(nm->s, '/', nm->n);
	if (!slash || slash == nm->s + 1 || slash == nm->s + nm->n - 1) {
		nm->unknown = 1;
		return;
	}
	size_t gl = (size_t)(slash - nm->s) - 1;
	memcpy(out->group, nm->s + 1, gl);
	out->group[gl] = 0;
	g->n = gl;
	memmove(nm->s, slash + 1, nm->n - gl - 1);
	nm->n -= gl + 2;
	nm->s[nm->n] = 0;
}

static zn_result parse_npm(const uint8_t *p, size_t n, struct zn_pkg_coord *out)
{
	struct rd r = {p, n, 0};
	char kbuf[16];
	struct sbuf key, nm, v, g;
	sb_init(&key, kbuf, sizeof(kbuf));
	sb_init(&nm, out->name, sizeof(out->name));
	sb_init(&v, out->version, sizeof(out->version));
	sb_init(&g, out->group, sizeof(out->group));
	zn_result bad = ZN_ERR_CORRUPT;
	if (r.n >= 3 && !memcmp(r.p, "\xef\xbb\xbf", 3))
		r.i = 3;
	skip_json_ws(&r);
	if (r.i >= r.n || r.p[r.i++] != '{')
		goto fail;
	for (int first = 1;; first = 0) {
		skip_json_ws(&r);
		if (r.i < r.n && r.p[r.i] == '}' && first)
			break;
		key.n = 0;
		key.over = 0;
		if (r.i >= r.n || r.p[r.i] != '"' || !json_string(&r, &key))
			goto fail;
		skip_json_ws(&r);
		if (r.i >= r.n || r.p[r.i++] != ':')
			goto fail;
		skip_json_ws(&r);
		struct sbuf *dst = key.over                   ? NULL
		                   : !strcmp(kbuf, "name")    ? &nm
		                   : !strcmp(kbuf, "version") ? &v
		                                              : NULL;
		if (dst && r.i < r.n && r.p[r.i] == '"') {
			dst->n = 0;
			dst->s[0] = 0;
			dst->over = 0;
			if (!json_string(&r, dst))
				goto fail;
		} else {
			int ok = json_skip(&r);
			if (ok <= 0) {
				bad = ok < 0 ? ZN_ERR_LIMIT : ZN_ERR_CORRUPT;
				goto fail;
			}
		}
		skip_json_ws(&r);
		if (r.i < r.n && r.p[r.i] == ',') {
			r.i++;
			continue;
		}
		if (r.i < r.n && r.p[r.i] == '}')
			break;
		goto fail;
	}
	if (!nm.over)
		npm_split(out, &nm, &g);
	return finish(out, ZN_PKG_NPM, NULL, &nm, &v);
fail:
	coord_clear(out);
	return bad;
}

zn_result zn_pkg_parse(int meta, const void *data, size_t len, struct zn_pkg_coord *out)
{
	/* One layout so far: the caller's must hold all of it. */
	if (!out || zn_sized_len(out, ZN_FIRST_SIZE_pkg_coord) < sizeof(*out))
		return ZN_ERR_INVALID_ARG;
	coord_clear(out);
	if (len > ZN_PKG_META_MAX)
		return ZN_ERR_LIMIT;
	if (!data && len)
		return ZN_ERR_INVALID_ARG;
	const uint8_t *p = data ? data : (const uint8_t *)"";
	switch (meta) {
	case ZN_PKGM_POM_PROPERTIES:
		return parse_pom_properties(p, len, out);
	case ZN_PKGM_POM_XML:
		return parse_pom_xml(p, len, out);
	case ZN_PKGM_PYPI:
		return parse_pypi(p, len, out);
	case ZN_PKGM_CARGO_TOML:
		return parse_cargo(p, len, out);
	case ZN_PKGM_NPM_JSON:
		return parse_npm(p, len, out);
	default:
		return ZN_ERR_INVALID_ARG;
	}
}

/* ---- file names and members ---- */

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && !strncasecmp(s + n - k, suf, k);
}

/* The last component of a path. */
static const char *base_name(const char *p, size_t n, size_t *bn)
{
	size_t i = n;
	while (i && p[i - 1] != '/')
		i--;
	*bn = n - i;
	return p + i;
}

int zn_pkg_file_kind(const char *path, size_t len)
{
	size_t bn;
	const char *b = base_name(path, len, &bn);
	/* The extension first: most names in a tree are no package, and are told so at once. */
	const char *dot = bn ? memrchr(b, '.', bn) : NULL;
	if (!dot || dot == b)
		return ZN_PKGF_NONE;
	const char *ext = dot + 1;
	size_t en = bn - (size_t)(ext - b);
	static const struct {
		const char *ext;
		int kind;
	} kinds[] = {
	        {"jar", ZN_PKGF_JAR},      {"war", ZN_PKGF_JAR},       {"ear", ZN_PKGF_JAR},
	        {"aar", ZN_PKGF_JAR},      {"pom", ZN_PKGF_POM},       {"whl", ZN_PKGF_WHEEL},
	        {"crate", ZN_PKGF_CRATE},  {"tgz", ZN_PKGF_NPM_TGZ},   {"zip", ZN_PKGF_SDIST_ZIP},
	        {"gz", ZN_PKGF_SDIST_TGZ}, {"bz2", ZN_PKGF_SDIST_TGZ}, {"xz", ZN_PKGF_SDIST_TGZ},
	};
	for (size_t i = 0; i < ZN_ARRAY_LEN(kinds); i++) {
		if (strlen(kinds[i].ext) != en || strncasecmp(ext, kinds[i].ext, en))
			continue;
		if (kinds[i].kind != ZN_PKGF_SDIST_TGZ)
			return kinds[i].kind;
		/* NAME.tar.gz, with something before ".tar" */
		size_t before = (size_t)(dot - b);
		return before > 4 && !strncasecmp(dot - 4, ".tar", 4) ? ZN_PKGF_SDIST_TGZ
		                                                      : ZN_PKGF_NONE;
	}
	return ZN_PKGF_NONE;
}

/* Splits a member path into up to 6 '/'-separated parts; returns how many (7: more). */
static int split_parts(const char *m, size_t n, const char *part[6], size_t plen[6])
{
	int k = 0;
	size_t b = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && m[i] != '/')
			continue;
		if (k == 6)
			return 7;
		part[k] = m + b;
		plen[k++] = i - b;
		b = i + 1;
	}
	return k;
}

static int part_is(const char *p, size_t n, const char *want)
{
	return strlen(want) == n && !memcmp(p, want, n);
}

/* How well META-INF/maven/G/A names the jar at `path`: +2 when the file name starts "A-", +2
 * more when the directories above the artifact's are G with '.' as '/'. */
static int maven_match(const char *path, size_t len, const char *g, size_t gn, const char *a,
                       size_t an)
{
	size_t bn;
	const char *b = base_name(path, len, &bn);
	int score = 1;
	if (bn > an && !memcmp(b, a, an) && b[an] == '-')
		score += 2;
	/* path = .../G-as-dirs/A/VERSION/file */
	size_t end = (size_t)(b - path); /* just past the version directory's '/' */
	size_t i = end ? end - 1 : 0;
	while (i && path[i - 1] != '/') /* the version directory */
		i--;
	if (i < an + 1 || memcmp(path + i - an - 1, a, an) || path[i - 1] != '/')
		return score;
	i -= an + 1; /* just past G's '/' before A */
	if (i < gn + 1 || path[i - 1] != '/')
		return score;
	for (size_t k = 0; k < gn; k++) {
		char want = g[k] == '.' ? '/' : g[k];
		if (path[i - 1 - gn + k] != want)
			return score;
	}
	if (i - 1 - gn == 0 || path[i - 2 - gn] == '/')
		score += 2;
	return score;
}

int zn_pkg_member_rank(int kind, const char *path, size_t len, const char *member,
                       size_t member_len, int *meta)
{
	const char *part[6];
	size_t plen[6];
	int np = split_parts(member, member_len, part, plen), rank = 0, m = ZN_PKGM_NONE;
	switch (kind) {
	case ZN_PKGF_JAR:
		if (np == 5 && part_is(part[0], plen[0], "META-INF") &&
		    part_is(part[1], plen[1], "maven") && plen[2] && plen[3] &&
		    part_is(part[4], plen[4], "pom.properties")) {
			m = ZN_PKGM_POM_PROPERTIES;
			rank = maven_match(path, len, part[2], plen[2], part[3], plen[3]);
		}
		break;
	case ZN_PKGF_WHEEL:
		if (np == 2 && ends_with(part[0], plen[0], ".dist-info") &&
		    part_is(part[1], plen[1], "METADATA"))
			m = ZN_PKGM_PYPI, rank = 1;
		break;
	case ZN_PKGF_SDIST_TGZ:
	case ZN_PKGF_SDIST_ZIP:
		if (np == 2 && plen[0] && part_is(part[1], plen[1], "PKG-INFO"))
			m = ZN_PKGM_PYPI, rank = 1;
		break;
	case ZN_PKGF_CRATE:
		if (np == 2 && plen[0] && part_is(part[1], plen[1], "Cargo.toml"))
			m = ZN_PKGM_CARGO_TOML, rank = 1;
		break;
	case ZN_PKGF_NPM_TGZ:
		if (np == 2 && plen[0] && part_is(part[1], plen[1], "package.json"))
			m = ZN_PKGM_NPM_JSON, rank = 1 + part_is(part[0], plen[0], "package");
		break;
	default:
		break;
	}
	if (meta)
		*meta = rank ? m : ZN_PKGM_NONE;
	return rank;
}

/* Copies s[0, n) into a field; 0 when it does not fit. */
static int set_field(char *dst, const char *s, size_t n)
{
	if (n >= ZN_PKG_FIELD_MAX)
		return 0;
	memcpy(dst, s, n);
	dst[n] = 0;
	return 1;
}

/* NAME-VERSION: the split at the first '-' followed by a digit (semantic versions, npm and
 * crates) or, with last, the last such '-' (sdists, whose names may hold "-2"). */
static int name_version(const char *s, size_t n, int last, struct zn_pkg_coord *out)
{
	size_t at = 0;
	for (size_t i = 1; i + 1 < n; i++)
		if (s[i] == '-' && s[i + 1] >= '0' && s[i + 1] <= '9') {
			at = i;
			if (!last)
				break;
		}
	return at && set_field(out->name, s, at) && set_field(out->version, s + at + 1, n - at - 1);
}

/* The roots of Maven repositories, whose components are not part of a group. */
static size_t maven_root_end(const char *p, size_t n)
{
	static const char *const roots[] = {"maven-repo/", "repository/", "maven2/", ".m2/"};
	size_t end = 0;
	for (size_t r = 0; r < ZN_ARRAY_LEN(roots); r++) {
		size_t k = strlen(roots[r]);
		for (size_t i = 0; i + k <= n; i++)
			if ((i == 0 || p[i - 1] == '/') && !memcmp(p + i, roots[r], k) &&
			    i + k > end)
				end = i + k;
	}
	return end;
}

/* G/R/O/U/P/ARTIFACT/VERSION/ARTIFACT-VERSION[-CLASSIFIER].EXT */
static zn_result maven_from_path(const char *p, size_t n, struct zn_pkg_coord *out)
{
	size_t root = maven_root_end(p, n), bn;
	const char *b = base_name(p, n, &bn);
	size_t vend = (size_t)(b - p); /* just past the version directory's '/' */
	if (vend < root + 2)
		return ZN_ERR_NOT_FOUND;
	size_t vb = vend - 1;
	while (vb > root && p[vb - 1] != '/')
		vb--;
	if (vb < root + 2)
		return ZN_ERR_NOT_FOUND;
	size_t ab = vb - 1;
	while (ab > root && p[ab - 1] != '/')
		ab--;
	if (ab < root + 2)
		return ZN_ERR_NOT_FOUND; /* a group needs a directory of its own */
	const char *a = p + ab, *v = p + vb;
	size_t an = vb - 1 - ab, vn = vend - 1 - vb;
	/* The file is ARTIFACT-VERSION then '.' or '-'; for a SNAPSHOT, ARTIFACT-BASE then a time.
	 */
	size_t vcmp = vn;
	if (vn > 9 && !memcmp(v + vn - 9, "-SNAPSHOT", 9))
		vcmp = vn - 8;
	if (!an || !vn || bn <= an + 1 + vcmp || memcmp(b, a, an) || b[an] != '-' ||
	    memcmp(b + an + 1, v, vcmp) ||
	    (vcmp == vn && b[an + 1 + vn] != '.' && b[an + 1 + vn] != '-'))
		return ZN_ERR_NOT_FOUND;
	size_t gn = ab - 1 - root;
	if (!set_field(out->group, p + root, gn) || !set_field(out->name, a, an) ||
	    !set_field(out->version, v, vn))
		return ZN_ERR_LIMIT;
	for (size_t k = 0; k < gn; k++)
		if (out->group[k] == '/')
			out->group[k] = '.';
	out->type = ZN_PKG_MAVEN;
	return ZN_OK;
}

zn_result zn_pkg_from_path(int kind, const char *path, size_t len, struct zn_pkg_coord *out)
{
	if (!out || zn_sized_len(out, ZN_FIRST_SIZE_pkg_coord) < sizeof(*out))
		return ZN_ERR_INVALID_ARG;
	coord_clear(out);
	size_t bn;
	const char *b = base_name(path, len, &bn);
	zn_result r = ZN_ERR_NOT_FOUND;
	uint32_t type = ZN_PKG_NONE;
	if (kind != zn_pkg_file_kind(path, len))
		return ZN_ERR_INVALID_ARG; /* the suffix taken off below is the kind's */
	switch (kind) {
	case ZN_PKGF_JAR:
	case ZN_PKGF_POM:
		r = maven_from_path(path, len, out);
		break;
	case ZN_PKGF_WHEEL: { /* NAME-VERSION(-BUILD)?-PY-ABI-PLATFORM.whl */
		const char *dash = memchr(b, '-', bn);
		size_t nn = dash ? (size_t)(dash - b) : 0, vn = 0;
		while (dash && nn + 1 + vn < bn && b[nn + 1 + vn] != '-')
			vn++;
		if (nn && vn && nn + 1 + vn < bn && set_field(out->name, b, nn) &&
		    set_field(out->version, b + nn + 1, vn))
			type = ZN_PKG_PYPI;
		break;
	}
	case ZN_PKGF_SDIST_TGZ:
	case ZN_PKGF_SDIST_ZIP: {
		size_t k = bn - (ends_with(b, bn, ".zip")       ? 4
		                 : ends_with(b, bn, ".tar.bz2") ? 8
		                                                : 7);
		if (name_version(b, k, 1, out))
			type = ZN_PKG_PYPI;
		break;
	}
	case ZN_PKGF_CRATE:
		if (name_version(b, bn - 6, 0, out))
			type = ZN_PKG_CARGO;
		break;
	case ZN_PKGF_NPM_TGZ:
		if (name_version(b, bn - 4, 0, out))
			type = ZN_PKG_NPM;
		break;
	default:
		return ZN_ERR_INVALID_ARG;
	}
	if (type != ZN_PKG_NONE) {
		out->type = type;
		r = ZN_OK;
	}
	if (r != ZN_OK)
		coord_clear(out);
	return r;
}
