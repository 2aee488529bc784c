public import FleetAuthCore
public import Foundation

/// A logged-in session.
public struct Session: Sendable, Hashable {
    /// The opaque bearer token (shown once; only its hash is stored).
    public let token: String
    public let user: AppUser
    /// When the session ends.
    public let expiresAt: Date

    public var jsonObject: JSONObject {
        [
            "sessionToken": .string(token),
            "expiresAt": .integer(expiresAt.epochSeconds * 1000),
            "username": .string(user.username),
            "role": .string(user.role.rawValue),
        ]
    }
}
