public import Foundation

/// The claims set of a Fleet Engine token.
///
/// Times are whole seconds since the Unix epoch, as Fleet Engine documents `iat` and `exp`.
public struct FleetEngineClaims: Sendable, Hashable {
    /// The audience Fleet Engine expects: `https://fleetengine.googleapis.com/`, with the trailing slash.
    public static let fleetEngineAudience = "https://fleetengine.googleapis.com/"

    /// `iss`: the service account's email.
    public var issuer: String
    /// `sub`: the service account's email again.
    public var subject: String
    /// `aud`: a single string.
    public var audience: String
    /// `iat`, in seconds since the epoch.
    public var issuedAt: Int64
    /// `exp`, in seconds since the epoch.
    public var expiresAt: Int64
    /// `authorization`; `nil` when the token has none (Fleet Engine refuses such a token).
    public var authorization: AuthorizationClaims?

    public init(
        issuer: String,
        subject: String,
        audience: String = FleetEngineClaims.fleetEngineAudience,
        issuedAt: Int64,
        expiresAt: Int64,
        authorization: AuthorizationClaims?
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.authorization = authorization
    }

    /// `iat` as a date.
    public var issuedAtDate: Date { Date(timeIntervalSince1970: TimeInterval(issuedAt)) }
    /// `exp` as a date.
    public var expiresAtDate: Date { Date(timeIntervalSince1970: TimeInterval(expiresAt)) }
    /// `exp − iat`, in seconds.
    public var lifetime: Int64 { expiresAt - issuedAt }

    /// The claims as the JSON object a token carries, in the order `iss sub aud iat exp authorization`.
    public var jsonObject: JSONObject {
        var object = JSONObject()
        object["iss"] = .string(issuer)
        object["sub"] = .string(subject)
        object["aud"] = .string(audience)
        object["iat"] = .integer(issuedAt)
        object["exp"] = .integer(expiresAt)
        if let authorization { object["authorization"] = .object(authorization.jsonObject) }
        return object
    }
}
