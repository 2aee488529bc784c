import Crypto
import FleetAuthCore

/// A P-256 public key that verifies ES256 (ECDSA with SHA-256) signatures, with its key ID: how some OpenID
/// Providers sign ID tokens.
public struct ES256VerificationKey: Sendable {
    /// The JWK's `kid`.
    public let keyID: String?
    let key: P256.Signing.PublicKey

    /// A key from its JWK form (`kty` `EC`, `crv` `P-256`, 32-byte `x` and `y` that name a point on the curve).
    public init(jwk: JSONWebKey) throws(KeyError) {
        try jwk.checkUsableForES256Verification()
        guard let x = jwk.x.flatMap(Base64URL.decode), let y = jwk.y.flatMap(Base64URL.decode), x.count == 32,
            y.count == 32
        else { throw .invalidJWK(jwk.keyID, "x and y must be 32 bytes of canonical base64url each") }
        do {
            key = try P256.Signing.PublicKey(rawRepresentation: x + y)
        } catch {
            throw .invalidJWK(jwk.keyID, "x and y are not a point on P-256")
        }
        keyID = jwk.keyID
    }

    /// The key as a JWK: `{"kid","kty":"EC","alg":"ES256","use":"sig","crv":"P-256","x","y"}`.
    public var jwk: JSONWebKey {
        let raw = Array(key.rawRepresentation)
        return JSONWebKey(keyID: keyID, x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
    }

    /// Whether `signature` (JWS form: `r ‖ s`, 64 bytes) is a valid ES256 signature of `message`.
    public func isValidES256Signature(_ signature: [UInt8], for message: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(parsed, for: SHA256.hash(data: message))
    }
}

/// A key that verifies JWS signatures of one algorithm: RS256 (``RSAVerificationKey``) or ES256
/// (``ES256VerificationKey``). An OpenID Provider's JWK set may hold both.
public enum SignatureVerificationKey: Sendable {
    case rs256(RSAVerificationKey)
    case es256(ES256VerificationKey)

    /// A key from a JWK: `kty` RSA → RS256, `kty` EC → ES256; anything else is refused.
    public init(jwk: JSONWebKey) throws(KeyError) {
        switch jwk.keyType {
        case "RSA": self = .rs256(try RSAVerificationKey(jwk: jwk))
        case "EC": self = .es256(try ES256VerificationKey(jwk: jwk))
        default: throw .invalidJWK(jwk.keyID, "has kty \"\(jwk.keyType)\"; only RSA (RS256) and EC (ES256) keys verify")
        }
    }

    /// The JWK's `kid`.
    public var keyID: String? {
        switch self {
        case .rs256(let key): key.keyID
        case .es256(let key): key.keyID
        }
    }

    /// The one `alg` this key verifies.
    public var algorithm: String {
        switch self {
        case .rs256: "RS256"
        case .es256: "ES256"
        }
    }

    /// Whether `signature` is valid for `message` under this key with `algorithm`; false when `algorithm` is not
    /// this key's (an RSA key never verifies an ES256 token, nor the reverse).
    public func isValidSignature(
        _ signature: [UInt8],
        algorithm: String,
        for message: UnsafeRawBufferPointer
    ) -> Bool {
        switch self {
        case .rs256(let key): algorithm == "RS256" && key.isValidRS256Signature(signature, for: message)
        case .es256(let key): algorithm == "ES256" && key.isValidES256Signature(signature, for: message)
        }
    }
}
