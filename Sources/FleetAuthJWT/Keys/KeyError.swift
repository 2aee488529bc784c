/// A problem with a public key or key set. Messages name the key and the problem, never key material.
///
/// Equality compares the code only.
public struct KeyError: Error, Hashable, CustomStringConvertible {
    private enum Code: String {
        case keyTooSmall = "key_too_small"
        case invalidPublicKey = "invalid_public_key"
        case invalidJWK = "invalid_jwk"
        case invalidJWKSet = "invalid_jwk_set"
        case weakKey = "weak_key"
    }

    private let code: Code
    /// A human-readable explanation.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A stable short code.
    public var shortDescription: String { code.rawValue }
    public var description: String { message }
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static let keyTooSmall = Self(.keyTooSmall, "RSA keys must have at least 2048 bits")
    public static let invalidPublicKey = Self(.invalidPublicKey, "not a usable RSA public key")
    public static let invalidJWK = Self(.invalidJWK, "not a usable RS256 JWK")
    public static let invalidJWKSet = Self(.invalidJWKSet, "not a usable JWK set")
    public static let weakKey = Self(.weakKey, "the RSA key is known to be weak")

    static func keyTooSmall(bits: Int) -> Self {
        Self(.keyTooSmall, "the RSA key has \(bits) bits; at least 2048 are required")
    }
    static func invalidPublicKey(_ problem: String) -> Self { Self(.invalidPublicKey, "public key: \(problem)") }
    static func invalidJWK(_ kid: String?, _ problem: String) -> Self {
        Self(.invalidJWK, "JWK \(kid.map { "\"\($0.prefix(64))\"" } ?? "without kid") \(problem)")
    }
    static func invalidJWKSet(_ problem: String) -> Self { Self(.invalidJWKSet, "JWK set \(problem)") }
    static func weakKey(_ problem: String) -> Self { Self(.weakKey, "the RSA key \(problem)") }
}
