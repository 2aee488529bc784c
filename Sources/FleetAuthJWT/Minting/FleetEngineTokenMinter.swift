public import FleetAuthCore
public import Foundation

/// Mints Fleet Engine JWTs exactly as Fleet Engine expects them.
///
/// - header `{"alg":"RS256","typ":"JWT","kid":"<private_key_id>"}` (no `kid` when the signer has none), or the header
///   a whole-token signer (IAM `signJwt`) writes, which must say RS256;
/// - `iss` = `sub` = the service account's email; `aud` = `https://fleetengine.googleapis.com/` unless configured;
/// - integer `iat` and `exp`, with `exp − iat` = ``Configuration/lifetime`` (at most 3600 s);
/// - `authorization` from the `FleetEngineTokenType`.
///
/// A signer that answers a whole JWT (``TokenSigner`` without ``RS256Signer``) is checked before its token is used:
/// three canonical base64url segments, a header with `alg` RS256 (and `typ` JWT when present), a signature, and a
/// payload whose claims equal the claims sent, member for member. Anything else is a ``SigningError``
/// (`claims_mismatch` or `invalid_response`), never a token.
///
/// ```swift
/// let minter = try FleetEngineTokenMinter(signer: LocalKeySigner(key: try ServiceAccountKey(contentsOf: "driver.json")))
/// let token = try await minter.mint(.driver(vehicleID: "vehicle-1"))
/// ```
public struct FleetEngineTokenMinter: Sendable {
    /// How tokens are minted.
    public struct Configuration: Sendable, Hashable {
        /// The `aud` claim. Default `https://fleetengine.googleapis.com/`.
        public var audience: String
        /// `exp − iat`, in whole seconds, 1...3600. Default 3600, as Google's Java library mints.
        public var lifetime: Int64
        /// Seconds subtracted from the current time to get `iat`, 0...600, for signers whose clock may run ahead
        /// of Fleet Engine's (fleet-debugger backdates 300 s). `exp` stays `iat + lifetime`. Default 0.
        public var backdate: Int64

        public init(
            audience: String = FleetEngineClaims.fleetEngineAudience,
            lifetime: Int64 = 3600,
            backdate: Int64 = 0
        ) {
            self.audience = audience
            self.lifetime = lifetime
            self.backdate = backdate
        }
    }

    /// The signer: whose tokens these are.
    public let signer: any TokenSigner
    /// The minting settings.
    public let configuration: Configuration
    private let encodedHeader: [UInt8]

    /// A minter for `signer`. Throws if the configuration breaks Fleet Engine's limits.
    public init(signer: any TokenSigner, configuration: Configuration = Configuration()) throws(MintingError) {
        guard (1...3600).contains(configuration.lifetime) else { throw .invalidLifetime(configuration.lifetime) }
        guard (0...600).contains(configuration.backdate) else { throw .invalidBackdate(configuration.backdate) }
        guard configuration.lifetime > configuration.backdate else {
            throw .backdateExceedsLifetime(configuration.backdate, configuration.lifetime)
        }
        guard !configuration.audience.isEmpty else { throw .emptyAudience }
        self.signer = signer
        self.configuration = configuration
        let keyID = (signer as? any RS256Signer)?.keyID
        self.encodedHeader = Array(Base64URL.encode(JWSHeaderEncoding.rs256(keyID: keyID)).utf8)
    }

    /// Mints a token of `type`, issued at `now` (less the backdate), in whole seconds.
    ///
    /// Throws the signer's errors (a ``SigningError`` for the signers FleetAuth ships), and a ``SigningError`` when
    /// a whole-token signer's answer is not the token that was asked for.
    public func mint(_ type: FleetEngineTokenType, now: Date = Date()) async throws -> FleetEngineToken {
        if let rs256 = signer as? any RS256Signer {
            let (claims, signingInput) = prepare(type, now: now)
            let signature = try await rs256.sign(signingInput)
            return finish(type, claims: claims, signingInput: signingInput, signature: signature, keyID: rs256.keyID)
        }
        let claims = makeClaims(type, now: now)
        let sent = claims.jsonObject
        let jwt = try await signer.signToken(payload: sent.jsonBytes)
        let keyID = try Self.check(jwt, carries: sent, from: signer.serviceAccountEmail)
        return FleetEngineToken(jwt: jwt, claims: claims, keyID: keyID, type: type)
    }

    /// Checks a whole-token signer's answer: an RS256 compact JWS whose claims are `sent`. Returns its `kid`.
    static func check(_ jwt: String, carries sent: JSONObject, from account: String) throws(SigningError) -> String? {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(jwt)
        } catch {
            throw .invalidResponse(
                "The signer of \(account) answered something that is not a compact JWT: \(error.message)"
            )
        }
        guard jws.algorithm == "RS256" else {
            throw .claimsMismatch(
                "The signer of \(account) answered a token signed with \(jws.algorithm ?? "no alg"), not RS256."
            )
        }
        if let type = jws.header["typ"], type != "JWT" {
            throw .claimsMismatch("The signer of \(account) answered a token with typ \(type.jsonText), not \"JWT\".")
        }
        if let kid = jws.header["kid"], kid.stringValue == nil {
            throw .invalidResponse("The signer of \(account) answered a token whose kid is not a string.")
        }
        guard jws.signature.count >= 256 else {
            throw .invalidResponse(
                "The signer of \(account) answered a \(jws.signature.count)-byte signature; RS256 with a 2048-bit key has 256."
            )
        }
        let received: JSONObject
        do {
            received = try jws.payloadObject()
        } catch {
            throw .invalidResponse(
                "The signer of \(account) answered a token whose claims are not JSON: \(error.message)"
            )
        }
        guard Self.sameMembers(received, sent) else {
            throw .claimsMismatch(
                "The signer of \(account) answered a token whose claims differ from the claims sent; it was refused."
            )
        }
        return jws.keyID
    }

    /// Whether two objects have the same members with equal values, in any order.
    private static func sameMembers(_ a: JSONObject, _ b: JSONObject) -> Bool {
        guard a.count == b.count, Set(a.keys).count == a.count else { return false }
        for member in b {
            guard let value = a[member.key], Self.equal(value, member.value) else { return false }
        }
        return true
    }

    private static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): sameMembers(x, y)
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        default: a == b
        }
    }

    /// Mints on the calling thread with a local key, for callers that cannot suspend.
    public func mintSynchronously(_ type: FleetEngineTokenType, now: Date = Date()) throws -> FleetEngineToken {
        guard let local = signer as? LocalKeySigner else { throw MintingError.signerNotLocal }
        let (claims, signingInput) = prepare(type, now: now)
        let signature = try local.signSynchronously(signingInput)
        return finish(type, claims: claims, signingInput: signingInput, signature: signature, keyID: local.keyID)
    }

    private func makeClaims(_ type: FleetEngineTokenType, now: Date) -> FleetEngineClaims {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down)) - configuration.backdate
        return FleetEngineClaims(
            issuer: signer.serviceAccountEmail,
            subject: signer.serviceAccountEmail,
            audience: configuration.audience,
            issuedAt: issuedAt,
            expiresAt: issuedAt + configuration.lifetime,
            authorization: type.authorization
        )
    }

    private func prepare(_ type: FleetEngineTokenType, now: Date) -> (FleetEngineClaims, [UInt8]) {
        let claims = makeClaims(type, now: now)
        var signingInput = encodedHeader
        signingInput.reserveCapacity(encodedHeader.count + 600)
        signingInput.append(UInt8(ascii: "."))
        signingInput.append(contentsOf: Base64URL.encode(claims.jsonObject.jsonBytes).utf8)
        return (claims, signingInput)
    }

    private func finish(
        _ type: FleetEngineTokenType,
        claims: FleetEngineClaims,
        signingInput: [UInt8],
        signature: [UInt8],
        keyID: String?
    ) -> FleetEngineToken {
        var jwt = signingInput
        jwt.append(UInt8(ascii: "."))
        jwt.append(contentsOf: Base64URL.encode(signature).utf8)
        return FleetEngineToken(
            jwt: String(decoding: jwt, as: UTF8.self),
            claims: claims,
            keyID: keyID,
            type: type
        )
    }
}
