/* SPDX-License-Identifier: MIT */
/* cli_out.c - output files of the decoders (gunzip, unzstd, bunzip2): written under a temporary
 * name, renamed into place once complete. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The output `final` in directory dir (shown as `shown`): 0, or the exit status (said). */
int cli_out_open(struct cli_out *o, int dir, const char *final, const char *shown, int force,
                 int allow_device, const struct cli_out_codes *codes)
{
	memset(o, 0, sizeof(*o));
	o->dir = dir;
	o->fd = -1;
	o->codes = codes;
	struct stat st;
	if (allow_device && fstatat(dir, final, &st, 0) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		o->fd = openat(dir, final, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (o->fd < 0) {
			cli_error("%s: %s", shown, strerror(errno));
			return codes->failed;
		}
		return 0;
	}
	if (fstatat(dir, final, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode)) {
			cli_error("%s: is a directory", shown); /* gzip -q says it too */
			return codes->refused;
		}
		if (!force) {
			cli_error("%s: already exists; use -f to overwrite", shown);
			return codes->refused;
		}
		if (fstatat(dir, final, &st, 0) == 0 && S_ISREG(st.st_mode)) {
			o->existed = 1;
			o->dev = st.st_dev;
			o->ino = st.st_ino;
		}
	}
	/* -f over a file in a directory we may not write is written in place, as
	 * `gzip -dc > FILE` would (cli_open_replacement). */
	o->final = strdup(final);
	o->shown = strdup(shown);
	o->fd = o->final && o->shown ? cli_open_replacement_at(dir, final, NULL, &o->tmp) : -1;
	if (o->fd < 0) {
		cli_error("%s: cannot create a temporary file beside it: %s", shown,
		          strerror(errno));
		free(o->final);
		free(o->shown);
		o->final = o->shown = NULL;
		return codes->failed;
	}
	return 0;
}

/* Refuses to read the file that the output would replace. */
int cli_out_is_input(const struct cli_out *o, int in_fd)
{
	struct stat st;
	return o->existed && fstat(in_fd, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino;
}

int cli_rename_into_place(int dir, const char *tmp, const char *final, int force)
{
	if (force)
		return renameat(dir, tmp, dir, final);
	int e = renameat2(dir, tmp, dir, final, RENAME_NOREPLACE);
	if (e && (errno == EINVAL || errno == ENOSYS)) {
		/* A file system without RENAME_NOREPLACE: link() refuses to replace too. */
		e = linkat(dir, tmp, dir, final, 0);
		if (!e)
			unlinkat(dir, tmp, 0);
	}
	return e;
}

int cli_out_close(struct cli_out *o, int rc, int force)
{
	const char *shown = o->shown ? o->shown : "output";
	if (o->fd >= 0 && close(o->fd) && rc == 0) {
		cli_error("%s: %s", shown, strerror(errno));
		rc = o->codes->failed;
	}
	o->fd = -1;
	if (o->tmp && rc == 0 && cli_rename_into_place(o->dir, o->tmp, o->final, force)) {
		int err = errno;
		if (err == EEXIST)
			cli_error("%s: already exists; use -f to overwrite", shown);
		else
			cli_error("%s: %s", shown, strerror(err));
		rc = err == EEXIST ? o->codes->refused : o->codes->failed;
	}
	if (o->tmp && rc != 0)
		unlinkat(o->dir, o->tmp, 0);
	if (o->tmp)
		cli_replacement_done(o->tmp);
	free(o->final);
	free(o->shown);
	o->tmp = o->final = o->shown = NULL;
	return rc;
}

/* A refusal of an input: said (unless -q silences it), and codes->refused. */
static int refuse(const struct cli_out_codes *codes, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static int refuse(const struct cli_out_codes *codes, const char *fmt, ...)
{
	if (!(codes->quiet_refusals && cli_quiet)) {
		char msg[4096];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		cli_error("%s", msg);
	}
	return codes->refused;
}

/* In place (FILE.gz -> FILE, then FILE.gz removed), an input must be a regular file; as gzip
 * does, a symlink, a set-id or sticky file or one with other links is refused without -f. */
int cli_check_in_place_input(const char *path, const struct stat *st, int force,
                             const struct cli_out_codes *codes)
{
	if (!S_ISREG(st->st_mode))
		return refuse(codes, "%s: is not a directory or a regular file -- ignored", path);
	if (force)
		return 0;
	if (st->st_mode & 07000)
		return refuse(codes,
		              "%s: has the set-user-id, set-group-id or sticky bit -- unchanged "
		              "(use -f)",
		              path);
	if (st->st_nlink > 1)
		return refuse(codes, "%s: has %llu other links -- unchanged (use -f)", path,
		              (unsigned long long)st->st_nlink - 1);
	return 0;
}
