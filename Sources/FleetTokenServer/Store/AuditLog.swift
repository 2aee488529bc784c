public import FleetAuthCore
public import Foundation

/// The record of every token the server issued, without the tokens.
public protocol AuditLog: Sendable {
    /// Records issued tokens, in order, in one transaction; the entries are durable when this returns, before the
    /// tokens are handed out.
    func append(contentsOf entries: [AuditEntry]) async throws
    /// The most recent entries, newest first.
    func recentEntries(limit: Int) async throws -> [AuditEntry]
}

extension AuditLog {
    /// Records one issued token; durable when this returns.
    public func append(_ entry: AuditEntry) async throws {
        try await append(contentsOf: [entry])
    }
}

/// One issued token, without the token itself.
public struct AuditEntry: Sendable, Hashable {
    public var issuedAt: Date
    public var username: String
    /// The endpoint that issued it.
    public var endpoint: TokenServerEndpoint
    /// The token's `authorization` claims, as JSON.
    public var scope: String
    /// The signing key.
    public var kid: String
    public var expiresAt: Date

    public init(
        issuedAt: Date,
        username: String,
        endpoint: TokenServerEndpoint,
        scope: String,
        kid: String,
        expiresAt: Date
    ) {
        self.issuedAt = issuedAt
        self.username = username
        self.endpoint = endpoint
        self.scope = scope
        self.kid = kid
        self.expiresAt = expiresAt
    }
}
