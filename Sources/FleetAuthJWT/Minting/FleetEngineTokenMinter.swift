public import FleetAuthCore
public import Foundation

/// Mints Fleet Engine JWTs exactly as Fleet Engine expects them.
///
/// - header `{"alg":"RS256","typ":"JWT","kid":"<private_key_id>"}` (no `kid` when the signer has none);
/// - `iss` = `sub` = the service account's email; `aud` = `https://fleetengine.googleapis.com/` unless configured;
/// - integer `iat` and `exp`, with `exp − iat` = ``Configuration/lifetime`` (at most 3600 s);
/// - `authorization` from the `FleetEngineTokenType`.
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
    public init(signer: some TokenSigner, configuration: Configuration = Configuration()) throws(MintingError) {
        guard (1...3600).contains(configuration.lifetime) else { throw .invalidLifetime(configuration.lifetime) }
        guard (0...600).contains(configuration.backdate) else { throw .invalidBackdate(configuration.backdate) }
        guard configuration.lifetime > configuration.backdate else {
            throw .backdateExceedsLifetime(configuration.backdate, configuration.lifetime)
        }
        guard !configuration.audience.isEmpty else { throw .emptyAudience }
        self.signer = signer
        self.configuration = configuration
        var header = JSONObject()
        header["alg"] = "RS256"
        header["typ"] = "JWT"
        if let kid = signer.keyID { header["kid"] = .string(kid) }
        self.encodedHeader = Array(Base64URL.encode(header.jsonBytes).utf8)
    }

    /// Mints a token of `type`, issued at `now` (less the backdate), in whole seconds.
    public func mint(_ type: FleetEngineTokenType, now: Date = Date()) async throws -> FleetEngineToken {
        let (claims, signingInput) = prepare(type, now: now)
        let signature = try await signer.sign(signingInput)
        return finish(type, claims: claims, signingInput: signingInput, signature: signature)
    }

    /// Mints on the calling thread with a local key, for callers that cannot suspend.
    public func mintSynchronously(_ type: FleetEngineTokenType, now: Date = Date()) throws -> FleetEngineToken {
        guard let local = signer as? LocalKeySigner else { throw MintingError.signerNotLocal }
        let (claims, signingInput) = prepare(type, now: now)
        let signature = try local.signSynchronously(signingInput)
        return finish(type, claims: claims, signingInput: signingInput, signature: signature)
    }

    private func prepare(_ type: FleetEngineTokenType, now: Date) -> (FleetEngineClaims, [UInt8]) {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down)) - configuration.backdate
        let claims = FleetEngineClaims(
            issuer: signer.serviceAccountEmail,
            subject: signer.serviceAccountEmail,
            audience: configuration.audience,
            issuedAt: issuedAt,
            expiresAt: issuedAt + configuration.lifetime,
            authorization: type.authorization
        )
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
        signature: [UInt8]
    ) -> FleetEngineToken {
        var jwt = signingInput
        jwt.append(UInt8(ascii: "."))
        jwt.append(contentsOf: Base64URL.encode(signature).utf8)
        return FleetEngineToken(
            jwt: String(decoding: jwt, as: UTF8.self),
            claims: claims,
            keyID: signer.keyID,
            type: type
        )
    }
}
