public import FleetAuthCore

/// A minted token: the JWT and what it says.
public struct FleetEngineToken: Sendable, Hashable {
    /// The compact JWT, ready for `Authorization: Bearer`.
    public let jwt: String
    /// The claims it carries.
    public let claims: FleetEngineClaims
    /// The `kid` in its header, if any.
    public let keyID: String?
    /// The token type it was minted as.
    public let type: FleetEngineTokenType

    /// The token endpoint's JSON for this token, handed out at `now` (epoch seconds; default `iat`).
    public func endpointResponse(now: Int64? = nil) -> TokenEndpointResponse {
        TokenEndpointResponse(jwt: jwt, claims: claims, now: now)
    }
}
