public import FleetAuthCore

/// A token that passed every rule of ``FleetEngineTokenVerifier``.
public struct VerifiedToken: Sendable {
    /// The protected header.
    public let header: JSONObject
    /// The claims set exactly as signed (every member, in document order).
    public let claimsObject: JSONObject
    /// The Fleet Engine claims, read from ``claimsObject``.
    public let claims: FleetEngineClaims
    /// The `kid` of the trusted key that verified the signature.
    public let keyID: String?

    /// The token's `authorization` claims; a verified token always has them.
    public var authorization: AuthorizationClaims { claims.authorization ?? AuthorizationClaims() }
}
