import Crypto
import FleetAuthCore
public import Foundation
import GRDB

/// The token server's state in SQLite (GRDB, WAL): users with bcrypt password hashes, their grants, sessions
/// (stored only as SHA-256 hashes of the session tokens), the signing keys of each token family, and the audit
/// log of issued tokens. The server and the `fleetauth users` / `keys rotate` commands open the same file.
public final class TokenServerStore: Sendable {
    private let writer: any DatabaseWriter

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        writer = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(writer)
    }

    /// A private in-memory database.
    public init(inMemory: Void = ()) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        writer = try DatabaseQueue(configuration: configuration)
        try Self.migrator.migrate(writer)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: users, grants, sessions, keys, audit") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        username TEXT PRIMARY KEY, role TEXT NOT NULL, password_hash TEXT NOT NULL,
                        created_at INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE grants (
                        username TEXT NOT NULL REFERENCES users(username) ON DELETE CASCADE,
                        kind TEXT NOT NULL, resource_id TEXT NOT NULL,
                        PRIMARY KEY (username, kind, resource_id)) WITHOUT ROWID;
                    CREATE TABLE sessions (
                        token_hash TEXT PRIMARY KEY,
                        username TEXT NOT NULL REFERENCES users(username) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE INDEX sessions_by_user ON sessions (username);
                    CREATE TABLE signing_keys (
                        kid TEXT PRIMARY KEY, family TEXT NOT NULL, key_path TEXT NOT NULL,
                        created_at INTEGER NOT NULL, retired_at INTEGER) WITHOUT ROWID;
                    CREATE TABLE audit (
                        id INTEGER PRIMARY KEY AUTOINCREMENT, issued_at INTEGER NOT NULL, username TEXT NOT NULL,
                        token_type TEXT NOT NULL, scope TEXT NOT NULL, kid TEXT NOT NULL, expires_at INTEGER NOT NULL);
                    """
            )
        }
        return migrator
    }

    // MARK: Users and grants

    /// Adds a user; `ALREADY_EXISTS` if the username is taken.
    public func addUser(_ user: AppUser, passwordHash: String, now: Date = Date()) async throws {
        try await writer.write { db in
            if try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM users WHERE username = ?"), arguments: [user.username]) != nil
            {
                throw TokenServerError.alreadyExists("User \(user.username) already exists.")
            }
            try db.cachedStatement(
                sql: "INSERT INTO users (username, role, password_hash, created_at) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [user.username, user.role.rawValue, passwordHash, Int64(now.timeIntervalSince1970)])
        }
    }

    /// Replaces a user's password hash and ends all of its sessions.
    public func setPasswordHash(_ hash: String, for username: String) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "UPDATE users SET password_hash = ? WHERE username = ?").execute(arguments: [
                hash, username,
            ])
            guard db.changesCount == 1 else { throw TokenServerError.notFound("User \(username) not found.") }
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE username = ?").execute(arguments: [username])
        }
    }

    /// Deletes a user with its grants and sessions.
    public func removeUser(_ username: String) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "DELETE FROM users WHERE username = ?").execute(arguments: [username])
            guard db.changesCount == 1 else { throw TokenServerError.notFound("User \(username) not found.") }
        }
    }

    /// The user and its password hash, if it exists.
    public func credentials(for username: String) async throws -> (user: AppUser, passwordHash: String)? {
        try await writer.read { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT role, password_hash FROM users WHERE username = ?"),
                    arguments: [username]),
                let role = AppUserRole(rawValue: row["role"])
            else { return nil }
            return (AppUser(username: username, role: role), row["password_hash"])
        }
    }

    /// Every user with its grants, by username.
    public func users() async throws -> [(user: AppUser, grants: [Grant])] {
        try await writer.read { db in
            let users = try Row.fetchAll(db.cachedStatement(sql: "SELECT username, role FROM users ORDER BY username"))
            var grants: [String: [Grant]] = [:]
            for row in try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT username, kind, resource_id FROM grants ORDER BY username, kind, resource_id"))
            {
                guard let kind = GrantKind(rawValue: row["kind"]) else { continue }
                grants[row["username"], default: []].append(Grant(kind: kind, id: row["resource_id"]))
            }
            return users.compactMap { row in
                guard let role = AppUserRole(rawValue: row["role"]) else { return nil }
                let username: String = row["username"]
                return (AppUser(username: username, role: role), grants[username] ?? [])
            }
        }
    }

    /// Grants `grant` to a user whose role may hold it (idempotent).
    public func addGrant(_ grant: Grant, to username: String) async throws {
        try await writer.write { db in
            guard
                let roleName = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT role FROM users WHERE username = ?"), arguments: [username]),
                let role = AppUserRole(rawValue: roleName)
            else { throw TokenServerError.notFound("User \(username) not found.") }
            guard role.grantKinds.contains(grant.kind) else {
                throw TokenServerError.invalidArgument(
                    "A \(role) cannot be granted a \(grant.kind); allowed: "
                        + (role.grantKinds.isEmpty ? "none" : role.grantKinds.map(\.rawValue).joined(separator: ", "))
                        + ".")
            }
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO grants (username, kind, resource_id) VALUES (?, ?, ?)")
                .execute(arguments: [username, grant.kind.rawValue, grant.id])
        }
    }

    /// Removes a grant; `NOT_FOUND` if the user does not hold it.
    public func removeGrant(_ grant: Grant, from username: String) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "DELETE FROM grants WHERE username = ? AND kind = ? AND resource_id = ?")
                .execute(arguments: [username, grant.kind.rawValue, grant.id])
            guard db.changesCount == 1 else {
                throw TokenServerError.notFound("User \(username) holds no grant for \(grant.kind) \(grant.id).")
            }
        }
    }

    // MARK: Sessions

    /// Stores a session under the hash of its token.
    public func addSession(tokenHash: String, username: String, createdAt: Int64, expiresAt: Int64) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE expires_at <= ?").execute(arguments: [createdAt])
            try db.cachedStatement(
                sql: "INSERT INTO sessions (token_hash, username, created_at, expires_at) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [tokenHash, username, createdAt, expiresAt])
        }
    }

    /// The user of an unexpired session.
    public func sessionUser(tokenHash: String, now: Int64) async throws -> AppUser? {
        try await sessionUser(tokenHash: tokenHash, now: now, grant: nil)?.0
    }

    /// The user of an unexpired session and whether it holds `grant`, in one read.
    public func sessionUser(tokenHash: String, now: Int64, grant: Grant?) async throws -> (AppUser, Bool)? {
        try await writer.read { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT users.username, users.role FROM sessions JOIN users USING (username)
                            WHERE sessions.token_hash = ? AND sessions.expires_at > ?
                            """),
                    arguments: [tokenHash, now]),
                let role = AppUserRole(rawValue: row["role"])
            else { return nil }
            let user = AppUser(username: row["username"], role: role)
            guard let grant else { return (user, false) }
            let granted =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM grants WHERE username = ? AND kind = ? AND resource_id = ?"),
                    arguments: [user.username, grant.kind.rawValue, grant.id]) != nil
            return (user, granted)
        }
    }

    /// Ends a session.
    public func removeSession(tokenHash: String) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE token_hash = ?").execute(arguments: [tokenHash])
        }
    }

    // MARK: Signing keys

    /// One signing key's record.
    public struct KeyRecord: Sendable, Hashable {
        public var kid: String
        public var family: TokenFamily
        public var keyPath: String
        public var createdAt: Int64
        public var retiredAt: Int64?
    }

    /// Every key record, oldest first.
    public func keyRecords() async throws -> [KeyRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT kid, family, key_path, created_at, retired_at FROM signing_keys ORDER BY created_at, kid"
            ).compactMap { row in
                guard let family = TokenFamily(rawValue: row["family"]) else { return nil }
                return KeyRecord(
                    kid: row["kid"], family: family, keyPath: row["key_path"], createdAt: row["created_at"],
                    retiredAt: row["retired_at"])
            }
        }
    }

    /// Adds a key as its family's signing key, retiring the current one at `now` (one transaction).
    public func addSigningKey(_ record: KeyRecord) async throws {
        try await writer.write { db in
            try db.cachedStatement(
                sql: "UPDATE signing_keys SET retired_at = ? WHERE family = ? AND retired_at IS NULL"
            ).execute(arguments: [record.createdAt, record.family.rawValue])
            try db.cachedStatement(
                sql: "INSERT INTO signing_keys (kid, family, key_path, created_at) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [record.kid, record.family.rawValue, record.keyPath, record.createdAt])
        }
    }

    /// Forgets keys retired at or before `cutoff`; returns them so their files can be removed.
    public func removeKeys(retiredAtOrBefore cutoff: Int64) async throws -> [KeyRecord] {
        let records = try await keyRecords().filter { ($0.retiredAt ?? .max) <= cutoff }
        try await writer.write { db in
            for record in records {
                try db.cachedStatement(sql: "DELETE FROM signing_keys WHERE kid = ?").execute(arguments: [record.kid])
            }
        }
        return records
    }

    // MARK: Audit

    /// One issued token, without the token itself.
    public struct AuditEntry: Sendable, Hashable {
        public var issuedAt: Int64
        public var username: String
        public var tokenType: String
        public var scope: String
        public var kid: String
        public var expiresAt: Int64
    }

    /// Records an issued token.
    public func audit(_ entry: AuditEntry) async throws {
        try await writer.write { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO audit (issued_at, username, token_type, scope, kid, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).execute(
                arguments: [
                    entry.issuedAt, entry.username, entry.tokenType, entry.scope, entry.kid, entry.expiresAt,
                ])
        }
    }

    /// The most recent audit entries, newest first.
    public func auditEntries(limit: Int) async throws -> [AuditEntry] {
        try await writer.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT issued_at, username, token_type, scope, kid, expires_at FROM audit
                        ORDER BY id DESC LIMIT ?
                        """),
                arguments: [limit]
            ).map { row in
                AuditEntry(
                    issuedAt: row["issued_at"], username: row["username"], tokenType: row["token_type"],
                    scope: row["scope"], kid: row["kid"], expiresAt: row["expires_at"])
            }
        }
    }
}

extension TokenServerStore {
    /// The stored form of a session token: its SHA-256, hex.
    public static func hash(sessionToken: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(sessionToken.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
