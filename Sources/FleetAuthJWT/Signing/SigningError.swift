public import FleetAuthCore

/// A token that could not be signed: the signer refused, could not be reached, or answered something unusable.
///
/// Messages name the account, the endpoint or the PKCS#11 object and the problem; never a token, a key or a PIN.
///
/// | code | meaning | ``isTransient`` |
/// |---|---|---|
/// | `permission_denied` | the signer refused (IAM 403: the caller lacks `iam.serviceAccounts.signJwt`; a PKCS#11 token refused the key) | no |
/// | `unauthenticated` | no usable credentials (Application Default Credentials missing or refused, a wrong PIN) | no |
/// | `unavailable` | the signer could not be reached, timed out, or kept answering 429 / 5xx | yes |
/// | `invalid_response` | the signer answered something that is not a usable token or signature | no |
/// | `claims_mismatch` | a whole-token signer answered a token whose header or claims differ from what was sent | no |
/// | `configuration` | the signer is configured wrongly (a malformed PKCS#11 URI, a module that does not load, a missing or unusable key object) | no |
public struct SigningError: CodedError {
    /// A stable code, safe for metric labels.
    public struct Code: ErrorCode {
        /// The code's text, such as `permission_denied`.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let permissionDenied = Code("permission_denied")
        public static let unauthenticated = Code("unauthenticated")
        public static let unavailable = Code("unavailable")
        public static let invalidResponse = Code("invalid_response")
        public static let claimsMismatch = Code("claims_mismatch")
        public static let configuration = Code("configuration")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether trying again later may succeed (the signer was unreachable or overloaded).
    public var isTransient: Bool { code == .unavailable }

    public static func permissionDenied(_ message: String) -> Self { Self(.permissionDenied, message) }
    public static func unauthenticated(_ message: String) -> Self { Self(.unauthenticated, message) }
    public static func unavailable(_ message: String) -> Self { Self(.unavailable, message) }
    public static func invalidResponse(_ message: String) -> Self { Self(.invalidResponse, message) }
    public static func claimsMismatch(_ message: String) -> Self { Self(.claimsMismatch, message) }
    public static func configuration(_ message: String) -> Self { Self(.configuration, message) }
}
