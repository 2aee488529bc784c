public import FleetAuthCore

/// Why a token was refused, with a stable reason code.
///
/// ``code`` is safe for logs and metric labels; ``message`` explains the rule for a developer and never
/// contains the token. Compare codes: `#expect(error?.code == .expired)`.
///
/// Every reason is a token problem (HTTP 401 `UNAUTHENTICATED`) except ``missingAuthorization``, which Fleet Engine
/// answers with 403 `PERMISSION_DENIED` "JWT does not contain any scopes." (see ``isPermissionDenied``).
///
/// | reason | rule |
/// |---|---|
/// | `token_too_large` | longer than the policy's limit, checked before any decoding |
/// | `malformed_token` | not three non-empty segments of `A–Z a–z 0–9 - _` |
/// | `invalid_base64url` | a segment that is not canonical unpadded base64url |
/// | `invalid_json` | header or payload is not a strict UTF-8 JSON object |
/// | `duplicate_json_key` | a member name appears twice in one object, at any depth |
/// | `unsupported_algorithm` | `alg` is anything but the string `RS256` (or, for ID tokens, `ES256`) |
/// | `invalid_type` | `typ` present and not `JWT` |
/// | `untrusted_key_reference` | `jwk`, `jku`, `x5u`, `x5c`, `x5t` or `x5t#S256` in the header |
/// | `critical_header` | `crit` in the header |
/// | `forbidden_header` | `cty`, `b64`, or a JWE parameter in the header |
/// | `invalid_kid` | `kid` not a printable-ASCII string of 1–256 characters |
/// | `invalid_issuer` | `iss` missing, not a string, or not a plausible email |
/// | `subject_mismatch` | `sub` missing or different from `iss` |
/// | `unknown_issuer` | no trusted service account has this email |
/// | `unknown_kid` | the issuer has no key with this `kid` |
/// | `invalid_audience` | `aud` not exactly the expected string |
/// | `invalid_subject` | (ID tokens) `sub` missing, not a string, or not 1–255 printable characters |
/// | `invalid_azp` | (ID tokens) several audiences and `azp` missing or not the configured audience |
/// | `invalid_issued_at` | `iat` missing, not an integer, or out of range |
/// | `issued_in_future` | `iat` more than the allowed skew ahead of now |
/// | `invalid_expiration` | `exp` missing, not an integer, or out of range |
/// | `expired` | now ≥ `exp` |
/// | `expiration_too_far` | `exp` more than one hour (plus leeway) ahead of now |
/// | `invalid_lifetime` | `exp − iat` above one hour, or `exp ≤ iat` |
/// | `invalid_not_before` | `nbf` present and not an integer in range |
/// | `not_yet_valid` | `nbf` more than the allowed skew ahead of now |
/// | `invalid_authorization` | `authorization` not an object of known claims with valid IDs |
/// | `invalid_signature` | the RS256 signature does not verify (or has the wrong length) |
/// | `missing_authorization` | a valid token with no `authorization` claim |
public struct TokenVerificationError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let tokenTooLarge = Code("token_too_large")
        public static let malformedToken = Code("malformed_token")
        public static let invalidBase64URL = Code("invalid_base64url")
        public static let invalidJSON = Code("invalid_json")
        public static let duplicateJSONKey = Code("duplicate_json_key")
        public static let unsupportedAlgorithm = Code("unsupported_algorithm")
        public static let invalidType = Code("invalid_type")
        public static let untrustedKeyReference = Code("untrusted_key_reference")
        public static let criticalHeader = Code("critical_header")
        public static let forbiddenHeader = Code("forbidden_header")
        public static let invalidKeyID = Code("invalid_kid")
        public static let invalidIssuer = Code("invalid_issuer")
        public static let subjectMismatch = Code("subject_mismatch")
        public static let unknownIssuer = Code("unknown_issuer")
        public static let unknownKeyID = Code("unknown_kid")
        public static let invalidAudience = Code("invalid_audience")
        public static let invalidSubject = Code("invalid_subject")
        public static let invalidAuthorizedParty = Code("invalid_azp")
        public static let invalidIssuedAt = Code("invalid_issued_at")
        public static let issuedInFuture = Code("issued_in_future")
        public static let invalidExpiration = Code("invalid_expiration")
        public static let expired = Code("expired")
        public static let expirationTooFar = Code("expiration_too_far")
        public static let invalidLifetime = Code("invalid_lifetime")
        public static let invalidNotBefore = Code("invalid_not_before")
        public static let notYetValid = Code("not_yet_valid")
        public static let invalidAuthorization = Code("invalid_authorization")
        public static let invalidSignature = Code("invalid_signature")
        public static let missingAuthorization = Code("missing_authorization")

        /// Every code, for documentation and metric pre-registration.
        public static let allCases: [Code] = [
            .tokenTooLarge, .malformedToken, .invalidBase64URL, .invalidJSON, .duplicateJSONKey, .unsupportedAlgorithm,
            .invalidType, .untrustedKeyReference, .criticalHeader, .forbiddenHeader, .invalidKeyID, .invalidIssuer,
            .subjectMismatch, .unknownIssuer, .unknownKeyID, .invalidAudience, .invalidSubject, .invalidAuthorizedParty,
            .invalidIssuedAt, .issuedInFuture, .invalidExpiration, .expired, .expirationTooFar, .invalidLifetime,
            .invalidNotBefore, .notYetValid, .invalidAuthorization, .invalidSignature, .missingAuthorization,
        ]
    }

    /// What went wrong.
    public let code: Code
    /// What rule the token broke, for developers. Never contains the token.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// `true` when Fleet Engine answers 403 `PERMISSION_DENIED` rather than 401 `UNAUTHENTICATED`.
    public var isPermissionDenied: Bool { code == .missingAuthorization }

    public static let tokenTooLarge = Self(.tokenTooLarge, "the token is too large")
    public static let malformedToken = Self(.malformedToken, "not a compact JWS")
    public static let invalidBase64URL = Self(.invalidBase64URL, "a segment is not canonical base64url")
    public static let invalidJSON = Self(.invalidJSON, "the header or payload is not a strict JSON object")
    public static let duplicateJSONKey = Self(.duplicateJSONKey, "a JSON member name appears twice")
    public static let unsupportedAlgorithm = Self(.unsupportedAlgorithm, "only RS256 is accepted")
    public static let invalidType = Self(.invalidType, "typ must be JWT")
    public static let untrustedKeyReference = Self(.untrustedKeyReference, "the header names or embeds a key")
    public static let criticalHeader = Self(.criticalHeader, "crit is not supported")
    public static let forbiddenHeader = Self(.forbiddenHeader, "the header has a forbidden parameter")
    public static let invalidKeyID = Self(.invalidKeyID, "invalid kid")
    public static let invalidIssuer = Self(.invalidIssuer, "invalid iss")
    public static let subjectMismatch = Self(.subjectMismatch, "sub must equal iss")
    public static let unknownIssuer = Self(.unknownIssuer, "the issuer is not a trusted service account")
    public static let unknownKeyID = Self(.unknownKeyID, "the issuer has no key with this kid")
    public static let invalidAudience = Self(.invalidAudience, "wrong aud")
    public static let invalidSubject = Self(.invalidSubject, "invalid sub")
    public static let invalidAuthorizedParty = Self(.invalidAuthorizedParty, "azp is not the expected client")
    public static let invalidIssuedAt = Self(.invalidIssuedAt, "invalid iat")
    public static let issuedInFuture = Self(.issuedInFuture, "iat is in the future")
    public static let invalidExpiration = Self(.invalidExpiration, "invalid exp")
    public static let expired = Self(.expired, "the token has expired")
    public static let expirationTooFar = Self(.expirationTooFar, "exp is more than one hour ahead")
    public static let invalidLifetime = Self(.invalidLifetime, "exp − iat must be 1 to 3600 seconds")
    public static let invalidNotBefore = Self(.invalidNotBefore, "invalid nbf")
    public static let notYetValid = Self(.notYetValid, "the token is not valid yet")
    public static let invalidAuthorization = Self(.invalidAuthorization, "invalid authorization claim")
    public static let invalidSignature = Self(.invalidSignature, "the signature does not verify")
    public static let missingAuthorization = Self(.missingAuthorization, "JWT does not contain any scopes.")

    static func tokenTooLarge(_ size: Int, limit: Int) -> Self {
        Self(.tokenTooLarge, "the token is \(size) bytes; the limit is \(limit)")
    }
    static func malformedToken(_ detail: String) -> Self { Self(.malformedToken, detail) }
    static func invalidBase64URL(_ detail: String) -> Self { Self(.invalidBase64URL, detail) }
    static func invalidJSON(_ part: String, _ error: JSONParseErrorDescription) -> Self {
        Self(.invalidJSON, "the \(part) is not a strict JSON object: \(error)")
    }
    static func duplicateJSONKey(_ part: String, _ error: JSONParseErrorDescription) -> Self {
        Self(.duplicateJSONKey, "the \(part) has a duplicate member name: \(error)")
    }
    static func unsupportedAlgorithm(_ found: String, allowed: [String] = ["RS256"]) -> Self {
        Self(
            .unsupportedAlgorithm,
            "alg is \(found); only \(allowed.map { "\"\($0)\"" }.joined(separator: " or ")) is accepted"
        )
    }
    static func invalidType(_ found: String) -> Self { Self(.invalidType, "typ is \(found); only \"JWT\" is accepted") }
    static func untrustedKeyReference(_ name: String) -> Self {
        Self(.untrustedKeyReference, "the header has \"\(name)\"; keys come only from the trust configuration")
    }
    static func forbiddenHeader(_ name: String) -> Self {
        Self(.forbiddenHeader, "the header has \"\(name)\", which a Fleet Engine JWT never carries")
    }
    static func invalidKeyID(_ detail: String) -> Self { Self(.invalidKeyID, "kid \(detail)") }
    static func invalidIssuer(_ detail: String) -> Self { Self(.invalidIssuer, "iss \(detail)") }
    static func subjectMismatch(_ detail: String) -> Self { Self(.subjectMismatch, detail) }
    static func unknownIssuer(_ issuer: String) -> Self {
        Self(.unknownIssuer, "iss \(quoted(issuer)) is not a trusted service account")
    }
    static func unknownKeyID(_ kid: String) -> Self {
        Self(.unknownKeyID, "the issuer has no key with kid \(quoted(kid))")
    }
    static func invalidAudience(_ detail: String) -> Self { Self(.invalidAudience, detail) }
    static func invalidSubject(_ detail: String) -> Self { Self(.invalidSubject, "sub \(detail)") }
    static func invalidAuthorizedParty(_ detail: String) -> Self { Self(.invalidAuthorizedParty, detail) }
    static func invalidIssuedAt(_ detail: String) -> Self { Self(.invalidIssuedAt, "iat \(detail)") }
    static func issuedInFuture(seconds: Int64, skew: Int64) -> Self {
        Self(.issuedInFuture, "iat is \(seconds) s in the future; at most \(skew) s of clock skew is allowed")
    }
    static func invalidExpiration(_ detail: String) -> Self { Self(.invalidExpiration, "exp \(detail)") }
    static func expired(secondsAgo: Int64) -> Self {
        Self(.expired, "the token expired \(secondsAgo) s ago (exp is not after now)")
    }
    static func expirationTooFar(seconds: Int64, limit: Int64) -> Self {
        Self(.expirationTooFar, "exp is \(seconds) s ahead; Fleet Engine refuses more than \(limit) s")
    }
    static func invalidLifetime(_ lifetime: Int64, limit: Int64) -> Self {
        Self(.invalidLifetime, "exp − iat is \(lifetime) s; it must be 1 to \(limit) s")
    }
    static func invalidNotBefore(_ detail: String) -> Self { Self(.invalidNotBefore, "nbf \(detail)") }
    static func notYetValid(seconds: Int64) -> Self { Self(.notYetValid, "nbf is \(seconds) s in the future") }
    static func invalidAuthorization(_ detail: String) -> Self { Self(.invalidAuthorization, detail) }

    /// A claim value for a message: quoted, at most 64 characters, control characters escaped.
    static func quoted(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars.prefix(64) {
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\"" || scalar == "\\" {
                result += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result + (value.unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}

typealias JSONParseErrorDescription = String

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
