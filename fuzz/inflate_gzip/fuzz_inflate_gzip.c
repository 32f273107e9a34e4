/* SPDX-License-Identifier: MIT */
/* fuzz_inflate_gzip.c - libFuzzer target: zn_inflate() on gzip input, zlib as referee. */
#define FUZZ_FORMAT ZN_FORMAT_GZIP
#include "inflate_fuzz_check.h"
