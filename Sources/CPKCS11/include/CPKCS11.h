// The slice of the PKCS#11 (Cryptoki) v2.40 interface FleetAuth uses, declared from the OASIS specification, and a
// loader that opens a module at run time (dlopen), so nothing links against a PKCS#11 library at build time.
//
// Unix ABI: CK_ULONG is `unsigned long`, structures are not packed. The function list's order is the standard's;
// cpkcs11_load checks it by comparing the list's C_GetFunctionList entry with the module's exported symbol.
#ifndef CPKCS11_H
#define CPKCS11_H

#include <stddef.h>

typedef unsigned char CK_BYTE;
typedef unsigned char CK_BBOOL;
typedef unsigned long CK_ULONG;
typedef CK_ULONG CK_RV;
typedef CK_ULONG CK_FLAGS;
typedef CK_ULONG CK_SLOT_ID;
typedef CK_ULONG CK_SESSION_HANDLE;
typedef CK_ULONG CK_OBJECT_HANDLE;
typedef CK_ULONG CK_ATTRIBUTE_TYPE;
typedef CK_ULONG CK_MECHANISM_TYPE;
typedef CK_ULONG CK_USER_TYPE;

typedef struct CK_VERSION {
    CK_BYTE major;
    CK_BYTE minor;
} CK_VERSION;

typedef struct CK_TOKEN_INFO {
    CK_BYTE label[32];
    CK_BYTE manufacturerID[32];
    CK_BYTE model[16];
    CK_BYTE serialNumber[16];
    CK_FLAGS flags;
    CK_ULONG ulMaxSessionCount;
    CK_ULONG ulSessionCount;
    CK_ULONG ulMaxRwSessionCount;
    CK_ULONG ulRwSessionCount;
    CK_ULONG ulMaxPinLen;
    CK_ULONG ulMinPinLen;
    CK_ULONG ulTotalPublicMemory;
    CK_ULONG ulFreePublicMemory;
    CK_ULONG ulTotalPrivateMemory;
    CK_ULONG ulFreePrivateMemory;
    CK_VERSION hardwareVersion;
    CK_VERSION firmwareVersion;
    CK_BYTE utcTime[16];
} CK_TOKEN_INFO;

typedef struct CK_ATTRIBUTE {
    CK_ATTRIBUTE_TYPE type;
    void *pValue;
    CK_ULONG ulValueLen;
} CK_ATTRIBUTE;

/// An opaque loaded module: its dlopen handle and function list.
typedef struct cpkcs11_module cpkcs11_module;

/// Opens the module at `path`, checks its function list and initializes it for use from several threads (OS
/// locking). Returns NULL and writes a message to `error` on failure. A module already initialized in this process
/// is fine.
cpkcs11_module *cpkcs11_load(const char *path, char *error, size_t error_length);

CK_RV cpkcs11_get_slot_list(const cpkcs11_module *m, CK_SLOT_ID *slots, CK_ULONG *count);
CK_RV cpkcs11_get_token_info(const cpkcs11_module *m, CK_SLOT_ID slot, CK_TOKEN_INFO *info);
CK_RV cpkcs11_open_session(const cpkcs11_module *m, CK_SLOT_ID slot, int read_write, CK_SESSION_HANDLE *session);
CK_RV cpkcs11_close_session(const cpkcs11_module *m, CK_SESSION_HANDLE session);
CK_RV cpkcs11_login(const cpkcs11_module *m, CK_SESSION_HANDLE session, const CK_BYTE *pin, CK_ULONG pin_length);
/// Finds up to `max` objects matching `template`.
CK_RV cpkcs11_find_objects(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_ATTRIBUTE *template_,
                           CK_ULONG count, CK_OBJECT_HANDLE *objects, CK_ULONG max, CK_ULONG *found);
CK_RV cpkcs11_get_attribute_value(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object,
                                  CK_ATTRIBUTE *template_, CK_ULONG count);
/// C_SignInit and C_Sign with `mechanism` (no parameter); `signature_length` is the buffer's size in, the
/// signature's out.
CK_RV cpkcs11_sign(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_MECHANISM_TYPE mechanism,
                   CK_OBJECT_HANDLE key, const CK_BYTE *data, CK_ULONG data_length, CK_BYTE *signature,
                   CK_ULONG *signature_length);
/// C_GenerateKeyPair with `mechanism` (no parameter).
CK_RV cpkcs11_generate_key_pair(const cpkcs11_module *m, CK_SESSION_HANDLE session, CK_MECHANISM_TYPE mechanism,
                                CK_ATTRIBUTE *public_template, CK_ULONG public_count,
                                CK_ATTRIBUTE *private_template, CK_ULONG private_count,
                                CK_OBJECT_HANDLE *public_key, CK_OBJECT_HANDLE *private_key);

#endif
