/* SPDX-License-Identifier: MIT */
/* cli_input.c - the inputs a command names: an ARCHIVE (mapped in place, or copied from a pipe to a
 * temporary file), a list file (-X, --files-from), and which of them has standard input. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* An archive that cannot be mapped where it is (a pipe, or standard input part-way into a file)
 * is copied from in_fd's current position to an unnamed file in $TMPDIR (or /tmp) that goes
 * away with its descriptor: the index is at the end, so an archive is read from a file it can
 * seek in. Returns the copy's descriptor, or -1 with the reason in err. */
static int spool(int in_fd, char *err, size_t err_len)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) { /* a file system without O_TMPFILE: a named file, unlinked at once */
		size_t n = strlen(dir) + sizeof("/znippy-stdin-XXXXXX");
		char *name = malloc(n);
		if (name) {
			snprintf(name, n, "%s/znippy-stdin-XXXXXX", dir);
			fd = mkostemp(name, O_CLOEXEC);
			if (fd >= 0)
				unlink(name);
			free(name);
		}
	}
	if (fd < 0) {
		snprintf(err, err_len, "cannot make a temporary file in %s to hold the archive: %s",
		         dir, strerror(errno));
		return -1;
	}
	enum { BUF = 128 << 10 }; /* writes of at most 128 KiB: see docs/BENCHMARKS.md */
	char *buf = malloc(BUF);
	for (;;) {
		ssize_t got = buf ? read(in_fd, buf, BUF) : -1;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, err_len, "cannot read: %s", strerror(buf ? errno : ENOMEM));
			break;
		}
		if (got == 0) {
			free(buf);
			return fd;
		}
		if (cli_write_all(fd, buf, (size_t)got)) {
			snprintf(err, err_len,
			         "cannot copy the archive to a temporary file in %s: %s", dir,
			         strerror(errno));
			break;
		}
	}
	free(buf);
	close(fd);
	return -1;
}

/* The archive at path ("-": standard input). A regular file is mapped in place (standard input
 * only when it is at its start: otherwise the archive is what follows its position, as for tar);
 * a pipe or FIFO is spooled first. */
static zn_result open_any(const char *path, struct zn_reader **r, char *err, size_t err_len)
{
	int in = 0;
	if (strcmp(path, "-")) {
		in = open(path, O_RDONLY | O_CLOEXEC);
		if (in < 0) {
			snprintf(err, err_len, "cannot open: %s", strerror(errno));
			return errno == ENOENT ? ZN_ERR_NOT_FOUND : ZN_ERR_IO;
		}
	}
	zn_result res;
	struct stat st;
	if (fstat(in, &st)) {
		snprintf(err, err_len, "cannot read: %s", strerror(errno));
		res = ZN_ERR_IO;
	} else if (S_ISREG(st.st_mode) && (in != 0 || lseek(0, 0, SEEK_CUR) <= 0)) {
		res = zn_reader_open_fd(r, in, err, err_len);
	} else if (in == 0 && isatty(0)) {
		snprintf(err, err_len,
		         "standard input is a terminal; redirect or pipe an archive "
		         "into it");
		res = ZN_ERR_IO;
	} else if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ||
	           (in == 0 && !S_ISDIR(st.st_mode))) {
		int fd = spool(in, err, err_len);
		res = fd < 0 ? ZN_ERR_IO : zn_reader_open_fd(r, fd, err, err_len);
		if (fd >= 0)
			close(fd);
	} else {
		res = ZN_ERR_INVALID_ARG;
	}
	if (in != 0)
		close(in);
	return res;
}

static int stdin_taken; /* read by a -X - or --files-from - (cli_read_list): no ARCHIVE '-' then */

zn_result cli_open_archive(const char *path, struct zn_reader **r)
{
	char err[256] = "";
	*r = NULL;
	if (stdin_taken && !strcmp(path, "-")) {
		cli_error("standard input is the ARCHIVE: -X - cannot read it too");
		return ZN_ERR_INVALID_ARG;
	}
	zn_result res = open_any(path, r, err, sizeof(err));
	if (res == ZN_ERR_INVALID_ARG) {
		/* A directory, a device: an I/O matter, not usage. */
		cli_error("%s: not a regular file, a pipe or standard input", path);
		return ZN_ERR_IO;
	}
	if (res != ZN_OK)
		cli_error("%s: %s", path, err[0] ? err : zn_result_message(res));
	/* A missing archive is an I/O matter (exit 3), as a missing input of create is, not a
	 * path missing from an archive (exit 1). */
	return res == ZN_ERR_NOT_FOUND ? ZN_ERR_IO : res;
}

char *cli_read_list(const char *cmd, const char *name, size_t *len, int *rc)
{
	int std = !strcmp(name, "-");
	if (std && stdin_taken++) {
		*rc = cli_usage_error(cmd, "standard input ('-') given as a list twice");
		return NULL;
	}
	FILE *f = std ? stdin : fopen(name, "rb");
	if (!f) {
		cli_error("%s: cannot open: %s", name, strerror(errno));
		*rc = EXIT_SYSTEM;
		return NULL;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap = cap * 2 + 65536);
			if (!nb) {
				free(buf);
				*rc = EXIT_SYSTEM;
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	int bad = ferror(f);
	if (!std)
		fclose(f);
	if (bad) {
		cli_error("%s: read failed: %s", std ? "(standard input)" : name, strerror(errno));
		free(buf);
		*rc = EXIT_SYSTEM;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}
