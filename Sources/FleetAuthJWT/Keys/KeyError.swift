public import FleetAuthCore

/// A problem with a public key or key set. Messages name the key and the problem, never key material.
public struct KeyError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let keyTooSmall = Code("key_too_small")
        public static let invalidPublicKey = Code("invalid_public_key")
        public static let invalidJWK = Code("invalid_jwk")
        public static let invalidJWKSet = Code("invalid_jwk_set")
        public static let weakKey = Code("weak_key")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

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
