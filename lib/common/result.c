/* SPDX-License-Identifier: MIT */
/* result.c - names and messages of the library's single result enum. */
#include "common.h"

const char *zn_result_name(zn_result r)
{
	switch (r) {
#define ZN_RESULT_NAME_(name, value, msg)                                                          \
	case name:                                                                                 \
		return #name;
		ZN_RESULT_LIST(ZN_RESULT_NAME_)
#undef ZN_RESULT_NAME_
	}
	return "ZN_UNKNOWN";
}

const char *zn_result_message(zn_result r)
{
	switch (r) {
#define ZN_RESULT_MSG_(name, value, msg)                                                           \
	case name:                                                                                 \
		return msg;
		ZN_RESULT_LIST(ZN_RESULT_MSG_)
#undef ZN_RESULT_MSG_
	}
	return "unknown error";
}

const char *zn_version(void)
{
	return ZN_VERSION_STRING;
}
