#ifndef CLIBCRYPTO_H
#define CLIBCRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// OpenSSL 3's libcrypto, opened with dlopen at run time: RSASSA-PKCS1-v1_5 with SHA-256 through its EVP interface.
/// Nothing links against OpenSSL, so a machine without it builds and runs everything (the caller falls back).

/// Opens the library at `path` (e.g. "libcrypto.so.3") once per process; later calls return the first result.
/// Returns 0 on success, else -1 with a reason in `error`.
int clibcrypto_load(const char *path, char *error, size_t error_length);

/// The library's version text, or NULL before a successful load.
const char *clibcrypto_version(void);

/// An RSA private key (an EVP_PKEY) read from DER (PKCS#1 or PKCS#8), or NULL.
void *clibcrypto_private_key(const uint8_t *der, size_t length);

/// Frees a key from clibcrypto_private_key.
void clibcrypto_free_key(void *key);

/// Signs `message` with RSASSA-PKCS1-v1_5 and SHA-256 into `signature` (`*signature_length` bytes available; set
/// to the length written). Safe to call from several threads with the same key. Returns 0, else -1.
int clibcrypto_sign_sha256(void *key, const uint8_t *message, size_t message_length, uint8_t *signature,
                           size_t *signature_length);

#endif
