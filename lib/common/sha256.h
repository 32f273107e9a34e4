/* SPDX-License-Identifier: MIT */
/* sha256.h - SHA-256 from OpenSSL libcrypto through its direct (non-EVP) interface.
 *
 * EVP_Digest costs a context allocation and several indirect calls per digest, which shows when
 * hashing 100,000 small files; the direct SHA256_* functions are deprecated in OpenSSL 3.0 but
 * still shipped, and run the same SHA-NI / AVX2 code. */
#ifndef ZN_SHA256_H
#define ZN_SHA256_H
#ifndef OPENSSL_SUPPRESS_DEPRECATED
#define OPENSSL_SUPPRESS_DEPRECATED
#endif
#include <openssl/sha.h>

/* One-shot digest. OpenSSL 3's SHA256() goes through EVP_Q_digest, which fetches the algorithm
 * and allocates a context on every call; the direct functions do neither. */
static inline void zn_sha256(const void *data, size_t len, unsigned char out[32])
{
	SHA256_CTX c;
	SHA256_Init(&c);
	SHA256_Update(&c, data, len);
	SHA256_Final(out, &c);
}
#endif
