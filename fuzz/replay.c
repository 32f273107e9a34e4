/* SPDX-License-Identifier: MIT */
/* replay.c - runs a libFuzzer target over every file of a seed corpus, as an ordinary test. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	size_t len = 0;
	uint8_t *buf = tu_read_file(path, &len);
	if (!buf) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return 1;
	}
	/* Copy into a guard-page buffer so an overread faults at once. */
	uint8_t *g = tu_guard_alloc(len);
	memcpy(g, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(g, len);
	tu_guard_free(g, len);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= replay_file(argv[i]);
			n++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char *p = tu_fmt("%s/%s", argv[i], de->d_name);
			bad |= replay_file(p);
			free(p);
			n++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", n);
	return bad || n == 0;
}
