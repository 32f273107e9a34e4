/* SPDX-License-Identifier: MIT */
/* test_zstd_dict.c - dictionaries: one trained by ZDICT_trainFromBuffer (the zstd format, with
 * entropy tables and repeat offsets), raw content, dictionaries reached from far beyond a small
 * window and dropped past it, wrong and missing dictionaries, a corrupt dictionary. */
#include <zdict.h>

#include "zstd_test_util.h"

/* A log line: repetitive fields, varying values (what dictionaries are for). */
static size_t sample(struct tu_rng *g, uint8_t *p, size_t cap)
{
	static const char *lvl[] = {"INFO", "WARN", "DEBUG", "ERROR"};
	static const char *svc[] = {"auth", "billing", "search", "storage", "frontend"};
	size_t n = 0;
	int lines = 1 + (int)tu_rng_below(g, 12);
	for (int i = 0; i < lines && n + 200 < cap; i++)
		n += (size_t)snprintf((char *)p + n, cap - n,
		                      "{\"ts\":%llu,\"level\":\"%s\",\"service\":\"%s\",\"req\":"
		                      "\"%08llx\",\"latency_ms\":%u,\"msg\":\"request handled\"}\n",
		                      1700000000000ull + tu_rng_below(g, 1u << 30),
		                      lvl[tu_rng_below(g, 4)], svc[tu_rng_below(g, 5)],
		                      (unsigned long long)tu_rng_below(g, 1ull << 32),
		                      (unsigned)tu_rng_below(g, 5000));
	return n;
}

static void *train(struct tu_rng *g, size_t cap, size_t *len)
{
	const unsigned ns = 3000;
	uint8_t *samples = malloc((size_t)ns * 4096);
	size_t *sizes = malloc(ns * sizeof(size_t)), total = 0;
	CHECK(samples && sizes);
	for (unsigned i = 0; i < ns; i++) {
		sizes[i] = sample(g, samples + total, 4096);
		total += sizes[i];
	}
	void *dict = malloc(cap);
	size_t r = ZDICT_trainFromBuffer(dict, cap, samples, sizes, ns);
	CHECK(!ZDICT_isError(r));
	free(samples);
	free(sizes);
	*len = r;
	return dict;
}

static void check_dict(struct zn_zstd_decoder *d, struct tu_rng *g, const void *dict, size_t dlen,
                       const char *name)
{
	uint8_t buf[65536];
	for (int i = 0; i < 60; i++) {
		size_t n = sample(g, buf, sizeof(buf));
		if (i % 10 == 0) /* longer messages: many blocks, the dictionary out of reach */
			for (int k = 0; k < 12 && n + 4096 < sizeof(buf); k++)
				n += sample(g, buf + n, 4096);
		struct zt_params p = {.level = i % 3 == 0   ? 1
		                               : i % 3 == 1 ? 5
		                                            : 19,
		                      .checksum = i & 1,
		                      .no_size = (i >> 1) & 1,
		                      .window_log = i % 4 == 3 ? 10 : 0,
		                      .block_pieces = i % 5 == 4 ? 3 : 0,
		                      .dict = dict,
		                      .dict_len = dlen};
		size_t zlen;
		uint8_t *z = zt_compress(buf, n, &p, &zlen);
		char what[96];
		snprintf(what, sizeof(what), "%s dictionary, message %d (%zu bytes)", name, i, n);
		zt_check(d, z, zlen, buf, n, g, what);
		free(z);
	}
}

int main(int argc, char **argv)
{
	tu_init(argc, argv, "test_zstd_dict");
	struct tu_rng g;
	tu_rng_seed(&g, tu_seed);
	struct zn_zstd_decoder *d, *plain;
	CHECK_OK(zn_zstd_decoder_new(&d));
	CHECK_OK(zn_zstd_decoder_new(&plain));

	/* The zstd format. */
	size_t dlen;
	void *dict = train(&g, 16384, &dlen);
	uint32_t id = ZDICT_getDictID(dict, dlen);
	CHECK(id != 0);
	CHECK_EQ_U64(zn_zstd_dictionary_id(dict, dlen), id);
	CHECK_OK(zn_zstd_set_dictionary(d, dict, dlen));
	check_dict(d, &g, dict, dlen, "trained");
	zn_zstd_decoder_force_generic(d);
	check_dict(d, &g, dict, dlen, "trained (portable kernels)");

	/* A frame naming the dictionary: refused without it, and with another one. */
	uint8_t buf[4096], out[4096];
	size_t n = sample(&g, buf, sizeof(buf)), zlen;
	struct zt_params p = {.level = 3, .dict = dict, .dict_len = dlen};
	uint8_t *z = zt_compress(buf, n, &p, &zlen);
	struct zn_zstd_frame_info fi = {.struct_size = sizeof(fi)};
	CHECK_OK(zn_zstd_frame_scan(z, zlen, &fi));
	CHECK_EQ_U64(fi.dict_id, id);
	struct zn_zstd_info info = {.struct_size = sizeof(info)};
	CHECK(zn_zstd_decompress(plain, z, zlen, out, n, &info) == ZN_ERR_DICTIONARY);
	size_t dlen2;
	void *dict2 = train(&g, 8192, &dlen2);
	CHECK(ZDICT_getDictID(dict2, dlen2) != id);
	CHECK_OK(zn_zstd_set_dictionary(plain, dict2, dlen2));
	CHECK(zn_zstd_decompress(plain, z, zlen, out, n, &info) == ZN_ERR_DICTIONARY);
	uint8_t *so;
	size_t slen;
	CHECK(zt_stream(plain, z, zlen, &g, 100, &so, &slen) == ZN_ERR_DICTIONARY);
	free(so);

	/* A corrupt dictionary is refused and the loaded one stays. */
	uint8_t *bad = malloc(dlen);
	memcpy(bad, dict, dlen);
	memset(bad + 8, 0xff, 64); /* the Huffman table's description */
	CHECK(zn_zstd_set_dictionary(d, bad, dlen) == ZN_ERR_CORRUPT);
	CHECK_OK(zn_zstd_decompress(d, z, zlen, out, n, &info));
	CHECK(info.out_len == n && !memcmp(out, buf, n));
	/* The repeat offsets (1, 4, 8 in a trained dictionary) follow the entropy tables: each
	 * must be 1 .. the content's size. */
	static const uint8_t reps[12] = {1, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0};
	size_t at = 0;
	for (size_t k = 8; k + 12 <= dlen && !at; k++)
		if (!memcmp((uint8_t *)dict + k, reps, 12))
			at = k;
	CHECK(at != 0);
	uint32_t content = (uint32_t)(dlen - at - 12);
	memcpy(bad, dict, dlen);
	zn_put_le32(bad + at + 4, content);
	CHECK_OK(zn_zstd_set_dictionary(plain, bad, dlen));
	zn_put_le32(bad + at + 4, content + 1);
	CHECK(zn_zstd_set_dictionary(plain, bad, dlen) == ZN_ERR_CORRUPT);
	zn_put_le32(bad + at + 4, 0);
	CHECK(zn_zstd_set_dictionary(plain, bad, dlen) == ZN_ERR_CORRUPT);
	free(bad);
	free(z);

	/* Raw content: no magic, ID 0, used by frames that name no dictionary. */
	size_t rlen = 40000;
	uint8_t *raw = malloc(rlen);
	for (size_t k = 0; k < rlen;)
		k += sample(&g, raw + k, rlen - k > 300 ? 300 : 0) +
		     (rlen - k <= 300 ? rlen - k : 0);
	CHECK_EQ_U64(zn_zstd_dictionary_id(raw, rlen), 0);
	CHECK_OK(zn_zstd_set_dictionary(d, raw, rlen));
	check_dict(d, &g, raw, rlen, "raw content");
	/* Removing the dictionary: frames that needed it now reference nothing. */
	n = sample(&g, buf, sizeof(buf));
	p = (struct zt_params){.level = 3, .dict = raw, .dict_len = rlen};
	z = zt_compress(buf, n, &p, &zlen);
	CHECK_OK(zn_zstd_decompress(d, z, zlen, out, n, &info));
	CHECK_OK(zn_zstd_set_dictionary(d, NULL, 0));
	CHECK(zn_zstd_decompress(d, z, zlen, out, n, &info) == ZN_ERR_CORRUPT);
	free(z);
	free(raw);
	free(dict);
	free(dict2);
	zn_zstd_decoder_free(d);
	zn_zstd_decoder_free(plain);
	puts("ok");
	return 0;
}
