/* SPDX-License-Identifier: MIT */
/* fuzz_inflate_zlib.c - libFuzzer target: zn_inflate() on zlib input, zlib as referee. */
#define FUZZ_FORMAT ZN_FORMAT_ZLIB
#include "inflate_fuzz_check.h"
