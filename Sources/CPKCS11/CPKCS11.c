#define _GNU_SOURCE
#include "CPKCS11.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CK_RV (*fn_initialize)(void *);
typedef CK_RV (*fn_get_function_list)(void **);
typedef CK_RV (*fn_get_slot_list)(CK_BBOOL, CK_SLOT_ID *, CK_ULONG *);
typedef CK_RV (*fn_get_token_info)(CK_SLOT_ID, CK_TOKEN_INFO *);
typedef CK_RV (*fn_open_session)(CK_SLOT_ID, CK_FLAGS, void *, void *, CK_SESSION_HANDLE *);
typedef CK_RV (*fn_close_session)(CK_SESSION_HANDLE);
typedef CK_RV (*fn_login)(CK_SESSION_HANDLE, CK_USER_TYPE, const CK_BYTE *, CK_ULONG);
typedef CK_RV (*fn_get_attribute_value)(CK_SESSION_HANDLE, CK_OBJECT_HANDLE, CK_ATTRIBUTE *, CK_ULONG);
typedef CK_RV (*fn_find_objects_init)(CK_SESSION_HANDLE, CK_ATTRIBUTE *, CK_ULONG);
typedef CK_RV (*fn_find_objects)(CK_SESSION_HANDLE, CK_OBJECT_HANDLE *, CK_ULONG, CK_ULONG *);
typedef CK_RV (*fn_find_objects_final)(CK_SESSION_HANDLE);
typedef struct { CK_MECHANISM_TYPE mechanism; void *parameter; CK_ULONG parameter_length; } mechanism_t;
typedef CK_RV (*fn_sign_init)(CK_SESSION_HANDLE, mechanism_t *, CK_OBJECT_HANDLE);
typedef CK_RV (*fn_sign)(CK_SESSION_HANDLE, const CK_BYTE *, CK_ULONG, CK_BYTE *, CK_ULONG *);
typedef CK_RV (*fn_generate_key_pair)(CK_SESSION_HANDLE, mechanism_t *, CK_ATTRIBUTE *, CK_ULONG, CK_ATTRIBUTE *,
                                      CK_ULONG, CK_OBJECT_HANDLE *, CK_OBJECT_HANDLE *);

// The CK_FUNCTION_LIST: a version, then 68 function pointers in the standard's order. Only the indexes used here
// are named.
enum {
    F_INITIALIZE = 0, F_GET_FUNCTION_LIST = 3, F_GET_SLOT_LIST = 4, F_GET_TOKEN_INFO = 6, F_OPEN_SESSION = 12,
    F_CLOSE_SESSION = 13, F_LOGIN = 18, F_GET_ATTRIBUTE_VALUE = 24, F_FIND_OBJECTS_INIT = 26, F_FIND_OBJECTS = 27,
    F_FIND_OBJECTS_FINAL = 28, F_SIGN_INIT = 42, F_SIGN = 43, F_GENERATE_KEY_PAIR = 59, F_COUNT = 68
};

typedef struct {
    CK_VERSION version;
    void *functions[F_COUNT];
} function_list_t;

struct cpkcs11_module {
    void *handle;
    const function_list_t *list;
};

typedef struct {
    void *create_mutex, *destroy_mutex, *lock_mutex, *unlock_mutex;
    CK_FLAGS flags;
    void *reserved;
} initialize_args_t;

#define CKR_OK 0UL
#define CKR_CRYPTOKI_ALREADY_INITIALIZED 0x191UL
#define CKF_OS_LOCKING_OK 0x2UL
#define CKF_RW_SESSION 0x2UL
#define CKF_SERIAL_SESSION 0x4UL
#define CKU_USER 1UL

#define CALL(type, index) ((type)(m->list->functions[index]))

cpkcs11_module *cpkcs11_load(const char *path, char *error, size_t error_length) {
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(error, error_length, "%s", reason ? reason : "dlopen failed");
        return NULL;
    }
    void *symbol = dlsym(handle, "C_GetFunctionList");
    if (!symbol) {
        snprintf(error, error_length, "%s does not export C_GetFunctionList: not a PKCS#11 module", path);
        dlclose(handle);
        return NULL;
    }
    void *list = NULL;
    CK_RV rv = ((fn_get_function_list)symbol)(&list);
    if (rv != CKR_OK || !list) {
        snprintf(error, error_length, "C_GetFunctionList failed (CKR 0x%lx)", rv);
        dlclose(handle);
        return NULL;
    }
    const function_list_t *functions = (const function_list_t *)list;
    // The list's layout is checked where the dynamic linker can name its entries: the fourth is C_GetFunctionList
    // and the sixtieth C_GenerateKeyPair (possibly another library's C_GetFunctionList, when one in the process
    // exports the name — p11-kit does — so names are compared, not addresses).
    Dl_info info;
    int layout_ok = functions->version.major >= 2;
    if (layout_ok && dladdr(functions->functions[F_GET_FUNCTION_LIST], &info) && info.dli_sname)
        layout_ok = strcmp(info.dli_sname, "C_GetFunctionList") == 0;
    if (layout_ok && dladdr(functions->functions[F_GENERATE_KEY_PAIR], &info) && info.dli_sname)
        layout_ok = strstr(info.dli_sname, "GenerateKeyPair") != NULL;
    if (!layout_ok) {
        snprintf(error, error_length, "%s has a function list this loader does not understand (version %u.%u)", path,
                 functions->version.major, functions->version.minor);
        dlclose(handle);
        return NULL;
    }
    initialize_args_t args = {0};
    args.flags = CKF_OS_LOCKING_OK;
    rv = ((fn_initialize)functions->functions[F_INITIALIZE])(&args);
    if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        snprintf(error, error_length, "C_Initialize failed (CKR 0x%lx)", rv);
        dlclose(handle);
        return NULL;
    }
    cpkcs11_module *module = malloc(sizeof(cpkcs11_module));
    module->handle = handle;
    module->list = functions;
    return module;
}

CK_RV cpkcs11_get_slot_list(const cpkcs11_module *m, CK_SLOT_ID *slots, CK_ULONG *count) {
    return CALL(fn_get_slot_list, F_GET_SLOT_LIST)(1, slots, count);
}

CK_RV cpkcs11_get_token_info(const cpkcs11_module *m, CK_SLOT_ID slot, CK_TOKEN_INFO *info) {
    return CALL(fn_get_token_info, F_GET_TOKEN_INFO)(slot, info);
}

CK_RV cpkcs11_open_session(const cpkcs11_module *m, CK_SLOT_ID slot, int read_write, CK_SESSION_HANDLE *session) {
    CK_FLAGS flags = CKF_SERIAL_SESSION | (read_write ? CKF_RW_SESSION : 0);
    return CALL(fn_open_session, F_OPEN_SESSION)(slot, flags, NULL, NULL, session);
}

CK_RV cpkcs11_close_session(const cpkcs11_module *m, CK_SESSION_HANDLE session) {
    return CALL(fn_close_session, F_CLOSE_SESSION)(session);
}

CK_RV cpkcs11_login(const cpkcs11_module *m, CK_SESSION_HANDLE session, const CK_BYTE *pin, CK_ULONG pin_length) {
    return CALL(fn_login, F_LOGIN)(session, CKU_USER, pin, pin_length);
}

CK_RV cpkcs11_find_objects(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_ATTRIBUTE *template_,
                           CK_ULONG count, CK_OBJECT_HANDLE *objects, CK_ULONG max, CK_ULONG *found) {
    CK_RV rv = CALL(fn_find_objects_init, F_FIND_OBJECTS_INIT)(session, template_, count);
    if (rv != CKR_OK) return rv;
    rv = CALL(fn_find_objects, F_FIND_OBJECTS)(session, objects, max, found);
    CK_RV final = CALL(fn_find_objects_final, F_FIND_OBJECTS_FINAL)(session);
    return rv != CKR_OK ? rv : final;
}

CK_RV cpkcs11_get_attribute_value(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object,
                                  CK_ATTRIBUTE *template_, CK_ULONG count) {
    return CALL(fn_get_attribute_value, F_GET_ATTRIBUTE_VALUE)(session, object, template_, count);
}

CK_RV cpkcs11_sign(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_MECHANISM_TYPE mechanism,
                   CK_OBJECT_HANDLE key, const CK_BYTE *data, CK_ULONG data_length, CK_BYTE *signature,
                   CK_ULONG *signature_length) {
    mechanism_t mech = {mechanism, NULL, 0};
    CK_RV rv = CALL(fn_sign_init, F_SIGN_INIT)(session, &mech, key);
    if (rv != CKR_OK) return rv;
    return CALL(fn_sign, F_SIGN)(session, data, data_length, signature, signature_length);
}

CK_RV cpkcs11_generate_key_pair(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_MECHANISM_TYPE mechanism,
                                CK_ATTRIBUTE *public_template, CK_ULONG public_count,
                                CK_ATTRIBUTE *private_template, CK_ULONG private_count,
                                CK_OBJECT_HANDLE *public_key, CK_OBJECT_HANDLE *private_key) {
    mechanism_t mech = {mechanism, NULL, 0};
    return CALL(fn_generate_key_pair, F_GENERATE_KEY_PAIR)(session, &mech, public_template, public_count,
                                                          private_template, private_count, public_key, private_key);
}
