/* SPDX-License-Identifier: MIT */
/* fuzz_inflate_raw.c - libFuzzer target: zn_inflate() on raw input, zlib as referee. */
#define FUZZ_FORMAT ZN_FORMAT_RAW
#include "inflate_fuzz_check.h"
