/* SPDX-License-Identifier: MIT */
/* test_result.c - the result enum's names and messages stay in step with the list. */
#include <string.h>

#include "test_util.h"

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_result");
	CHECK(!strcmp(zn_result_name(ZN_OK), "ZN_OK"));
	CHECK(!strcmp(zn_result_name(ZN_ERR_CHECKSUM), "ZN_ERR_CHECKSUM"));
	CHECK(!strcmp(zn_result_message(ZN_ERR_CHECKSUM), "checksum mismatch"));
	CHECK(!strcmp(zn_result_name((zn_result)9999), "ZN_UNKNOWN"));
	/* Values are pinned once released. */
	CHECK_EQ_U64(ZN_ERR_NOMEM, 1);
	CHECK_EQ_U64(ZN_ERR_DAMAGED, 14);
	CHECK_EQ_U64(ZN_ERR_TRAILING_GARBAGE, 23);
	CHECK_EQ_U64(ZN_ERR_LENGTH_MISMATCH, 24);
	CHECK_EQ_U64(ZN_ERR_HEADER_CHECKSUM, 25);
	CHECK(!strcmp(zn_result_name(ZN_ERR_HEADER_CHECKSUM), "ZN_ERR_HEADER_CHECKSUM"));
	CHECK(!strcmp(zn_version(), ZN_VERSION_STRING));
	char v[32]; /* the numbers and the string agree */
	snprintf(v, sizeof(v), "%d.%d.%d", ZN_VERSION_MAJOR, ZN_VERSION_MINOR, ZN_VERSION_PATCH);
	CHECK(!strcmp(v, ZN_VERSION_STRING));
	puts("ok");
	return 0;
}
