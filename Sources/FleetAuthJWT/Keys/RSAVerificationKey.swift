import Crypto
import CryptoExtras
import FleetAuthCore

/// An RSA public key that verifies RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signatures, with its key ID.
///
/// Keys under 2048 bits are refused (RFC 7518 §3.3), and so are exponents BoringSSL will not use (1, even) and
/// moduli with the ROCA fingerprint (CVE-2017-15361), as rule S3 of <doc:VerificationRules> requires.
public struct RSAVerificationKey: Sendable {
    /// The key ID: a service account's `private_key_id`, or a JWK's `kid`.
    public let keyID: String?
    let key: _RSA.Signing.PublicKey
    /// The modulus length in bytes: every RS256 signature under this key has exactly this length.
    public let modulusByteCount: Int

    init(key: _RSA.Signing.PublicKey, keyID: String?) throws(KeyError) {
        guard key.keySizeInBits >= 2048 else { throw .keyTooSmall(bits: key.keySizeInBits) }
        if let modulus = try? key.getKeyPrimitives().modulus, RSAKeyChecks.hasROCAFingerprint(modulus: modulus) {
            throw .weakKey("has the ROCA fingerprint (CVE-2017-15361) and must be replaced")
        }
        self.key = key
        self.keyID = keyID
        self.modulusByteCount = (key.keySizeInBits + 7) / 8
    }

    /// A key from a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) or `RSA PUBLIC KEY` (PKCS#1) document.
    public init(pemRepresentation pem: String, keyID: String?) throws(KeyError) {
        let parsed: _RSA.Signing.PublicKey
        do {
            parsed = try _RSA.Signing.PublicKey(unsafePEMRepresentation: pem)
        } catch {
            throw .invalidPublicKey("not a PEM-encoded RSA public key of at least 1024 bits")
        }
        try self.init(key: parsed, keyID: keyID)
    }

    /// A key from its JWK form; see ``JSONWebKey`` for what a usable JWK is.
    public init(jwk: JSONWebKey) throws(KeyError) {
        try jwk.checkUsableForRS256Verification()
        guard let n = Base64URL.decode(jwk.modulus), let e = Base64URL.decode(jwk.exponent) else {
            throw .invalidJWK(jwk.keyID, "n and e must be canonical base64url")
        }
        let parsed: _RSA.Signing.PublicKey
        do {
            parsed = try _RSA.Signing.PublicKey(n: n, e: e)
        } catch {
            if n.drop(while: { $0 == 0 }).count * 8 < 2048 {
                throw .keyTooSmall(bits: n.drop(while: { $0 == 0 }).count * 8)
            }
            throw .invalidJWK(jwk.keyID, "n and e do not form a usable RSA public key")
        }
        try self.init(key: parsed, keyID: jwk.keyID)
    }

    /// The key size in bits.
    public var keySizeInBits: Int { key.keySizeInBits }

    /// The key as a JWK: `{"kid","kty":"RSA","alg":"RS256","use":"sig","n","e"}`.
    public var jwk: JSONWebKey {
        // getKeyPrimitives() fails only for keys BoringSSL could not have parsed.
        let primitives = try! key.getKeyPrimitives()
        return JSONWebKey(
            keyID: keyID,
            modulus: Base64URL.encode(primitives.modulus.drop(while: { $0 == 0 })),
            exponent: Base64URL.encode(primitives.publicExponent.drop(while: { $0 == 0 }))
        )
    }

    /// The key as a PEM `PUBLIC KEY` document.
    public var pemRepresentation: String { key.pemRepresentation }

    /// Whether `signature` is a valid RS256 signature of `message` under this key.
    ///
    /// A signature whose length is not exactly the modulus length is refused before any RSA work
    /// (<doc:VerificationRules>, F7).
    public func isValidRS256Signature(_ signature: [UInt8], for message: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == modulusByteCount else { return false }
        var hasher = SHA256()
        hasher.update(bufferPointer: message)
        let digest = hasher.finalize()
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature),
            for: digest,
            padding: .insecurePKCS1v1_5
        )
    }

    /// Whether `signature` is a valid RS256 signature of `message` under this key.
    public func isValidRS256Signature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        message.withUnsafeBytes { isValidRS256Signature(signature, for: $0) }
    }
}
