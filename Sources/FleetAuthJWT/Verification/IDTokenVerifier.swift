public import FleetAuthCore

/// The verifier of OpenID Connect ID tokens from one issuer, for a token server that lets an app's users log in
/// with the identity provider they already have (<doc:VerificationRules>, *ID tokens*).
///
/// It reads the token with the same strict decoder and header rules as ``FleetEngineTokenVerifier`` — one parser,
/// keys only from the issuer's JWK set, never from the token (`jwk`, `jku`, `x5u`, `x5c`, `x5t` refuse it) — and
/// accepts it only if:
///
/// 1. `alg` is `RS256` or `ES256` exactly (no `none`, no HMAC), and the key that verifies it is of that type;
/// 2. `iss` is byte for byte ``issuer``;
/// 3. `aud` is one of ``audiences``, or an array that contains one — and when that array has several values,
///    `azp` is present and is one of ``audiences`` that `aud` contains (OpenID Connect Core §3.1.3.7);
/// 4. `sub` is a string of 1–255 printable characters;
/// 5. `exp` and `iat` are integers, `nbf` too when present, with at most ``leeway`` seconds of clock difference:
///    now < `exp` + leeway, `iat` ≤ now + leeway, `nbf` ≤ now + leeway;
/// 6. the signature verifies with the key named by `kid` (or, without `kid`, with one of the set's keys of the
///    token's algorithm). A `kid` the set does not have is ``TokenVerificationError/unknownKeyID``, so the caller
///    can refetch the set once and try again.
public struct IDTokenVerifier: Sendable {
    /// The algorithms accepted: what OpenID Providers sign ID tokens with (most RS256, some ES256).
    public static let algorithms = ["RS256", "ES256"]

    /// The issuer's identifier, exactly as `iss` must read (an `https://` URL).
    public let issuer: String
    /// The client IDs the token may be for (an app with an iOS and an Android client has two).
    public let audiences: [String]
    /// Seconds of clock difference allowed on `exp`, `iat` and `nbf`. Default 60.
    public var leeway: Int64
    /// The longest token accepted, in bytes. Default 8192.
    public var maximumTokenLength: Int

    public init(
        issuer: String,
        audiences: [String],
        leeway: Int64 = 60,
        maximumTokenLength: Int = CompactJWS.defaultMaximumLength
    ) {
        self.issuer = issuer
        self.audiences = audiences
        self.leeway = leeway
        self.maximumTokenLength = maximumTokenLength
    }

    /// The `iss` of a token that is not verified yet, to choose the verifier with; nil if it cannot be read.
    public static func unverifiedIssuer(of token: String) -> String? {
        guard let jws = try? CompactJWS(token), let payload = try? jws.payloadObject() else { return nil }
        return payload["iss"]?.stringValue
    }

    /// Verifies `token` with `keys` (the issuer's JWK set) at `nowSeconds`; returns its claims.
    public func verify(
        _ token: String,
        keys: [SignatureVerificationKey],
        nowSeconds now: Int64
    ) throws(TokenVerificationError) -> VerifiedIDToken {
        let jws = try JWSHeaderPolicy.decode(token, maximumLength: maximumTokenLength)
        let keyID = try JWSHeaderPolicy.check(jws.header, algorithms: Self.algorithms)
        let algorithm = jws.algorithm ?? ""
        let payload = try JWSHeaderPolicy.payload(of: jws)

        guard case .string(let tokenIssuer)? = payload["iss"] else { throw .invalidIssuer("must be a string") }
        guard tokenIssuer.hasSameBytes(as: issuer) else {
            throw .unknownIssuer(tokenIssuer)
        }
        try checkAudience(payload)
        guard case .string(let subject)? = payload["sub"] else { throw .invalidSubject("must be a string") }
        guard !subject.isEmpty, subject.utf8.count <= 255,
            subject.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { throw .invalidSubject("must be 1–255 characters without control characters") }
        let claims = try checkTimes(payload, now: now)

        if let keyID {
            guard let key = keys.first(where: { $0.keyID == keyID }) else { throw .unknownKeyID(keyID) }
            guard jws.withSigningInput({ key.isValidSignature(jws.signature, algorithm: algorithm, for: $0) }) else {
                throw .invalidSignature
            }
        } else {
            let candidates = keys.filter { $0.algorithm == algorithm }
            guard
                candidates.contains(where: { key in
                    jws.withSigningInput { key.isValidSignature(jws.signature, algorithm: algorithm, for: $0) }
                })
            else { throw .invalidSignature }
        }
        return VerifiedIDToken(
            issuer: tokenIssuer,
            subject: subject,
            issuedAt: claims.issuedAt,
            expiresAt: claims.expiresAt,
            email: payload["email"]?.stringValue,
            algorithm: algorithm,
            keyID: keyID,
            claimsObject: payload
        )
    }

    private func isConfigured(_ value: String) -> Bool {
        audiences.contains { $0.hasSameBytes(as: value) }
    }

    private func checkAudience(_ payload: JSONObject) throws(TokenVerificationError) {
        switch payload["aud"] {
        case .string(let value)?:
            guard isConfigured(value) else {
                throw .invalidAudience("aud \(TokenVerificationError.quoted(value)) is not the configured client")
            }
        case .array(let values)?:
            let strings = values.compactMap(\.stringValue)
            guard strings.count == values.count, !strings.isEmpty else {
                throw .invalidAudience("aud must be a string or an array of strings")
            }
            guard strings.contains(where: isConfigured) else {
                throw .invalidAudience("aud does not contain the configured client")
            }
            if strings.count > 1 {
                guard case .string(let party)? = payload["azp"], isConfigured(party),
                    strings.contains(where: { $0.hasSameBytes(as: party) })
                else {
                    throw .invalidAuthorizedParty("aud has several values and azp is not the configured client")
                }
            }
        case nil:
            throw .invalidAudience("aud is missing")
        case let other?:
            throw .invalidAudience("aud must be a string or an array of strings, not a \(other.typeName)")
        }
    }

    private func checkTimes(
        _ payload: JSONObject,
        now: Int64
    ) throws(TokenVerificationError) -> (issuedAt: Int64, expiresAt: Int64) {
        let expiresAt: Int64
        switch FleetEngineTokenVerifier.numericDate(payload["exp"]) {
        case .success(let value): expiresAt = value
        case .failure(let problem): throw .invalidExpiration(problem.text)
        }
        if now >= expiresAt + leeway { throw .expired(secondsAgo: now - expiresAt) }
        let issuedAt: Int64
        switch FleetEngineTokenVerifier.numericDate(payload["iat"]) {
        case .success(let value): issuedAt = value
        case .failure(let problem): throw .invalidIssuedAt(problem.text)
        }
        if issuedAt > now + leeway { throw .issuedInFuture(seconds: issuedAt - now, skew: leeway) }
        if let value = payload["nbf"] {
            switch FleetEngineTokenVerifier.numericDate(value) {
            case .success(let notBefore):
                if notBefore > now + leeway { throw .notYetValid(seconds: notBefore - now) }
            case .failure(let problem):
                throw .invalidNotBefore(problem.text)
            }
        }
        return (issuedAt, expiresAt)
    }
}

/// The claims of an ID token that ``IDTokenVerifier`` accepted.
public struct VerifiedIDToken: Sendable {
    /// `iss`.
    public let issuer: String
    /// `sub`: the user's stable identifier at the issuer.
    public let subject: String
    /// `iat` and `exp`, seconds since the epoch.
    public let issuedAt: Int64
    public let expiresAt: Int64
    /// `email`, when the token carries one (informational: identities are matched by `iss` + `sub`).
    public let email: String?
    /// `alg` of the token.
    public let algorithm: String
    /// `kid` of the key that verified it, when the token named one.
    public let keyID: String?
    /// Every claim.
    public let claimsObject: JSONObject
}
