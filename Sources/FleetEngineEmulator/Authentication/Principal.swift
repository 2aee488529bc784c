public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerCore

/// Who is calling: the trusted service account that signed the request's token, and the token's claims.
public struct Principal: Sendable {
    /// The signing service account, with its project and roles.
    public let account: TrustedServiceAccount
    /// The token's `authorization` claims.
    public let claims: AuthorizationClaims
    /// The verified token.
    public let token: VerifiedToken
}
