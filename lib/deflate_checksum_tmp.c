/* deflate_checksum_tmp.c - byte-table CRC-32 and plain Adler-32, until zn_crc32/zn_adler32 land. */
#include "deflate_internal.h"

#include <pthread.h>

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void build_crc(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (unsigned t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t zn_deflate_crc32(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, build_crc);
	const uint8_t *p = buf;
	crc = ~crc;
	while (len >= 8) {
		uint32_t a = zn_get_le32(p) ^ crc, b = zn_get_le32(p + 4);
		crc = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^
		      crc_table[5][(a >> 16) & 0xff] ^ crc_table[4][a >> 24] ^
		      crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
		      crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
		p += 8, len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

uint32_t zn_deflate_adler32(uint32_t adler, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t a = adler & 0xffff, b = adler >> 16;
	while (len) {
		size_t n = len < 5552 ? len : 5552;
		len -= n;
		while (n--) {
			a += *p++;
			b += a;
		}
		a %= 65521;
		b %= 65521;
	}
	return (b << 16) | a;
}
