public import Foundation

/// Login sessions, stored only as the SHA-256 of their tokens.
///
/// The lookup answers with the session's user and whether it holds a grant in one read: a token request needs
/// both, and it is the hot path of the token server.
public protocol SessionStore: Sendable {
    /// Stores a session (and forgets sessions that expired before it was created).
    func addSession(_ session: SessionRecord) async throws
    /// The user of the session whose token hashes to `tokenHash`, if it has not expired at `now`, and whether
    /// that user holds `grant` (false when `grant` is nil).
    func sessionUser(tokenHash: String, at now: Date, holding grant: Grant?) async throws
        -> (user: AppUser, granted: Bool)?
    /// Ends a session.
    func removeSession(tokenHash: String) async throws
}

/// One stored session.
public struct SessionRecord: Sendable, Hashable {
    /// The SHA-256 of the session token, lowercase hex.
    public var tokenHash: String
    public var username: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(tokenHash: String, username: String, createdAt: Date, expiresAt: Date) {
        self.tokenHash = tokenHash
        self.username = username
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
