import CPKCS11
import Foundation

/// A PKCS#11 module loaded into this process, once per path (modules keep process-wide state: `C_Initialize` once,
/// one login per token), and the calls FleetAuth makes on it.
///
/// The module pointer is used from any thread: modules are initialized with `CKF_OS_LOCKING_OK`, and each session is
/// used by one caller at a time (``PKCS11SessionPool``).
final class PKCS11Module: @unchecked Sendable {
    let path: String
    let handle: OpaquePointer
    /// Held while a key pair is generated: one generation at a time per module. SoftHSM2's file object store fails
    /// concurrent `C_GenerateKeyPair` calls now and then with `CKR_GENERAL_ERROR`, although it is initialized for
    /// threads (https://github.com/softhsm/SoftHSMv2/issues/573); a key is made rarely enough that the wait costs
    /// nothing elsewhere.
    let generationLock = NSLock()

    private init(path: String, handle: OpaquePointer) {
        self.path = path
        self.handle = handle
    }

    private static let registry = Registry()

    /// The module at `path`, loaded and initialized on first use.
    static func load(_ path: String) async throws(SigningError) -> PKCS11Module {
        try await registry.module(path)
    }

    private actor Registry {
        var modules: [String: PKCS11Module] = [:]

        func module(_ path: String) throws(SigningError) -> PKCS11Module {
            if let module = modules[path] { return module }
            guard FileManager.default.fileExists(atPath: path) else {
                throw .configuration("The PKCS#11 module \(path) does not exist (module-path of the PKCS#11 URI).")
            }
            var message = [CChar](repeating: 0, count: 512)
            guard let handle = cpkcs11_load(path, &message, message.count) else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw .configuration("The PKCS#11 module \(path) did not load: \(reason)")
            }
            let module = PKCS11Module(path: path, handle: handle)
            modules[path] = module
            return module
        }
    }

    /// Runs a call that may take long — a login (a PIN is stretched, and a network HSM is a round trip away), a key
    /// generation (seconds on real hardware) — on a thread of its own, so it never holds one of the few threads Swift
    /// concurrency runs every task on.
    static func offload<T: Sendable>(_ body: @escaping @Sendable () throws(SigningError) -> T)
        async throws(SigningError)
        -> T
    {
        try await onThreadOfItsOwn(body)
    }

    // MARK: Calls

    func check(_ rv: CK_RV, _ what: String) throws(SigningError) {
        guard rv != 0 else { return }
        throw Self.error(rv, what)
    }

    static func error(_ rv: CK_RV, _ what: String) -> SigningError {
        let name = Self.names[rv] ?? String(format: "CKR 0x%lX", rv)
        switch rv {
        case 0xA0, 0xA1, 0xA2:
            return .unauthenticated("\(what): the PIN was refused (\(name)).")
        case 0xA4:
            return .unauthenticated("\(what): the PIN is locked (\(name)); unlock it with the SO PIN.")
        case 0x101:
            return .unauthenticated(
                "\(what): the key needs a login; give pin-value or pin-source in the URI (\(name))."
            )
        case 0x30, 0x31, 0x32, 0xE0, 0xE1, 0x05:
            return .unavailable("\(what) failed: \(name).")
        default:
            return .configuration("\(what) failed: \(name).")
        }
    }

    private static let names: [CK_RV: String] = [
        0x05: "CKR_GENERAL_ERROR", 0x06: "CKR_FUNCTION_FAILED", 0x07: "CKR_ARGUMENTS_BAD",
        0x12: "CKR_ATTRIBUTE_TYPE_INVALID", 0x30: "CKR_DEVICE_ERROR", 0x31: "CKR_DEVICE_MEMORY",
        0x32: "CKR_DEVICE_REMOVED", 0x60: "CKR_KEY_HANDLE_INVALID", 0x63: "CKR_KEY_TYPE_INCONSISTENT",
        0x68: "CKR_KEY_FUNCTION_NOT_PERMITTED", 0x70: "CKR_MECHANISM_INVALID", 0x82: "CKR_OBJECT_HANDLE_INVALID",
        0xA0: "CKR_PIN_INCORRECT", 0xA1: "CKR_PIN_INVALID", 0xA2: "CKR_PIN_LEN_RANGE", 0xA4: "CKR_PIN_LOCKED",
        0xB3: "CKR_SESSION_HANDLE_INVALID", 0xB5: "CKR_SESSION_READ_ONLY", 0xD0: "CKR_TEMPLATE_INCOMPLETE",
        0xD1: "CKR_TEMPLATE_INCONSISTENT", 0xE0: "CKR_TOKEN_NOT_PRESENT", 0xE1: "CKR_TOKEN_NOT_RECOGNIZED",
        0x101: "CKR_USER_NOT_LOGGED_IN", 0x150: "CKR_BUFFER_TOO_SMALL",
        0x190: "CKR_CRYPTOKI_NOT_INITIALIZED",
    ]

    /// The slot whose token matches the URI's token attributes; exactly one must.
    func slot(matching uri: PKCS11URI) throws(SigningError) -> CK_SLOT_ID {
        var count: CK_ULONG = 0
        try check(cpkcs11_get_slot_list(handle, nil, &count), "Listing the slots of \(path)")
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
        try check(cpkcs11_get_slot_list(handle, &slots, &count), "Listing the slots of \(path)")
        var matches: [CK_SLOT_ID] = []
        for slot in slots.prefix(Int(count)) {
            if let wanted = uri.slotID, CK_SLOT_ID(wanted) != slot { continue }
            var info = CK_TOKEN_INFO()
            guard cpkcs11_get_token_info(handle, slot, &info) == 0 else { continue }
            func text<T>(_ field: T) -> String {
                withUnsafeBytes(of: field) { String(decoding: $0, as: UTF8.self) }
                    .trimmingCharacters(in: CharacterSet(charactersIn: " \0"))
            }
            if let token = uri.token, text(info.label) != token { continue }
            if let manufacturer = uri.manufacturer, text(info.manufacturerID) != manufacturer { continue }
            if let model = uri.model, text(info.model) != model { continue }
            if let serial = uri.serial, text(info.serialNumber) != serial { continue }
            matches.append(slot)
        }
        guard let slot = matches.first else {
            throw .configuration("No token in \(path) matches \(uri) (check token=, serial= or slot-id=).")
        }
        guard matches.count == 1 else {
            throw .configuration("\(matches.count) tokens in \(path) match \(uri): name one with token= or serial=.")
        }
        return slot
    }

    func openSession(_ slot: CK_SLOT_ID, readWrite: Bool = false) throws(SigningError) -> CK_SESSION_HANDLE {
        var session: CK_SESSION_HANDLE = 0
        try check(cpkcs11_open_session(handle, slot, readWrite ? 1 : 0, &session), "Opening a session on \(path)")
        return session
    }

    func closeSession(_ session: CK_SESSION_HANDLE) {
        _ = cpkcs11_close_session(handle, session)
    }

    /// Logs the application in (once per token: every session shares it); "already logged in" is success.
    func login(_ session: CK_SESSION_HANDLE, pin: String) throws(SigningError) {
        var bytes = Array(pin.utf8)
        let rv = cpkcs11_login(handle, session, &bytes, CK_ULONG(bytes.count))
        if rv == 0x100 { return }  // CKR_USER_ALREADY_LOGGED_IN
        try check(rv, "Logging in to the token")
    }

    /// The objects matching `attributes`, at most `limit`.
    func findObjects(_ session: CK_SESSION_HANDLE, _ attributes: [PKCS11Attribute], limit: Int = 2)
        throws(SigningError) -> [CK_OBJECT_HANDLE]
    {
        var objects = [CK_OBJECT_HANDLE](repeating: 0, count: limit)
        var found: CK_ULONG = 0
        let rv = PKCS11Attribute.withTemplate(attributes) { template, count in
            cpkcs11_find_objects(handle, session, template, count, &objects, CK_ULONG(limit), &found)
        }
        try check(rv, "Searching the token")
        return Array(objects.prefix(Int(found)))
    }

    /// One attribute's value; nil when the object does not have it or it is sensitive.
    func attribute(_ session: CK_SESSION_HANDLE, _ object: CK_OBJECT_HANDLE, _ type: CK_ATTRIBUTE_TYPE) -> [UInt8]? {
        var template = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
        guard cpkcs11_get_attribute_value(handle, session, object, &template, 1) == 0,
            template.ulValueLen != CK_ULONG.max
        else { return nil }
        var value = [UInt8](repeating: 0, count: Int(template.ulValueLen))
        let rv = value.withUnsafeMutableBytes { buffer in
            template.pValue = buffer.baseAddress
            return cpkcs11_get_attribute_value(handle, session, object, &template, 1)
        }
        return rv == 0 ? Array(value.prefix(Int(template.ulValueLen))) : nil
    }

    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `data` (`CKM_SHA256_RSA_PKCS`).
    func signSHA256RSA(_ session: CK_SESSION_HANDLE, key: CK_OBJECT_HANDLE, _ data: [UInt8], length: Int)
        throws(SigningError) -> [UInt8]
    {
        var signature = [UInt8](repeating: 0, count: length)
        var signatureLength = CK_ULONG(length)
        let rv = data.withUnsafeBufferPointer { input in
            cpkcs11_sign(
                handle,
                session,
                PKCS11Constants.sha256RSAPKCS,
                key,
                input.baseAddress,
                CK_ULONG(input.count),
                &signature,
                &signatureLength
            )
        }
        try check(rv, "Signing with the token's key")
        return Array(signature.prefix(Int(signatureLength)))
    }

    /// Generates an RSA key pair on the token; returns the private key's handle.
    func generateRSAKeyPair(
        _ session: CK_SESSION_HANDLE,
        publicTemplate: [PKCS11Attribute],
        privateTemplate: [PKCS11Attribute]
    ) throws(SigningError) -> CK_OBJECT_HANDLE {
        var publicKey: CK_OBJECT_HANDLE = 0
        var privateKey: CK_OBJECT_HANDLE = 0
        let rv = PKCS11Attribute.withTemplate(publicTemplate) { pub, pubCount in
            PKCS11Attribute.withTemplate(privateTemplate) { priv, privCount in
                cpkcs11_generate_key_pair(
                    handle,
                    session,
                    PKCS11Constants.rsaKeyPairGeneration,
                    pub,
                    pubCount,
                    priv,
                    privCount,
                    &publicKey,
                    &privateKey
                )
            }
        }
        try check(rv, "Generating an RSA key pair on the token")
        return privateKey
    }
}

/// The PKCS#11 constants FleetAuth uses (values from the standard).
enum PKCS11Constants {
    static let classAttribute: CK_ATTRIBUTE_TYPE = 0x0
    static let tokenAttribute: CK_ATTRIBUTE_TYPE = 0x1
    static let privateAttribute: CK_ATTRIBUTE_TYPE = 0x2
    static let labelAttribute: CK_ATTRIBUTE_TYPE = 0x3
    static let keyTypeAttribute: CK_ATTRIBUTE_TYPE = 0x100
    static let idAttribute: CK_ATTRIBUTE_TYPE = 0x102
    static let sensitiveAttribute: CK_ATTRIBUTE_TYPE = 0x103
    static let signAttribute: CK_ATTRIBUTE_TYPE = 0x108
    static let verifyAttribute: CK_ATTRIBUTE_TYPE = 0x10A
    static let modulusAttribute: CK_ATTRIBUTE_TYPE = 0x120
    static let modulusBitsAttribute: CK_ATTRIBUTE_TYPE = 0x121
    static let publicExponentAttribute: CK_ATTRIBUTE_TYPE = 0x122
    static let extractableAttribute: CK_ATTRIBUTE_TYPE = 0x162
    static let publicKeyClass: CK_ULONG = 2
    static let privateKeyClass: CK_ULONG = 3
    static let rsaKeyType: CK_ULONG = 0
    static let rsaKeyPairGeneration: CK_MECHANISM_TYPE = 0x0
    static let sha256RSAPKCS: CK_MECHANISM_TYPE = 0x40
}

/// An attribute of a search or creation template, with its value bytes.
struct PKCS11Attribute {
    var type: CK_ATTRIBUTE_TYPE
    var value: [UInt8]

    static func ulong(_ type: CK_ATTRIBUTE_TYPE, _ value: CK_ULONG) -> Self {
        Self(type: type, value: withUnsafeBytes(of: value) { Array($0) })
    }
    static func bool(_ type: CK_ATTRIBUTE_TYPE, _ value: Bool) -> Self { Self(type: type, value: [value ? 1 : 0]) }
    static func bytes(_ type: CK_ATTRIBUTE_TYPE, _ value: [UInt8]) -> Self { Self(type: type, value: value) }
    static func text(_ type: CK_ATTRIBUTE_TYPE, _ value: String) -> Self { Self(type: type, value: Array(value.utf8)) }

    /// Calls `body` with a C template whose value pointers stay valid during the call.
    static func withTemplate<R>(_ attributes: [Self], _ body: (UnsafeMutablePointer<CK_ATTRIBUTE>?, CK_ULONG) -> R)
        -> R
    {
        let buffers = attributes.map { attribute -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(attribute.value.count, 1), alignment: 8)
            buffer.copyBytes(from: attribute.value)
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        var template = zip(attributes, buffers).map { attribute, buffer in
            CK_ATTRIBUTE(type: attribute.type, pValue: buffer.baseAddress, ulValueLen: CK_ULONG(attribute.value.count))
        }
        return template.withUnsafeMutableBufferPointer { body($0.baseAddress, CK_ULONG($0.count)) }
    }
}
