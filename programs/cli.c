/* SPDX-License-Identifier: MIT */
/* cli.c - messages, exit codes, option parsing helpers, the progress line, escaped names and
 * path patterns. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *cli_prog = "znippy";
int cli_quiet = 0;
int cli_progress = -1;

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", cli_prog, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_progress_end();
	vmsg("", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	if (cli_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	cli_progress_end();
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s %s: ", cli_prog, cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry '%s %s --help'.\n", cli_prog, cmd);
	va_end(ap);
	return EXIT_USAGE;
}

ssize_t cli_read_input(int fd, void *buf, size_t cap)
{
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		int err = errno, fl = fcntl(fd, F_GETFL);
		if (err == EAGAIN && fl >= 0 && (fl & O_NONBLOCK) &&
		    !fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))
			continue;
		errno = err;
		return -1;
	}
}

int cli_decoder_args(int argc, char **argv, const char *cmd, void *op, cli_arg_fn long_opt,
                     cli_arg_fn short_opts, char **files, int *nfiles)
{
	int only_files = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc = -1;
		if (only_files || a[0] != '-' || !strcmp(a, "-"))
			files[(*nfiles)++] = argv[i];
		else if (!strcmp(a, "--"))
			only_files = 1;
		else
			rc = (a[1] == '-' ? long_opt : short_opts)(op, cmd, argc, argv, &i);
		if (rc >= 0)
			return rc;
	}
	if (*nfiles == 0)
		files[(*nfiles)++] = "-";
	return -1;
}

/* Whether argument a is a group of short options ("-qx") holding ch. */
static int in_short_group(const char *a, int ch)
{
	return a && a[0] == '-' && a[1] && a[1] != '-' && strchr(a + 1, ch);
}

int cli_option_error(const char *cmd, int c, char *const *argv)
{
	/* getopt leaves optind on a group of short options until its last letter is read, and
	 * past a long option: which argument failed is found by looking at both. */
	const char *cur = argv[optind], *prev = optind > 0 ? argv[optind - 1] : NULL;
	if (optopt > 0 && optopt < 256 &&
	    (in_short_group(cur, optopt) || in_short_group(prev, optopt))) {
		if (c == ':')
			return cli_usage_error(cmd, "option '-%c' requires an argument", optopt);
		return cli_usage_error(cmd, "invalid option -- '%c'", optopt);
	}
	const char *arg = prev ? prev : "";
	const char *eq = strchr(arg, '=');
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' requires an argument", arg);
	if (optopt && eq)
		return cli_usage_error(cmd, "option '%.*s' takes no value", (int)(eq - arg), arg);
	return cli_usage_error(cmd, "unrecognized or ambiguous option '%s'", arg);
}

int cli_exit_code(zn_result r)
{
	switch (r) {
	case ZN_OK:
		return EXIT_OK;
	case ZN_ERR_CORRUPT:
	case ZN_ERR_TRUNCATED:
	case ZN_ERR_CHECKSUM:
	case ZN_ERR_UNSUPPORTED:
	case ZN_ERR_DAMAGED:
	case ZN_ERR_UNSAFE_PATH:
	case ZN_ERR_LIMIT:
	case ZN_ERR_BAD_HEADER:
	case ZN_ERR_BAD_BLOCK_TYPE:
	case ZN_ERR_BAD_STORED_LEN:
	case ZN_ERR_BAD_CODE_LENGTHS:
	case ZN_ERR_BAD_SYMBOL:
	case ZN_ERR_BAD_DISTANCE:
	case ZN_ERR_TRAILING_GARBAGE:
	case ZN_ERR_LENGTH_MISMATCH:
	case ZN_ERR_HEADER_CHECKSUM:
	case ZN_ERR_NOT_FOUND:
	case ZN_ERR_DICTIONARY:
		return EXIT_DAMAGED;
	case ZN_ERR_INVALID_ARG:
		return EXIT_USAGE;
	default:
		return EXIT_SYSTEM;
	}
}

int cli_parse_size(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9') /* strtoull would take blanks, '+' and '-' */
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	uint64_t mul = 1;
	switch (*end) {
	case 0:
		break;
	case 'k':
	case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	case 't':
	case 'T':
		mul = 1ULL << 40;
		end++;
		break;
	default:
		return -1;
	}
	if (*end == 'i' && mul > 1)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (v && UINT64_MAX / v < mul))
		return -1;
	*out = (uint64_t)v * mul;
	return 0;
}

int cli_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9') /* strtoull would take blanks, '+' and '-' */
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* -C DIR for extract and diff into *dir: not empty, and one after another is relative to it, as
 * tar takes them (the string is kept, in a static, to the end of the process). 0, or the exit
 * status. */
int cli_take_dir(const char *cmd, const char **dir, const char *arg)
{
	static char *chained;
	if (!*arg)
		return cli_usage_error(cmd, "empty DIR for -C");
	if (arg[0] == '/' || !strcmp(*dir, ".")) {
		*dir = arg;
		return 0;
	}
	char *d = malloc(strlen(*dir) + strlen(arg) + 2);
	if (!d)
		return EXIT_SYSTEM;
	sprintf(d, "%s/%s", *dir, arg);
	free(chained);
	*dir = chained = d;
	return 0;
}

int cli_parse_threads(const char *cmd, const char *arg, unsigned *out)
{
	uint64_t v;
	if (cli_parse_uint(arg, 0, UINT64_MAX, &v))
		return cli_usage_error(cmd, "invalid thread count '%s'", arg);
	/* More than the library runs are taken as that many, as zstd -T and xz -T take them. */
	*out = v > ZN_THREADS_MAX ? ZN_THREADS_MAX : (unsigned)v;
	return 0;
}

int cli_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		/* In pieces of at most 128 KiB, as the library writes (ZN_WRITE_PIECE in
		 * lib/common/common.h): one big write into a file on ext4 costs several times the
		 * system time. */
		ssize_t n = write(fd, p, len < ((size_t)128 << 10) ? len : ((size_t)128 << 10));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void cli_print_version(void)
{
	printf("znippy %s\n", zn_version());
}

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- progress -------------------------------------------------------------------------------- */
static double progress_start, progress_last;
static int progress_shown;

int cli_progress_enabled(void)
{
	if (cli_quiet)
		return 0;
	if (cli_progress >= 0)
		return cli_progress;
	return isatty(2);
}

void cli_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (!cli_progress_enabled())
		return;
	static uint64_t done_at_start;
	double now = cli_now();
	if (!progress_start) { /* the rate is over what the line has seen pass */
		progress_start = now;
		done_at_start = done;
	}
	static uint64_t shown = UINT64_MAX;
	if ((now - progress_last < 0.2 && (!total || done < total)) /* total 0: not known */ ||
	    done == shown)
		return;
	shown = done;
	progress_last = now;
	double secs = now - progress_start;
	double mb = (double)done / 1e6;
	char rate[32] = "";
	if (secs >= 0.05)
		snprintf(rate, sizeof(rate), " %.1f MB/s",
		         (double)(done - done_at_start) / 1e6 / secs);
	if (total)
		fprintf(stderr, "\r%s: %.1f / %.1f MB (%3.0f%%)%s   ", cli_prog, mb,
		        (double)total / 1e6, 100.0 * (double)done / (double)total, rate);
	else
		fprintf(stderr, "\r%s: %.1f MB%s   ", cli_prog, mb, rate);
	progress_shown = 1;
}

void cli_progress_end(void)
{
	if (progress_shown) {
		fputc('\n', stderr);
		progress_shown = 0;
	}
}

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 if it is not one (truncated, a
 * stray continuation byte, an overlong form, a surrogate or beyond U+10FFFF); *cp its value. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
	if (!len || c > 0xf4 || len > n)
		return 0;
	uint32_t v = c & (0x7f >> len);
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[k] & 0x3f);
	}
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* Characters that control the terminal or change how the text around them shows: C1 controls,
 * bidirectional marks and overrides (a name could otherwise display as "evilexe.jpg"), zero-width
 * characters, line and paragraph separators, the byte order mark. */
static int hidden_char(uint32_t cp)
{
	return cp < 0xa0 || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff;
}

void cli_put_escaped(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n;) {
		size_t run = 0; /* printable ASCII other than the backslash, written as one run */
		while (i + run < n && s[i + run] >= 32 && s[i + run] < 127 && s[i + run] != '\\')
			run++;
		if (run) {
			fwrite(s + i, 1, run, f);
			i += run;
			continue;
		}
		unsigned char ch = s[i];
		uint32_t cp;
		size_t len;
		if (ch == '\\')
			fputs("\\\\", f);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 32 || ch == 127)
			fprintf(f, "\\%03o", ch); /* C0 and DEL */
		else if ((len = utf8_seq(s + i, n - i, &cp)) && !hidden_char(cp)) {
			fwrite(s + i, 1, len, f); /* a character that shows as itself */
			i += len;
			continue;
		} else if (len) {
			for (size_t k = 0; k < len; k++) /* C1 controls, bidi and such, as UTF-8 */
				fprintf(f, "\\%03o", s[i + k]);
			i += len;
			continue;
		} else
			fprintf(f, "\\%03o", ch); /* not UTF-8 (a raw C1 byte among them) */
		i++;
	}
}

/* Paths come from the archive: escaped, so that a crafted name cannot send control sequences to
 * the terminal. */
void cli_problem_cb(void *ctx, const char *path, zn_result r, const char *what)
{
	(void)ctx;
	if (r == ZN_OK && cli_quiet)
		return; /* a warning: nothing went wrong */
	cli_progress_end();
	fprintf(stderr, "%s: ", cli_prog);
	cli_put_escaped(stderr, path, strlen(path));
	fprintf(stderr, ": %s\n", what);
}

/* The exit status that says more of two (the larger), as diff(1) ranks trouble above a difference.
 */
int cli_worse(int a, int b)
{
	return a > b ? a : b;
}

/* The same for extract and cat, where damage (1) outranks an I/O error (3): it is what trying
 * again cannot mend, and so what extract's library reports when both occur. */
int cli_damage_first(int a, int b)
{
	return a == EXIT_DAMAGED || b == EXIT_DAMAGED ? EXIT_DAMAGED : cli_worse(a, b);
}

/* "znippy: PATH: what" on stderr for an entry (its path not NUL-terminated), after what
 * standard output holds so far. */
void cli_name_entry(const struct zn_entry *e, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	cli_put_escaped(stderr, e->path, e->path_len);
	fprintf(stderr, ": %s\n", what);
}

/* cli_name_entry for the fields of e the index lost (zn_reader_entry_lost), and what that means. */
void cli_name_lost(const struct zn_entry *e, unsigned lost, const char *then)
{
	char msg[160];
	zn_lost_message(lost, msg);
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s", then);
	cli_name_entry(e, msg);
}

/* The options of a command whose only one is -h/--help (cat, info), up to optind. Returns -1 to
 * go on, else the exit status (help printed, or a usage error named). */
const struct option cli_help_options[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};

int cli_help_only(const char *cmd, int argc, char **argv, const char *optstring, const char *help)
{
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, optstring, cli_help_options, NULL)) != -1) {
		if (c != 'h')
			return cli_option_error(cmd, c, argv);
		fputs(help, stdout);
		return EXIT_OK;
	}
	return -1;
}

void cli_normalize_path(char *s)
{
	char *o = s;
	const char *p = s;
	int any = *s != 0;
	while (*p) {
		while (*p == '/')
			p++;
		const char *c = p;
		while (*p && *p != '/')
			p++;
		size_t n = (size_t)(p - c);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue; /* empty and "." parts name nothing */
		if (o > s)
			*o++ = '/';
		memmove(o, c, n);
		o += n;
	}
	if (o == s && any) /* "." or "/": kept as the user wrote one, which names nothing stored */
		*o++ = '.';
	*o = 0;
}

char *cli_pattern(const char *arg, int *dir_only)
{
	size_t len = strlen(arg);
	*dir_only = len > 1 && arg[len - 1] == '/';
	char *p = strdup(arg);
	if (p)
		cli_normalize_path(p);
	return p;
}

/* The ends of a path a PATTERN may match it at: its own end and each directory above it. */
struct prefix_ends {
	const char *path;
	size_t len;
};

static int prefix_end(void *ctx, size_t end)
{
	const struct prefix_ends *a = ctx;
	return end == a->len || (end > 0 && a->path[end] == '/');
}

int cli_path_matches(const char *pattern, const struct cli_glob *g, const char *path,
                     size_t path_len)
{
	/* A name holding '[', '*', '?' or '\\' is still selected by itself, as tar selects it. */
	const size_t plen = strlen(pattern);
	if (plen <= path_len && !memcmp(pattern, path, plen) &&
	    (plen == path_len || (plen && path[plen] == '/')))
		return 1;
	/* A pattern naming a directory selects everything below it: one pass over the path tells
	 * for all of its directories at once (cli_glob.c says why). */
	struct prefix_ends a = {path, path_len};
	int hit = g ? cli_glob_scan(g, path, path_len, 0, prefix_end, &a) : -1;
	if (hit >= 0)
		return hit;
	/* A pattern not compiled there: fnmatch on each of them. */
	char *p = malloc(path_len + 1);
	if (!p)
		return 0;
	memcpy(p, path, path_len);
	p[path_len] = 0;
	hit = fnmatch(pattern, p, 0) == 0;
	for (size_t i = path_len; !hit && i > 0; i--) {
		if (p[i - 1] != '/' || i == 1)
			continue;
		p[i - 1] = 0;
		hit = fnmatch(pattern, p, 0) == 0;
	}
	free(p);
	return hit;
}
