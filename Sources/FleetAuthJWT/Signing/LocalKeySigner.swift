import CryptoExtras

/// Signs with the private key of a service-account key file; the header's `kid` is the key's `private_key_id`.
public struct LocalKeySigner: RS256Signer {
    /// The key that signs.
    public let key: ServiceAccountKey
    /// The key in libcrypto's form when this process signs with libcrypto, found once rather than at every
    /// signature (finding it encodes the key as DER).
    private let libcryptoKey: Libcrypto.PrivateKey?

    public init(key: ServiceAccountKey) {
        self.key = key
        self.libcryptoKey = RSABackend.current == .libcrypto ? Libcrypto.cachedKey(for: key.privateKey) : nil
    }

    public var serviceAccountEmail: String { key.clientEmail }
    public var keyID: String? { key.privateKeyID }

    public func sign(_ signingInput: [UInt8]) async throws -> [UInt8] {
        try signSynchronously(signingInput)
    }

    /// The signature, computed on the calling thread, by ``RSABackend/current`` (the same bytes either way).
    public func signSynchronously(_ signingInput: [UInt8]) throws -> [UInt8] {
        try signSynchronously(signingInput, backend: RSABackend.current)
    }

    /// The signature, computed by `backend` (swift-crypto when libcrypto cannot be used).
    public func signSynchronously(_ signingInput: [UInt8], backend: RSABackend) throws -> [UInt8] {
        if backend == .libcrypto,
            let signature = (libcryptoKey ?? Libcrypto.cachedKey(for: key.privateKey))?.signSHA256(signingInput)
        {
            return signature
        }
        return Array(try key.privateKey.signature(for: signingInput, padding: .insecurePKCS1v1_5).rawRepresentation)
    }
}
