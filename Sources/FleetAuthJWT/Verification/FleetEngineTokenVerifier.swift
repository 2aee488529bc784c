public import FleetAuthCore
public import Foundation

/// The strict verifier of Fleet Engine JWTs: the checks the emulator applies to every call, and
/// `fleetauth token verify` applies to any token.
///
/// A token is valid only if it passes **every** rule below; the first rule it breaks is reported as a
/// ``TokenVerificationError`` with a stable reason code. Cheap checks come first, so a flood of bad tokens costs
/// no RSA work (<doc:VerificationRules>, D3):
///
/// 1. **Size** — at most ``Policy/maximumTokenLength`` bytes (8 KiB), before any base64, JSON or RSA work.
/// 2. **Form** — three non-empty segments of canonical base64url; header and payload strict UTF-8 JSON objects
///    (no duplicate names anywhere, no BOM, RFC 8259 grammar), read by one parser (`StrictJSONParser`) so what
///    is verified is what is authorized.
/// 3. **Header** — `alg` exactly `RS256`; `typ` absent or `JWT`; no key references (`jwk` `jku` `x5u` `x5c`
///    `x5t`), no `crit`, `cty`, `b64` or JWE parameters (see `JWSHeaderPolicy`).
/// 4. **Issuer** — `iss` a string naming a trusted service account; `sub` equal to `iss`; `kid`, when present,
///    one of *that* account's keys.
/// 5. **Audience** — `aud` a single string equal to ``Policy/audience`` (exact, trailing slash included). An array
///    is refused even if it holds the audience: Fleet Engine documents `aud` as one string.
/// 6. **Time** (whole seconds; `now` is floored) —
///    - `iat` an integer, not more than ``Policy/clockSkew`` (600 s) ahead of now;
///    - `exp` an integer, after now (`now == exp` is expired; no leeway on expiry), and not more than
///      ``Policy/maximumTimeToExpiry`` + ``Policy/expiryLeeway`` (3600 + 60 s) ahead of now;
///    - `exp − iat` from 1 to ``Policy/maximumLifetime`` (3600 s);
///    - `nbf`, when present, an integer not more than the clock skew ahead of now.
///
///    Times must be JSON integers in 0...253402300799: Fleet Engine documents integer seconds, and Google's JWT
///    verifiers refuse fractions. An old `iat` is bounded by the lifetime rule, not by the skew: a token may be
///    used for its whole hour, as the SDKs do.
/// 7. **Authorization shape** — when present, `authorization` is an object of the six known claims, each value a
///    valid ID or `*` (`AuthorizationClaims(json:)`).
/// 8. **Signature** — RS256 with the key named by `kid`, or, with no `kid`, with each key of the issuer; the
///    signature must be exactly the modulus length.
/// 9. **Scopes** — only for a token that passed everything else: no `authorization` claim is
///    ``TokenVerificationError/missingAuthorization`` (Fleet Engine's 403 "JWT does not contain any scopes."),
///    unless the issuer is one of ``issuersWithoutScopes``.
public struct FleetEngineTokenVerifier: Sendable {
    /// The verification limits. The defaults are Fleet Engine's.
    public struct Policy: Sendable, Hashable {
        /// The only `aud` accepted. Default `https://fleetengine.googleapis.com/`.
        public var audience: String
        /// The largest `exp − iat`, in seconds. Default 3600.
        public var maximumLifetime: Int64
        /// The largest `exp − now`, in seconds, before leeway. Default 3600.
        public var maximumTimeToExpiry: Int64
        /// Seconds added to ``maximumTimeToExpiry`` for clock differences. Default 60.
        public var expiryLeeway: Int64
        /// How far `iat` and `nbf` may be ahead of now, in seconds. Default 600 (Fleet Engine's 10 minutes).
        public var clockSkew: Int64
        /// The longest token accepted, in bytes. Default 8192.
        public var maximumTokenLength: Int

        public init(
            audience: String = FleetEngineClaims.fleetEngineAudience,
            maximumLifetime: Int64 = 3600,
            maximumTimeToExpiry: Int64 = 3600,
            expiryLeeway: Int64 = 60,
            clockSkew: Int64 = 600,
            maximumTokenLength: Int = CompactJWS.defaultMaximumLength
        ) {
            self.audience = audience
            self.maximumLifetime = maximumLifetime
            self.maximumTimeToExpiry = maximumTimeToExpiry
            self.expiryLeeway = expiryLeeway
            self.clockSkew = clockSkew
            self.maximumTokenLength = maximumTokenLength
        }
    }

    /// The largest NumericDate accepted: 9999-12-31T23:59:59Z.
    public static let maximumNumericDate: Int64 = 253_402_300_799

    /// Whom to trust.
    public var trustStore: TrustStore
    /// The limits.
    public var policy: Policy
    /// Issuers whose tokens may carry no `authorization` claim: service accounts with an admin role, whose claims
    /// Fleet Engine ignores. Their claimless tokens verify with empty claims. Empty by default.
    public var issuersWithoutScopes: Set<String> = []

    public init(trustStore: TrustStore, policy: Policy = Policy()) {
        self.trustStore = trustStore
        self.policy = policy
    }

    /// Verifies `token` at time `now`.
    public func verify(_ token: String, now: Date) throws(TokenVerificationError) -> VerifiedToken {
        try verify(token, nowSeconds: Int64(now.timeIntervalSince1970.rounded(.down)))
    }

    /// Verifies a token held in a substring (such as the rest of an `Authorization` header) at `nowSeconds`.
    public func verify(_ token: Substring, nowSeconds now: Int64) throws(TokenVerificationError) -> VerifiedToken {
        guard token.utf8.count <= policy.maximumTokenLength else {
            throw .tokenTooLarge(token.utf8.count, limit: policy.maximumTokenLength)
        }
        return try verify(String(token), nowSeconds: now)
    }

    /// Verifies `token` at `nowSeconds` seconds since the Unix epoch.
    public func verify(_ token: String, nowSeconds now: Int64) throws(TokenVerificationError) -> VerifiedToken {
        let jws = try JWSHeaderPolicy.decode(token, maximumLength: policy.maximumTokenLength)
        let keyID = try JWSHeaderPolicy.check(jws.header)
        let payload = try JWSHeaderPolicy.payload(of: jws)

        // Issuer, subject, and the issuer's keys.
        guard let issuerValue = payload["iss"] else { throw .invalidIssuer("is missing") }
        guard case .string(let issuer) = issuerValue else { throw .invalidIssuer("must be a string") }
        guard Self.isPlausibleIssuer(issuer) else {
            throw .invalidIssuer("\(TokenVerificationError.quoted(issuer)) is not a service-account email")
        }
        guard case .string(let subject)? = payload["sub"] else {
            throw .subjectMismatch("sub must be a string equal to iss")
        }
        // Byte equality: Swift's `==` would accept canonically equivalent spellings.
        guard subject.hasSameBytes(as: issuer) else { throw .subjectMismatch("sub differs from iss") }
        guard let candidates = trustStore.keys(forIssuer: issuer) else { throw .unknownIssuer(issuer) }
        if let keyID, !candidates.contains(where: { $0.keyID == keyID }) { throw .unknownKeyID(keyID) }

        // Audience.
        guard let audienceValue = payload["aud"] else { throw .invalidAudience("aud is missing") }
        guard case .string(let audience) = audienceValue else {
            throw .invalidAudience("aud must be the string \"\(policy.audience)\", not a \(audienceValue.typeName)")
        }
        guard audience.hasSameBytes(as: policy.audience) else {
            throw .invalidAudience("aud \(TokenVerificationError.quoted(audience)) is not \"\(policy.audience)\"")
        }

        // Time.
        let issuedAt: Int64
        switch Self.numericDate(payload["iat"]) {
        case .success(let value): issuedAt = value
        case .failure(let problem): throw .invalidIssuedAt(problem.text)
        }
        if issuedAt > now + policy.clockSkew {
            throw .issuedInFuture(seconds: issuedAt - now, skew: policy.clockSkew)
        }
        let expiresAt: Int64
        switch Self.numericDate(payload["exp"]) {
        case .success(let value): expiresAt = value
        case .failure(let problem): throw .invalidExpiration(problem.text)
        }
        if now >= expiresAt { throw .expired(secondsAgo: now - expiresAt) }
        if expiresAt - now > policy.maximumTimeToExpiry + policy.expiryLeeway {
            throw .expirationTooFar(seconds: expiresAt - now, limit: policy.maximumTimeToExpiry + policy.expiryLeeway)
        }
        let lifetime = expiresAt - issuedAt
        guard lifetime >= 1, lifetime <= policy.maximumLifetime else {
            throw .invalidLifetime(lifetime, limit: policy.maximumLifetime)
        }
        if let notBeforeValue = payload["nbf"] {
            switch Self.numericDate(notBeforeValue) {
            case .success(let notBefore):
                if notBefore > now + policy.clockSkew { throw .notYetValid(seconds: notBefore - now) }
            case .failure(let problem):
                throw .invalidNotBefore(problem.text)
            }
        }

        // Authorization shape.
        var authorization: AuthorizationClaims?
        if let value = payload["authorization"] {
            guard case .object(let object) = value else {
                throw .invalidAuthorization("authorization must be an object, not a \(value.typeName)")
            }
            do {
                authorization = try AuthorizationClaims(json: object)
            } catch {
                throw .invalidAuthorization(error.message)
            }
        }

        // Signature.
        let key = try JWSHeaderPolicy.verifySignature(of: jws, keyID: keyID, candidates: candidates)

        // Scopes, only now that the token is known to be genuine.
        if authorization?.isEmpty ?? true {
            guard issuersWithoutScopes.contains(issuer) else { throw .missingAuthorization }
            authorization = AuthorizationClaims()
        }

        return VerifiedToken(
            header: jws.header,
            claimsObject: payload,
            claims: FleetEngineClaims(
                issuer: issuer,
                subject: subject,
                audience: audience,
                issuedAt: issuedAt,
                expiresAt: expiresAt,
                authorization: authorization ?? AuthorizationClaims()
            ),
            keyID: key.keyID
        )
    }

    struct DateProblem: Error {
        let text: String
    }

    static func numericDate(_ value: JSONValue?) -> Result<Int64, DateProblem> {
        switch value {
        case nil:
            return .failure(DateProblem(text: "is missing"))
        case .integer(let seconds)?:
            guard seconds >= 0, seconds <= maximumNumericDate else {
                return .failure(DateProblem(text: "\(seconds) is outside 0...\(maximumNumericDate)"))
            }
            return .success(seconds)
        case .double?:
            return .failure(DateProblem(text: "must be a whole number of seconds (no fraction or exponent)"))
        case let other?:
            return .failure(DateProblem(text: "must be a number, not a \(other.typeName)"))
        }
    }

    /// A service-account email: 3–320 characters, one `@` with text on both sides, and no whitespace or
    /// control characters (<doc:VerificationRules>, C8 and J7).
    static func isPlausibleIssuer(_ issuer: String) -> Bool {
        var issuer = issuer
        return issuer.withUTF8 { bytes in
            guard bytes.count >= 3, bytes.count <= 320 else { return false }
            var ats = 0
            for byte in bytes {
                if byte <= 0x20 || byte >= 0x7F { return false }
                if byte == UInt8(ascii: "@") { ats += 1 }
            }
            return ats == 1 && bytes.first != UInt8(ascii: "@") && bytes.last != UInt8(ascii: "@")
        }
    }
}
