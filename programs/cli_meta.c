/* SPDX-License-Identifier: MIT */
/* cli_meta.c - create's --owner, --group, --numeric-owner, --mode and --mtime, as tar's: what
 * they parse to, and the hook that applies them to every entry (struct zn_hooks' meta), which
 * also lists the entries for -v. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

/* Who a symbolic clause names: the permission bits of each class, with its special bit. */
#define WHO_U 04700u
#define WHO_G 02070u
#define WHO_O 01007u

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The name this system gives user (group) id, or "" into name[256]. */
static void name_of_id(uint64_t id, int group, char *name)
{
	const char *known = NULL;
	if (group) {
		struct group *g = getgrgid((gid_t)id);
		known = g ? g->gr_name : NULL;
	} else {
		struct passwd *p = getpwuid((uid_t)id);
		known = p ? p->pw_name : NULL;
	}
	name[0] = 0;
	if (known && strlen(known) < 256)
		strcpy(name, known);
}

/* NAME, ID or NAME:ID, as tar: an ID alone (or after an empty NAME) takes the name this system
 * gives it, or none; a NAME alone its id here, and one this system does not know needs its ID. */
int cli_meta_owner(struct cli_meta *m, const char *arg, int group)
{
	const char *what = group ? "--group" : "--owner";
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	uint64_t id;
	char name[256];
	if (n >= sizeof(name))
		return cli_usage_error("create", "invalid %s '%s' (a name is at most 255 bytes)",
		                       what, arg);
	memcpy(name, arg, n);
	name[n] = 0;
	if (colon || all_digits(arg)) {
		if (cli_parse_uint(colon ? colon + 1 : arg, 0, UINT32_MAX - 1, &id))
			return cli_usage_error("create", "invalid %s '%s' (NAME, ID or NAME:ID)",
			                       what, arg);
		if (!colon || !n)
			name_of_id(id, group, name);
	} else if (group) {
		struct group *g = getgrnam(arg);
		if (!g)
			return cli_usage_error("create", "unknown group '%s' (give NAME:GID)", arg);
		id = g->gr_gid;
	} else {
		struct passwd *p = getpwnam(arg);
		if (!p)
			return cli_usage_error("create", "unknown user '%s' (give NAME:UID)", arg);
		id = p->pw_uid;
	}
	if (group) {
		m->set_group = 1;
		m->gid = (uint32_t)id;
		strcpy(m->gname, name);
	} else {
		m->set_owner = 1;
		m->uid = (uint32_t)id;
		strcpy(m->uname, name);
	}
	return 0;
}

/* Digits of a fraction of a second as nanoseconds (more than 9 are cut off; *more says whether
 * any of those was not 0); NULL if none. */
static const char *parse_frac(const char *s, int64_t *ns, int *more)
{
	int64_t v = 0, scale = 100000000;
	if (*s < '0' || *s > '9')
		return NULL;
	*more = 0;
	for (; *s >= '0' && *s <= '9'; s++, scale /= 10) {
		v += scale ? (*s - '0') * scale : 0;
		*more |= !scale && *s != '0';
	}
	*ns = v;
	return s;
}

/* Exactly n digits at s, as a number; -1 if they are not there. */
static int fixed(const char **s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*s)++) {
		if ((*s)[0] < '0' || (*s)[0] > '9')
			return -1;
		v = v * 10 + ((*s)[0] - '0');
	}
	return v;
}

/* YYYY-MM-DD[(T| )HH:MM[:SS[.FRAC]]][Z|UTC|(+|-)HH[:MM]] as seconds since the epoch; a time
 * without a zone is local, as date(1) takes it. 0, or -1 if s is not such a date. */
static int parse_date(const char *s, time_t *sec, int64_t *ns)
{
	struct tm tm = {0};
	int y = fixed(&s, 4), mo, d, h = 0, mi = 0, se = 0, zone = 0;
	long off = 0;
	*ns = 0;
	if (y < 0 || *s++ != '-' || (mo = fixed(&s, 2)) < 1 || mo > 12 || *s++ != '-' ||
	    (d = fixed(&s, 2)) < 1 || d > 31)
		return -1;
	if (*s == 'T' || *s == ' ') {
		s++;
		if ((h = fixed(&s, 2)) < 0 || h > 23 || *s++ != ':' || (mi = fixed(&s, 2)) < 0 ||
		    mi > 59)
			return -1;
		if (*s == ':') {
			s++;
			if ((se = fixed(&s, 2)) < 0 || se > 60)
				return -1;
			int more;
			if (*s == '.' && !(s = parse_frac(s + 1, ns, &more)))
				return -1;
		}
	}
	if (!strcmp(s, "Z") || !strcmp(s, "UTC")) {
		zone = 1;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1, oh = fixed(&s, 2), om = 0;
		if (*s == ':')
			s++;
		if (*s && (om = fixed(&s, 2)) < 0)
			return -1;
		if (oh < 0 || oh > 14 || om > 59 || *s)
			return -1;
		zone = 1;
		off = sign * (oh * 3600L + om * 60L);
	} else if (*s) {
		return -1;
	}
	tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
	tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = se;
	tm.tm_isdst = -1;
	time_t t = zone ? timegm(&tm) : mktime(&tm);
	/* 2021-02-30 comes back as March 2, a local time in a DST gap an hour later: refused, as
	 * date(1) and tar refuse them (a leap second, 60, rolls over). */
	if (se < 60 && (tm.tm_mday != d || tm.tm_hour != h || tm.tm_min != mi))
		return -1;
	*sec = t - off;
	return 0;
}

/* --mtime: @SECONDS[.FRAC], a date as parse_date takes it, or (starting with '/' or '.', as
 * with tar) a file whose modification time is taken. */
int cli_meta_mtime(struct cli_meta *m, const char *arg)
{
	int64_t sec, ns = 0, total;
	int neg = 0, more = 0;
	if (arg[0] == '/' || arg[0] == '.') {
		struct stat st;
		if (stat(arg, &st)) {
			cli_error("--mtime: %s: %s", arg, strerror(errno));
			return EXIT_SYSTEM;
		}
		sec = st.st_mtim.tv_sec;
		ns = st.st_mtim.tv_nsec;
	} else if (arg[0] == '@') {
		const char *p = arg + 1, *rest;
		neg = *p == '-';
		p += *p == '-' || *p == '+';
		if (*p < '0' || *p > '9')
			goto bad;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		rest = end;
		if ((*rest == '.' && !(rest = parse_frac(rest + 1, &ns, &more))) || *rest)
			goto bad;
		if (errno || v > INT64_MAX)
			goto range;
		sec = (int64_t)v;
		ns += neg && more; /* rounded down, as tar: @-0.0000000001 is 1 ns before 0 */
	} else {
		time_t t;
		if (parse_date(arg, &t, &ns))
			goto bad;
		sec = t;
	}
	/* Nanoseconds since the epoch must fit 64 bits: 1677-09-21 to 2262-04-11. */
	if (__builtin_mul_overflow(neg ? -sec : sec, 1000000000, &total) ||
	    (neg ? __builtin_sub_overflow(total, ns, &total)
	         : __builtin_add_overflow(total, ns, &total)))
		goto range;
	m->mtime_ns = total;
	if (!m->mtime_policy)
		m->mtime_policy = MTIME_SET;
	return 0;
range:
	return cli_usage_error(
	        "create",
	        "--mtime '%s' is outside 1677-09-21T00:12:44Z .. 2262-04-11T23:47:16Z "
	        "(nanoseconds since 1970 in 64 bits)",
	        arg);
bad:
	return cli_usage_error("create",
	                       "invalid --mtime '%s' (@SECONDS, YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM], "
	                       "or a file starting with '/' or '.')",
	                       arg);
}

/* An octal mode at *s (advanced past it), at most 07777; -1 if there is none. */
static long octal_at(const char **s)
{
	long v = 0;
	const char *p = *s;
	for (; *p >= '0' && *p <= '7' && v <= 07777; p++)
		v = v * 8 + (*p - '0');
	if (p == *s || v > 07777)
		return -1;
	*s = p;
	return v;
}

/* --mode: what chmod(1) takes (coreutils' mode_compile): an octal mode, or symbolic clauses
 * [ugoa]*([-+=]([rwxXst]*|[ugo]|OCTAL))+ separated by commas (OCTAL only where no class is
 * named), compiled into steps that apply_mode runs in order. */
int cli_meta_mode(struct cli_meta *m, const char *arg)
{
	size_t n = 0;
	struct mode_step *st =
	        calloc(strlen(arg) + 1, sizeof(*st)); /* never more steps than bytes */
	if (!st)
		return EXIT_SYSTEM;
	const char *s = arg;
	long v = octal_at(&s);
	if (v >= 0) {
		if (*s)
			goto bad;
		/* With fewer than 5 digits a directory's set-id bits stay unless named. */
		uint32_t mentioned = s - arg < 5 ? ((uint32_t)v & 06000) | 01777 : 07777;
		st[n++] = (struct mode_step){
		        .op = '=', .affected = 07777, .value = (uint32_t)v, .mentioned = mentioned};
	} else {
		for (;;) {
			uint32_t who = 0;
			for (;; s++) {
				if (*s == 'u')
					who |= WHO_U;
				else if (*s == 'g')
					who |= WHO_G;
				else if (*s == 'o')
					who |= WHO_O;
				else if (*s == 'a')
					who |= WHO_U | WHO_G | WHO_O;
				else
					break;
			}
			if (*s != '+' && *s != '-' && *s != '=')
				goto bad;
			while (*s == '+' || *s == '-' || *s == '=') {
				struct mode_step *p = &st[n++];
				*p = (struct mode_step){.op = *s++, .affected = who};
				if (!who && (v = octal_at(&s)) >= 0) { /* as in chmod +644 */
					p->affected = p->mentioned = 07777;
					p->value = (uint32_t)v;
					if (*s && *s != ',')
						goto bad; /* the clause ends with it */
					continue;
				}
				if (*s == 'u' || *s == 'g' || *s == 'o') {
					p->copy = *s++;
					p->value = p->copy == 'u'   ? 0700
					           : p->copy == 'g' ? 070
					                            : 07;
				}
				for (; !p->copy; s++) {
					if (*s == 'r')
						p->value |= 0444;
					else if (*s == 'w')
						p->value |= 0222;
					else if (*s == 'x')
						p->value |= 0111;
					else if (*s == 'X')
						p->x_if_any = 1;
					else if (*s == 's')
						p->value |= 06000;
					else if (*s == 't')
						p->value |= 01000;
					else
						break;
				}
				p->mentioned = who ? who & p->value : p->value;
			}
			if (!*s)
				break;
			if (*s++ != ',')
				goto bad;
		}
	}
	mode_t u = umask(0);
	umask(u);
	free(m->mode);
	m->mode = st;
	m->nmode = n;
	m->umask = (uint32_t)u & 0777;
	return 0;
bad:
	free(st);
	return cli_usage_error(
	        "create",
	        "invalid --mode '%s' (octal, or as chmod: [ugoa...][+-=][rwxXst...], "
	        "comma-separated)",
	        arg);
}

/* The steps of --mode on one entry's mode, as chmod(1) runs them (coreutils' mode_adjust): a
 * step naming no class is limited by the umask; X adds execute for directories and for what
 * has it somewhere; a directory's set-id bits stay unless the step names them. */
static uint32_t apply_mode(const struct cli_meta *m, uint32_t mode, int is_dir)
{
	for (size_t i = 0; i < m->nmode; i++) {
		const struct mode_step *p = &m->mode[i];
		uint32_t omit = is_dir ? 06000 & ~p->mentioned : 0, value = p->value;
		if (p->copy) /* the class's bits, given to every class */
			value = (mode & value & 0444 ? 0444 : 0) |
			        (mode & value & 0222 ? 0222 : 0) | (mode & value & 0111 ? 0111 : 0);
		if (p->x_if_any && (is_dir || (mode & 0111)))
			value |= 0111;
		value &= (p->affected ? p->affected : ~m->umask) & ~omit;
		if (p->op == '+')
			mode |= value;
		else if (p->op == '-')
			mode &= ~value;
		else
			mode = (mode & ((p->affected ? ~p->affected : 0) | omit)) | value;
	}
	return mode & 07777;
}

void cli_meta_hook(void *ctx, struct zn_entry *e)
{
	const struct cli_meta *m = ctx;
	if (m->nmode) /* symlinks too, as tar (their mode is not used on extraction) */
		e->mode = apply_mode(m, e->mode, e->type == ZN_TYPE_DIR);
	if (m->set_owner) {
		e->uid = m->uid;
		e->uname = m->uname;
		e->uname_len = strlen(m->uname);
	}
	if (m->set_group) {
		e->gid = m->gid;
		e->gname = m->gname;
		e->gname_len = strlen(m->gname);
	}
	if (m->numeric_owner) {
		e->uname = e->gname = NULL;
		e->uname_len = e->gname_len = 0;
	}
	if (m->verbose) {
		cli_put_escaped(m->verbose, e->path, e->path_len);
		putc('\n', m->verbose);
	}
	if (m->mtime_policy == MTIME_SET ||
	    (m->mtime_policy == MTIME_CLAMP && e->mtime_ns > m->mtime_ns))
		e->mtime_ns = m->mtime_ns;
}

int cli_meta_active(const struct cli_meta *m)
{
	return m->set_owner || m->set_group || m->numeric_owner || m->nmode || m->mtime_policy ||
	       m->verbose;
}
