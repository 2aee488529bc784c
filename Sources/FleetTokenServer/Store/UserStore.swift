import FleetAuthCore
public import Foundation

/// App users, their password hashes and their grants.
///
/// Usernames are compared exactly, byte for byte. Errors are `StoreError`s: `already_exists` for a taken
/// username, `not_found` for a missing user or grant.
public protocol UserStore: Sendable {
    /// Adds a user; `already_exists` if the username is taken.
    func addUser(_ user: AppUser, passwordHash: String, createdAt: Date) async throws
    /// Replaces a user's password hash and ends all of its sessions, in one transaction.
    func setPasswordHash(_ hash: String, for username: String) async throws
    /// Replaces a user's password hash with `hash` only if it is still `current`, keeping its sessions: the same
    /// password re-hashed at the server's cost after a login. False (and nothing changed) when the password was
    /// changed meanwhile or the user is gone.
    func upgradePasswordHash(_ hash: String, for username: String, replacing current: String) async throws -> Bool
    /// How many stored password hashes have each bcrypt cost (read from the hashes' `$2b$12$` prefix).
    func passwordHashCosts() async throws -> [UInt8: Int]
    /// Deletes a user with its grants and sessions.
    func removeUser(_ username: String) async throws
    /// The user and its password hash, if it exists.
    func credentials(for username: String) async throws -> StoredCredentials?
    /// Every user with its grants, by username.
    func users() async throws -> [UserRecord]
    /// Grants `grant` to an existing user (idempotent); `not_found` if there is no such user.
    func addGrant(_ grant: Grant, to username: String) async throws
    /// Removes a grant; `not_found` if the user does not hold it.
    func removeGrant(_ grant: Grant, from username: String) async throws
}

/// A user with the hash its password is checked against.
public struct StoredCredentials: Sendable, Hashable {
    public var user: AppUser
    /// The bcrypt hash.
    public var passwordHash: String

    public init(user: AppUser, passwordHash: String) {
        self.user = user
        self.passwordHash = passwordHash
    }
}

/// A user with its grants.
public struct UserRecord: Sendable, Hashable {
    public var user: AppUser
    /// The grants, ordered by kind and ID.
    public var grants: [Grant]

    public init(user: AppUser, grants: [Grant]) {
        self.user = user
        self.grants = grants
    }
}
