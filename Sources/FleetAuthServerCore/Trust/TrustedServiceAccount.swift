public import FleetAuthCore

/// A service account the emulator trusts: its email (the tokens' `iss`), the project it belongs to (the only
/// provider its tokens may touch) and its Fleet Engine roles (what its tokens may do).
public struct TrustedServiceAccount: Sendable, Hashable {
    /// The service account's email.
    public let email: String
    /// The Google Cloud project ID, which is the Fleet Engine provider ID.
    public let project: String
    /// The IAM roles bound to the account.
    public let roles: [FleetEngineRole]

    public init(email: String, project: String, roles: [FleetEngineRole]) {
        self.email = email
        self.project = project
        self.roles = roles
    }

    /// Whether any of the account's roles grants `permission`.
    public func isGranted(_ permission: FleetEnginePermission) -> Bool {
        roles.contains { $0.grants(permission) }
    }

    /// Whether a role of the account grants `permission` and ignores the token's `authorization` claims (an admin
    /// role): then the claims neither narrow nor are needed for that permission.
    public func ignoresClaims(for permission: FleetEnginePermission) -> Bool {
        roles.contains { $0.ignoresAuthorizationClaims && $0.grants(permission) }
    }

    /// Whether the account's tokens may carry no `authorization` claim at all (it holds an admin role).
    public var mayOmitClaims: Bool { roles.contains(where: \.ignoresAuthorizationClaims) }
}
