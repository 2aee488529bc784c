public import FleetAuthCore
public import Foundation

/// A logged-in session.
public struct Session: Sendable, Hashable {
    /// The opaque bearer token (shown once; only its hash is stored).
    public let token: String
    public let user: AppUser
    /// When the session ends.
    public let expiresAt: Date
    /// The device token of a password login (``LoginService``): sent with this user's next logins, it keeps a
    /// lockout of the client's address from refusing them. Nil for an ID-token login.
    public let deviceToken: String?

    public init(token: String, user: AppUser, expiresAt: Date, deviceToken: String? = nil) {
        self.token = token
        self.user = user
        self.expiresAt = expiresAt
        self.deviceToken = deviceToken
    }

    public var jsonObject: JSONObject {
        var object: JSONObject = [
            "sessionToken": .string(token),
            "expiresAt": .integer(expiresAt.epochSeconds * 1000),
            "username": .string(user.username),
            "role": .string(user.role.rawValue),
        ]
        if let deviceToken { object["deviceToken"] = .string(deviceToken) }
        return object
    }
}
