#define _GNU_SOURCE
#include "CLibcrypto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef void EVP_PKEY;
typedef void EVP_MD;
typedef void EVP_MD_CTX;
typedef void ENGINE;
typedef void EVP_PKEY_CTX;

static struct {
    void *handle;
    EVP_PKEY *(*d2i_AutoPrivateKey)(EVP_PKEY **, const unsigned char **, long);
    void (*EVP_PKEY_free)(EVP_PKEY *);
    const EVP_MD *(*EVP_sha256)(void);
    EVP_MD_CTX *(*EVP_MD_CTX_new)(void);
    void (*EVP_MD_CTX_free)(EVP_MD_CTX *);
    int (*EVP_DigestSignInit)(EVP_MD_CTX *, EVP_PKEY_CTX **, const EVP_MD *, ENGINE *, EVP_PKEY *);
    int (*EVP_DigestSign)(EVP_MD_CTX *, unsigned char *, size_t *, const unsigned char *, size_t);
    const char *(*OpenSSL_version)(int);
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_path;
static char load_error[256];
static int load_result = -1;

#define SYMBOL(name)                                                                                           \
    do {                                                                                                       \
        *(void **)(&lib.name) = dlsym(handle, #name);                                                          \
        if (lib.name == NULL) {                                                                                \
            snprintf(load_error, sizeof load_error, "%s has no symbol %s", load_path, #name);                \
            dlclose(handle);                                                                                   \
            return;                                                                                            \
        }                                                                                                      \
    } while (0)

static void load_once(void) {
    void *handle = dlopen(load_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen failed");
        return;
    }
    SYMBOL(d2i_AutoPrivateKey);
    SYMBOL(EVP_PKEY_free);
    SYMBOL(EVP_sha256);
    SYMBOL(EVP_MD_CTX_new);
    SYMBOL(EVP_MD_CTX_free);
    SYMBOL(EVP_DigestSignInit);
    SYMBOL(EVP_DigestSign);
    SYMBOL(OpenSSL_version);
    lib.handle = handle;
    load_result = 0;
}

int clibcrypto_load(const char *path, char *error, size_t error_length) {
    load_path = path;
    pthread_once(&once, load_once);
    if (load_result != 0 && error != NULL && error_length > 0) {
        snprintf(error, error_length, "%s", load_error);
    }
    return load_result;
}

const char *clibcrypto_version(void) { return load_result == 0 ? lib.OpenSSL_version(0) : NULL; }

void *clibcrypto_private_key(const uint8_t *der, size_t length) {
    if (load_result != 0) return NULL;
    const unsigned char *cursor = der;
    return lib.d2i_AutoPrivateKey(NULL, &cursor, (long)length);
}

void clibcrypto_free_key(void *key) {
    if (load_result == 0 && key != NULL) lib.EVP_PKEY_free(key);
}

int clibcrypto_sign_sha256(void *key, const uint8_t *message, size_t message_length, uint8_t *signature,
                           size_t *signature_length) {
    if (load_result != 0 || key == NULL) return -1;
    EVP_MD_CTX *context = lib.EVP_MD_CTX_new();
    if (context == NULL) return -1;
    int result = -1;
    if (lib.EVP_DigestSignInit(context, NULL, lib.EVP_sha256(), NULL, key) == 1 &&
        lib.EVP_DigestSign(context, signature, signature_length, message, message_length) == 1) {
        result = 0;
    }
    lib.EVP_MD_CTX_free(context);
    return result;
}
