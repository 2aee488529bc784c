import FleetAuthCore
public import FleetAuthDatabase
public import FleetAuthServerCore
public import Foundation
import GRDB

/// The token server's state in SQLite (`SQLiteDatabase`: GRDB, WAL): users with bcrypt password hashes, their
/// grants, sessions (only the SHA-256 of each session token), the signing keys of each token family (their files'
/// paths, or the keys sealed under a key-encryption key), the audit log of issued tokens and the failed-login
/// counts. The server and the `fleetauth users` / `keys rotate` commands open the same file. Times are stored as
/// whole epoch seconds (the throttle's in milliseconds).
public final class SQLiteTokenServerStore: TokenServerStorage, SQLiteStore {
    package let database: SQLiteDatabase

    /// Keeps the database open until graceful shutdown, then closes it.
    public func run() async throws { try await database.run() }

    /// Nothing to release: the file closes when the store is dropped.
    public func close() async {}
    var writer: any DatabaseWriter { database.writer }

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws(StoreError) {
        database = try SQLiteDatabase(path: path, migrator: Self.migrator, label: "the token server's database")
    }

    /// A private in-memory database.
    public init(inMemory: Void = ()) throws(StoreError) {
        database = try SQLiteDatabase(inMemoryWith: Self.migrator, label: "the token server's database")
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
        migrator.registerMigration("v2: sealed signing keys, login throttle") { db in
            try db.execute(
                sql: """
                    CREATE TABLE signing_keys_v2 (
                        kid TEXT PRIMARY KEY, family TEXT NOT NULL, key_path TEXT, sealed_key BLOB,
                        created_at INTEGER NOT NULL, retired_at INTEGER,
                        CHECK ((key_path IS NULL) <> (sealed_key IS NULL))) WITHOUT ROWID;
                    INSERT INTO signing_keys_v2 (kid, family, key_path, created_at, retired_at)
                        SELECT kid, family, key_path, created_at, retired_at FROM signing_keys;
                    DROP TABLE signing_keys;
                    ALTER TABLE signing_keys_v2 RENAME TO signing_keys;
                    CREATE TABLE login_failures (
                        key TEXT PRIMARY KEY, failures INTEGER NOT NULL, first_failure_ms INTEGER NOT NULL,
                        locked_until_ms INTEGER, forget_after_ms INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE INDEX login_failures_by_age ON login_failures (forget_after_ms);
                    """
            )
        }
        migrator.registerMigration("v3: identities linked to users") { db in
            try db.execute(sql: identitiesMigration)
        }
        migrator.registerMigration("v4: audit pruned by age") { db in
            try db.execute(sql: "CREATE INDEX audit_by_issued_at ON audit (issued_at)")
        }
        return migrator
    }

    private static func user(_ row: Row) throws(StoreError) -> AppUser {
        guard let role = AppUserRole(rawValue: row["role"]) else {
            throw .corrupted("User \(row["username"] as String) has an unknown role.")
        }
        return AppUser(username: row["username"], role: role)
    }
}

// MARK: - Users and grants

extension SQLiteTokenServerStore {
    public func addUser(_ user: AppUser, passwordHash: String, createdAt: Date) async throws {
        guard StoredText.isStorable(user.username) else { throw StoreError.corrupted("A username cannot contain NUL.") }
        try await database.writeAlone { db in
            try Self.insert(user, passwordHash: passwordHash, createdAt: createdAt, db)
        }
    }

    /// Inserts a user; `already_exists` if the name is taken.
    static func insert(_ user: AppUser, passwordHash: String, createdAt: Date, _ db: Database) throws {
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM users WHERE username = ?"),
            arguments: [user.username]
        ) != nil {
            throw StoreError.alreadyExists("User \(user.username) already exists.")
        }
        try db.cachedStatement(
            sql: "INSERT INTO users (username, role, password_hash, created_at) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [user.username, user.role.rawValue, passwordHash, createdAt.epochSeconds])
    }

    public func setPasswordHash(_ hash: String, for username: String) async throws {
        guard StoredText.isStorable(username) else { throw StoreError.notFound("User \(username) not found.") }
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "UPDATE users SET password_hash = ? WHERE username = ?").execute(arguments: [
                hash, username,
            ])
            guard db.changesCount == 1 else { throw StoreError.notFound("User \(username) not found.") }
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE username = ?").execute(arguments: [username])
        }
    }

    public func removeUser(_ username: String) async throws {
        guard StoredText.isStorable(username) else { throw StoreError.notFound("User \(username) not found.") }
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM users WHERE username = ?").execute(arguments: [username])
            guard db.changesCount == 1 else { throw StoreError.notFound("User \(username) not found.") }
        }
    }

    public func upgradePasswordHash(_ hash: String, for username: String, replacing current: String) async throws
        -> Bool
    {
        guard StoredText.isStorable(username) else { return false }
        return try await database.writeAlone { db in
            try db.cachedStatement(sql: "UPDATE users SET password_hash = ? WHERE username = ? AND password_hash = ?")
                .execute(arguments: [hash, username, current])
            return db.changesCount == 1
        }
    }

    public func passwordHashCosts() async throws -> [UInt8: Int] {
        try await writer.read { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT substr(password_hash, 1, 7) AS prefix, count(*) AS n FROM users GROUP BY 1"
                )
            )
            return rows.reduce(into: [:]) { costs, row in
                if let cost = PasswordHasher.cost(of: row["prefix"]) { costs[cost, default: 0] += row["n"] }
            }
        }
    }

    public func credentials(for username: String) async throws -> StoredCredentials? {
        guard StoredText.isStorable(username) else { return nil }
        return try await database.lookup { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT username, role, password_hash FROM users WHERE username = ?"),
                    arguments: [username]
                )
            else { return nil }
            return StoredCredentials(user: try Self.user(row), passwordHash: row["password_hash"])
        }
    }

    public func users() async throws -> [UserRecord] {
        try await writer.read { db in
            let users = try Row.fetchAll(db.cachedStatement(sql: "SELECT username, role FROM users ORDER BY username"))
            var grants: [String: [Grant]] = [:]
            for row in try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT username, kind, resource_id FROM grants ORDER BY username, kind, resource_id"
                )
            ) {
                guard let kind = GrantKind(rawValue: row["kind"]) else {
                    throw StoreError.corrupted("A grant of \(row["username"] as String) has an unknown kind.")
                }
                grants[row["username"], default: []].append(Grant(kind: kind, id: row["resource_id"]))
            }
            return try users.map { row in
                let user = try Self.user(row)
                return UserRecord(user: user, grants: grants[user.username] ?? [])
            }
        }
    }

    public func addGrant(_ grant: Grant, to username: String) async throws {
        guard StoredText.isStorable(username), StoredText.isStorable(grant.id) else {
            throw StoreError.notFound("User \(username) not found.")
        }
        try await database.writeAlone { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM users WHERE username = ?"),
                    arguments: [username]
                ) != nil
            else { throw StoreError.notFound("User \(username) not found.") }
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO grants (username, kind, resource_id) VALUES (?, ?, ?)")
                .execute(arguments: [username, grant.kind.rawValue, grant.id])
        }
    }

    public func removeGrant(_ grant: Grant, from username: String) async throws {
        guard StoredText.isStorable(username), StoredText.isStorable(grant.id) else {
            throw StoreError.notFound("User \(username) holds no grant for \(grant.kind) \(grant.id).")
        }
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM grants WHERE username = ? AND kind = ? AND resource_id = ?")
                .execute(arguments: [username, grant.kind.rawValue, grant.id])
            guard db.changesCount == 1 else {
                throw StoreError.notFound("User \(username) holds no grant for \(grant.kind) \(grant.id).")
            }
        }
    }
}

// MARK: - Sessions

extension SQLiteTokenServerStore {
    public func addSession(_ session: SessionRecord) async throws {
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE expires_at <= ?").execute(arguments: [
                session.createdAt.epochSeconds
            ])
            try db.cachedStatement(
                sql: "INSERT INTO sessions (token_hash, username, created_at, expires_at) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [
                session.tokenHash, session.username, session.createdAt.epochSeconds, session.expiresAt.epochSeconds,
            ])
        }
    }

    public func sessionUser(tokenHash: String, at now: Date, holding grant: Grant?) async throws
        -> (user: AppUser, granted: Bool)?
    {
        guard StoredText.isStorable(tokenHash), grant.map({ StoredText.isStorable($0.id) }) ?? true else { return nil }
        return try await database.lookup { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT users.username, users.role FROM sessions JOIN users USING (username)
                            WHERE sessions.token_hash = ? AND sessions.expires_at > ?
                            """
                    ),
                    arguments: [tokenHash, now.epochSeconds]
                )
            else { return nil }
            let user = try Self.user(row)
            guard let grant else { return (user, false) }
            let granted =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM grants WHERE username = ? AND kind = ? AND resource_id = ?"),
                    arguments: [user.username, grant.kind.rawValue, grant.id]
                ) != nil
            return (user, granted)
        }
    }

    public func removeSession(tokenHash: String) async throws {
        guard StoredText.isStorable(tokenHash) else { return }
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM sessions WHERE token_hash = ?").execute(arguments: [tokenHash])
        }
    }
}
