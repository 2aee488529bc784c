import CPKCS11
public import Foundation

/// Signs tokens with an RSA-2048 private key that stays inside a PKCS#11 token: an HSM, Cloud KMS through Google's
/// PKCS#11 library, a YubiHSM, AWS CloudHSM, a smart card — or SoftHSM2 on a laptop and in tests.
///
/// The module named by the URI's `module-path` is loaded at run time (nothing links against it), the token is found
/// by its attributes, the application logs in once with the URI's PIN, and the key is found by `object=` and/or
/// `id=`. It must be an RSA private key of 2048 bits that may sign. Signatures use `CKM_SHA256_RSA_PKCS`, so the
/// token hashes and pads: the bytes are the same as any RS256 implementation's. A pool of sessions (one per core
/// by default) lets concurrent mints use every core.
///
/// ```swift
/// let signer = try await PKCS11Signer(
///     uri: PKCS11URI("pkcs11:token=fleet;object=driver?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=/run/secrets/pin"),
///     serviceAccountEmail: "fleet-driver@my-project.iam.gserviceaccount.com",
///     keyID: "0123abcd…")   // the ID Google assigned when the certificate was uploaded
/// let minter = try FleetEngineTokenMinter(signer: signer)
/// ```
///
/// Without a `keyID` the `kid` is the public key's RFC 7638 JWK thumbprint
/// (``RSAVerificationKey/jwkThumbprint``), which a local emulator trusting this server's JWK set accepts; Fleet
/// Engine needs the ID Google assigned at upload.
public final class PKCS11Signer: RS256Signer {
    public let serviceAccountEmail: String
    public let keyID: String?
    /// The key's public half, read from the token, with ``keyID``.
    public let publicKey: RSAVerificationKey
    /// Where the key is (the PIN hidden in its description).
    public let uri: PKCS11URI
    /// Whether the token says the private key never leaves it: `CKA_SENSITIVE` true and `CKA_EXTRACTABLE` false
    /// (as ``generateKeyPair(uri:)`` makes keys). A key imported in the clear or made extractable is usable, but
    /// not "never held anywhere else".
    public let keyNeverLeavesToken: Bool
    private let module: PKCS11Module
    private let key: CK_OBJECT_HANDLE
    private let pool: PKCS11SessionPool

    /// Opens the token, logs in, finds and checks the key, and opens `sessions` sessions.
    ///
    /// Throws ``SigningError`` with code `configuration` for a module that does not load, no matching token, no
    /// matching key, or a key that is not an RSA-2048 private key that may sign; `unauthenticated` for a wrong or
    /// missing PIN.
    public init(
        uri: PKCS11URI,
        serviceAccountEmail: String,
        keyID: String? = nil,
        sessions: Int = ProcessInfo.processInfo.activeProcessorCount
    ) async throws(SigningError) {
        let module = try await PKCS11Module.load(uri.modulePath)
        let slot = try module.slot(matching: uri)
        let first = try module.openSession(slot)
        var handles = [first]
        do throws(SigningError) {
            if let pin = try uri.pin() {
                try await PKCS11Module.offload { () throws(SigningError) in try module.login(first, pin: pin) }
            }
            var search: [PKCS11Attribute] = [.ulong(PKCS11Constants.classAttribute, PKCS11Constants.privateKeyClass)]
            if let object = uri.object { search.append(.text(PKCS11Constants.labelAttribute, object)) }
            if let id = uri.id { search.append(.bytes(PKCS11Constants.idAttribute, id)) }
            let found = try module.findObjects(first, search)
            guard let key = found.first else {
                throw SigningError.configuration(
                    "No private key matches \(uri) in the token"
                        + (uri.pinValue == nil && uri.pinSource == nil
                            ? " (private keys are found only after a login: give a PIN)" : "")
                        + "."
                )
            }
            guard found.count == 1 else {
                throw SigningError.configuration("Several private keys match \(uri): name one with object= and id=.")
            }
            let keyType = module.attribute(first, key, PKCS11Constants.keyTypeAttribute)
            guard keyType == withUnsafeBytes(of: PKCS11Constants.rsaKeyType, { Array($0) }) else {
                throw SigningError.configuration("The key \(uri) is not an RSA key; Fleet Engine tokens need RSA-2048.")
            }
            if let canSign = module.attribute(first, key, PKCS11Constants.signAttribute), canSign != [1] {
                throw SigningError.configuration("The key \(uri) may not sign (CKA_SIGN is false).")
            }
            let anonymous = try Self.publicKey(module: module, session: first, privateKey: key, uri: uri, keyID: nil)
            let kid = keyID ?? anonymous.jwkThumbprint
            for _ in 1..<max(1, sessions) { handles.append(try module.openSession(slot)) }
            do {
                self.publicKey = try RSAVerificationKey(
                    jwk: {
                        var jwk = anonymous.jwk; jwk.keyID = kid; return jwk
                    }()
                )
            } catch {
                throw SigningError.configuration("The public half of \(uri) is not usable: \(error.message)")
            }
            self.keyID = kid
            self.keyNeverLeavesToken =
                module.attribute(first, key, PKCS11Constants.sensitiveAttribute) == [1]
                && module.attribute(first, key, PKCS11Constants.extractableAttribute) == [0]
            self.key = key
        } catch {
            handles.forEach(module.closeSession)
            throw error
        }
        self.module = module
        self.uri = uri
        self.serviceAccountEmail = serviceAccountEmail
        self.pool = PKCS11SessionPool(handles)
    }

    /// The public key: the modulus and exponent of the private key object, or of the public key object with the same
    /// label and ID. It must have 2048 bits.
    private static func publicKey(
        module: PKCS11Module,
        session: CK_SESSION_HANDLE,
        privateKey: CK_OBJECT_HANDLE,
        uri: PKCS11URI,
        keyID: String?
    ) throws(SigningError) -> RSAVerificationKey {
        var modulus = module.attribute(session, privateKey, PKCS11Constants.modulusAttribute)
        var exponent = module.attribute(session, privateKey, PKCS11Constants.publicExponentAttribute)
        if modulus == nil || exponent == nil {
            var search: [PKCS11Attribute] = [.ulong(PKCS11Constants.classAttribute, PKCS11Constants.publicKeyClass)]
            if let object = uri.object { search.append(.text(PKCS11Constants.labelAttribute, object)) }
            if let id = uri.id { search.append(.bytes(PKCS11Constants.idAttribute, id)) }
            if let publicObject = try module.findObjects(session, search).first {
                modulus = module.attribute(session, publicObject, PKCS11Constants.modulusAttribute)
                exponent = module.attribute(session, publicObject, PKCS11Constants.publicExponentAttribute)
            }
        }
        guard let modulus, let exponent else {
            throw .configuration("The token does not reveal the public half of \(uri) (no modulus and exponent).")
        }
        let bits = modulus.drop { $0 == 0 }.count * 8
        guard bits == 2048 else {
            throw .configuration("The key \(uri) has \(bits) bits; Fleet Engine tokens need an RSA-2048 key.")
        }
        do {
            return try RSAVerificationKey(modulus: modulus, exponent: exponent, keyID: keyID)
        } catch {
            throw .configuration("The public half of \(uri) is not usable: \(error.message)")
        }
    }

    public func sign(_ signingInput: [UInt8]) async throws -> [UInt8] {
        let session = await pool.acquire()
        let signature: [UInt8]
        do {
            signature = try module.signSHA256RSA(session, key: key, signingInput, length: publicKey.modulusByteCount)
        } catch {
            await pool.release(session)
            throw error
        }
        await pool.release(session)
        return signature
    }

    /// A self-signed certificate for the key, signed inside the token: ready for
    /// `gcloud iam service-accounts keys upload FILE --iam-account EMAIL`.
    public func certificate(
        commonName: String? = nil,
        notBefore: Date = Date(),
        validity: TimeInterval = 10 * 365 * 86400
    ) async throws -> SelfSignedCertificate {
        let start = Date(timeIntervalSince1970: notBefore.timeIntervalSince1970.rounded(.down))
        return try await SelfSignedCertificate.make(
            publicKey: publicKey,
            commonName: commonName ?? serviceAccountEmail,
            notBefore: start,
            notAfter: start.addingTimeInterval(validity)
        ) { tbs in try await sign(tbs) }
    }

    /// Generates an RSA-2048 key pair inside the token named by `uri`, labelled with its `object=` and with its `id=`
    /// (16 random bytes when the URI has none). The private key is sensitive and never extractable. Refuses when a
    /// private key already matches the URI. Returns the URI of the new key (with its `id=`).
    public static func generateKeyPair(uri: PKCS11URI) async throws(SigningError) -> PKCS11URI {
        let module = try await PKCS11Module.load(uri.modulePath)
        let slot = try module.slot(matching: uri)
        let session = try module.openSession(slot, readWrite: true)
        defer { module.closeSession(session) }
        guard let pin = try uri.pin() else {
            throw .configuration("Creating a key needs a PIN: give pin-value or pin-source in \(uri).")
        }
        try await PKCS11Module.offload { () throws(SigningError) in try module.login(session, pin: pin) }
        var search: [PKCS11Attribute] = [.ulong(PKCS11Constants.classAttribute, PKCS11Constants.privateKeyClass)]
        if let object = uri.object { search.append(.text(PKCS11Constants.labelAttribute, object)) }
        if let id = uri.id { search.append(.bytes(PKCS11Constants.idAttribute, id)) }
        guard try module.findObjects(session, search).isEmpty else {
            throw .configuration("A private key matching \(uri) already exists; it was left as it is.")
        }
        let id = uri.id ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        var common: [PKCS11Attribute] = [
            .bool(PKCS11Constants.tokenAttribute, true), .bytes(PKCS11Constants.idAttribute, id),
        ]
        if let object = uri.object { common.append(.text(PKCS11Constants.labelAttribute, object)) }
        let publicTemplate =
            common + [
                .bool(PKCS11Constants.verifyAttribute, true),
                .ulong(PKCS11Constants.modulusBitsAttribute, 2048),
                .bytes(PKCS11Constants.publicExponentAttribute, [0x01, 0x00, 0x01]),
            ]
        let privateTemplate =
            common + [
                .bool(PKCS11Constants.privateAttribute, true), .bool(PKCS11Constants.sensitiveAttribute, true),
                .bool(PKCS11Constants.extractableAttribute, false), .bool(PKCS11Constants.signAttribute, true),
            ]
        _ = try await PKCS11Module.offload { () throws(SigningError) in
            module.generationLock.lock()
            defer { module.generationLock.unlock() }
            return try module.generateRSAKeyPair(
                session,
                publicTemplate: publicTemplate,
                privateTemplate: privateTemplate
            )
        }
        var created = uri
        created.id = id
        return created
    }
}

/// The signer's sessions: each used by one signature at a time; callers wait for a free one.
actor PKCS11SessionPool {
    private var free: [CK_SESSION_HANDLE]
    private var waiters: [CheckedContinuation<CK_SESSION_HANDLE, Never>] = []

    init(_ sessions: [CK_SESSION_HANDLE]) {
        free = sessions
    }

    func acquire() async -> CK_SESSION_HANDLE {
        if let session = free.popLast() { return session }
        return await withCheckedContinuation { waiters.append($0) }
    }

    func release(_ session: CK_SESSION_HANDLE) {
        if waiters.isEmpty {
            free.append(session)
        } else {
            waiters.removeFirst().resume(returning: session)
        }
    }
}
