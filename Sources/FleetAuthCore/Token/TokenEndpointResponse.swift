/// The JSON a token endpoint answers with, readable by Google's sample apps of both families.
///
/// `{"jwt","token","creationTimestamp","expirationTimestamp","expiresInSeconds"}`: `jwt` is what the on-demand
/// samples read and `token` what the delivery samples read (the same JWT); both timestamps are **absolute Unix
/// epoch milliseconds**, as every Google backend sends them; `expiresInSeconds` is relative, for the JavaScript
/// SDK's `AuthToken`.
public struct TokenEndpointResponse: Sendable, Hashable, Codable {
    /// The JWT.
    public var jwt: String
    /// The same JWT, under the delivery samples' key.
    public var token: String
    /// `iat`, in epoch milliseconds.
    public var creationTimestamp: Int64
    /// `exp`, in epoch milliseconds.
    public var expirationTimestamp: Int64
    /// Seconds from creation to expiry.
    public var expiresInSeconds: Int64

    /// The response for a token with these claims, handed out at `now` (epoch seconds; default `iat`).
    public init(jwt: String, claims: FleetEngineClaims, now: Int64? = nil) {
        self.init(jwt: jwt, issuedAt: claims.issuedAt, expiresAt: claims.expiresAt, now: now)
    }

    /// The response for a token issued and expiring at these epoch seconds, handed out at `now` (default `iat`;
    /// a backdated `iat` makes the two differ).
    public init(jwt: String, issuedAt: Int64, expiresAt: Int64, now: Int64? = nil) {
        self.jwt = jwt
        self.token = jwt
        self.creationTimestamp = issuedAt * 1000
        self.expirationTimestamp = expiresAt * 1000
        self.expiresInSeconds = expiresAt - (now ?? issuedAt)
    }

    /// The JSON object, keys in the documented order.
    public var jsonObject: JSONObject {
        JSONObject([
            "jwt": .string(jwt),
            "token": .string(token),
            "creationTimestamp": .integer(creationTimestamp),
            "expirationTimestamp": .integer(expirationTimestamp),
            "expiresInSeconds": .integer(expiresInSeconds),
        ])
    }
}
