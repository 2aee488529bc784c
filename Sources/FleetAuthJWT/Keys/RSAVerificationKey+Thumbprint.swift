import Crypto
import CryptoExtras
import FleetAuthCore

extension RSAVerificationKey {
    /// The key's RFC 7638 JWK thumbprint: the base64url SHA-256 of `{"e":…,"kty":"RSA","n":…}` (members in that
    /// order, no spaces). Used as the `kid` of a key whose ID nobody assigned (a PKCS#11 key not yet uploaded to
    /// Google).
    public var jwkThumbprint: String {
        let jwk = self.jwk
        let canonical = "{\"e\":\"\(jwk.exponent)\",\"kty\":\"RSA\",\"n\":\"\(jwk.modulus)\"}"
        return Base64URL.encode(SHA256.hash(data: Array(canonical.utf8)))
    }

    /// The key as DER `SubjectPublicKeyInfo`.
    public var subjectPublicKeyInfoDER: [UInt8] { Array(key.derRepresentation) }

    /// A key from its modulus and public exponent (big-endian bytes), as a PKCS#11 token reports them.
    public init(modulus: [UInt8], exponent: [UInt8], keyID: String?) throws(KeyError) {
        try self.init(
            jwk: JSONWebKey(
                keyID: keyID,
                modulus: Base64URL.encode(modulus.drop { $0 == 0 }),
                exponent: Base64URL.encode(exponent.drop { $0 == 0 })
            )
        )
    }
}
