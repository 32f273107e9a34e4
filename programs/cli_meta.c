/* cli_meta.c - create's --owner, --group, --numeric-owner, --mode and --mtime, as tar's: what
 * they parse to, and the hook that applies them to every entry (zn_writer_set_meta_hook). */
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

/* NAME, NUMBER or NAME:NUMBER, as tar: a NUMBER alone takes the name this system gives it (or
 * none), a NAME alone its id here; a NAME this system does not know needs its :NUMBER. */
int cli_meta_owner(struct cli_meta *m, const char *arg, int group)
{
	const char *what = group ? "--group" : "--owner";
	const char *colon = strrchr(arg, ':');
	uint64_t id;
	char name[256] = "";
	if (colon) {
		size_t n = (size_t)(colon - arg);
		if (n >= sizeof(name) || cli_parse_uint(colon + 1, 0, UINT32_MAX - 1, &id))
			return cli_usage_error("create", "invalid %s '%s' (NAME, ID or NAME:ID)",
			                       what, arg);
		memcpy(name, arg, n);
		name[n] = 0;
	} else if (all_digits(arg)) {
		if (cli_parse_uint(arg, 0, UINT32_MAX - 1, &id))
			return cli_usage_error("create", "invalid %s '%s' (NAME, ID or NAME:ID)",
			                       what, arg);
		const char *known = NULL;
		if (group) {
			struct group *g = getgrgid((gid_t)id);
			known = g ? g->gr_name : NULL;
		} else {
			struct passwd *p = getpwuid((uid_t)id);
			known = p ? p->pw_name : NULL;
		}
		if (known && strlen(known) < sizeof(name))
			strcpy(name, known);
	} else {
		if (strlen(arg) >= sizeof(name))
			return cli_usage_error("create",
			                       "invalid %s '%s' (a name is at most 255 bytes)",
			                       what, arg);
		if (group) {
			struct group *g = getgrnam(arg);
			if (!g)
				return cli_usage_error("create",
				                       "unknown group '%s' (give NAME:GID)", arg);
			id = g->gr_gid;
		} else {
			struct passwd *p = getpwnam(arg);
			if (!p)
				return cli_usage_error("create",
				                       "unknown user '%s' (give NAME:UID)", arg);
			id = p->pw_uid;
		}
		strcpy(name, arg);
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

/* Digits of a fraction of a second as nanoseconds (more than 9 are cut off); NULL if none. */
static const char *parse_frac(const char *s, int64_t *ns)
{
	int64_t v = 0, scale = 100000000;
	if (*s < '0' || *s > '9')
		return NULL;
	for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
		v += scale ? (*s - '0') * scale : 0;
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
			if (*s == '.' && !(s = parse_frac(s + 1, ns)))
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
	if (tm.tm_mday != d && se < 60) /* 2021-02-30 came back as March 2 */
		return -1;
	*sec = t - off;
	return 0;
}

/* --mtime: @SECONDS[.FRAC], a date as parse_date takes it, or (starting with '/' or '.', as
 * with tar) a file whose modification time is taken. */
int cli_meta_mtime(struct cli_meta *m, const char *arg)
{
	time_t sec;
	int64_t ns = 0;
	const int64_t lim = INT64_MAX / 1000000000 - 1;
	if (arg[0] == '/' || arg[0] == '.') {
		struct stat st;
		if (stat(arg, &st)) {
			cli_error("--mtime: %s: %s", arg, strerror(errno));
			return EXIT_SYSTEM;
		}
		sec = st.st_mtim.tv_sec;
		ns = st.st_mtim.tv_nsec;
	} else if (arg[0] == '@') {
		char *end;
		errno = 0;
		long long v = strtoll(arg + 1, &end, 10);
		const char *rest = end;
		if (end == arg + 1 || errno ||
		    (*rest == '.' && !(rest = parse_frac(rest + 1, &ns))) || *rest)
			goto bad;
		if (arg[1] == '-' && ns) { /* @-1.5 is half a second before @-1 */
			v -= 1;
			ns = 1000000000 - ns;
		}
		sec = (time_t)v;
	} else if (parse_date(arg, &sec, &ns)) {
		goto bad;
	}
	if (sec > lim || sec < -lim)
		return cli_usage_error("create", "--mtime '%s' is outside 1677-2262", arg);
	m->mtime_ns = (int64_t)sec * 1000000000 + ns;
	if (!m->mtime_policy)
		m->mtime_policy = MTIME_SET;
	return 0;
bad:
	return cli_usage_error("create",
	                       "invalid --mtime '%s' (@SECONDS, YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM], "
	                       "or a file starting with '/' or '.')",
	                       arg);
}

/* --mode: octal, or chmod's symbolic clauses ([ugoa]*([-+=]([rwxXst]*|[ugo]))+, separated by
 * commas), compiled into steps that apply_mode runs in order. */
int cli_meta_mode(struct cli_meta *m, const char *arg)
{
	size_t len = strlen(arg), n = 0;
	struct mode_step *st = calloc(len + 1, sizeof(*st)); /* never more steps than bytes */
	if (!st)
		return EXIT_SYSTEM;
	if (strspn(arg, "01234567") == len && len && len <= 4) {
		st[n++] = (struct mode_step){.op = '#', .perm = (uint32_t)strtoul(arg, NULL, 8)};
	} else {
		const char *s = arg;
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
				*p = (struct mode_step){.op = *s++, .who = who};
				if (*s == 'u' || *s == 'g' || *s == 'o') {
					p->copy = *s++;
					continue;
				}
				for (;; s++) {
					if (*s == 'r')
						p->perm |= 0444;
					else if (*s == 'w')
						p->perm |= 0222;
					else if (*s == 'x')
						p->perm |= 0111;
					else if (*s == 'X')
						p->x_if_any = 1;
					else if (*s == 's')
						p->perm |= 06000;
					else if (*s == 't')
						p->perm |= 01000;
					else
						break;
				}
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

/* The steps of --mode on one entry's mode, as chmod(1) runs them: a step without a class is
 * limited by the umask; X adds execute for directories and for what has it somewhere. */
static uint32_t apply_mode(const struct cli_meta *m, uint32_t mode, int is_dir)
{
	for (size_t i = 0; i < m->nmode; i++) {
		const struct mode_step *p = &m->mode[i];
		if (p->op == '#') {
			mode = p->perm;
			continue;
		}
		uint32_t who = p->who ? p->who : 07777 & ~m->umask, bits = p->perm;
		if (p->x_if_any && (is_dir || (mode & 0111)))
			bits |= 0111;
		if (p->copy) {
			int shift = p->copy == 'u' ? 6 : p->copy == 'g' ? 3 : 0;
			bits |= ((mode >> shift) & 7) * 0111;
		}
		bits &= who;
		if (p->op == '+')
			mode |= bits;
		else if (p->op == '-')
			mode &= ~bits;
		else
			mode = (mode & ~who) | bits;
	}
	return mode & 07777;
}

void cli_meta_hook(void *ctx, struct zn_entry *e)
{
	const struct cli_meta *m = ctx;
	if (m->nmode && e->type != ZN_TYPE_SYMLINK) /* a symlink's mode means nothing */
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
	if (m->mtime_policy == MTIME_SET ||
	    (m->mtime_policy == MTIME_CLAMP && e->mtime_ns > m->mtime_ns))
		e->mtime_ns = m->mtime_ns;
}

int cli_meta_active(const struct cli_meta *m)
{
	return m->set_owner || m->set_group || m->numeric_owner || m->nmode || m->mtime_policy;
}
