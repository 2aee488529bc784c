import FleetAuthCore
public import FleetAuthDatabase
import FleetAuthServerCore
public import Foundation
import NIOCore
import PostgresNIO

/// The token server's state on PostgreSQL, for several instances behind one load balancer: users, grants,
/// sessions, the audit log, the failed-login counts and the signing keys (sealed under the key-encryption key, so
/// every instance signs with the same keys and the database alone signs nothing).
///
/// Every change is one statement or one transaction. Changes to the signing keys hold one advisory lock, so two
/// instances that start or rotate at once still leave each family exactly one signing key; pruning deletes with
/// `RETURNING`, so each retired key is pruned by exactly one instance. Throttle updates lock their keys (advisory
/// locks in a fixed order), so concurrent failures on two instances are all counted. Usernames and IDs compare
/// byte by byte (`COLLATE "C"`), as on SQLite; a string PostgreSQL cannot hold (one with NUL) matches nothing.
public final class PostgresTokenServerStore: TokenServerStorage {
    package let database: PostgreSQLDatabase

    /// Runs `body` with the store at `url`, connected and migrated; its connection pool closes when `body`
    /// returns. Run a server's service group inside `body`: the store is one of its services. `timeouts` bound
    /// every call.
    public static func withConnected<Result>(
        _ url: PostgresURL,
        maximumConnections: Int = 20,
        timeouts: DatabaseTimeouts = .requests,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresTokenServerStore) async throws -> Result
    ) async throws -> Result {
        try await PostgreSQLDatabase.withDatabase(
            url,
            migrations: migrations,
            maximumConnections: maximumConnections,
            limits: timeouts
        ) { database in
            try await body(PostgresTokenServerStore(database: database))
        }
    }

    /// Connects and migrates, with the pool running in `pools`' scope. Its calls are not bounded by a
    /// ``DatabaseDeadline`` (tests and benchmarks, whose statements may rightly queue long on a loaded machine);
    /// a server's store, opened by `withConnected`, is.
    package static func connect(
        _ url: PostgresURL,
        maximumConnections: Int = 20,
        in pools: PostgresPools
    ) async throws(StoreError) -> PostgresTokenServerStore {
        PostgresTokenServerStore(
            database: try await pools.connect(url, migrations: migrations, maximumConnections: maximumConnections)
        )
    }

    package init(database: PostgreSQLDatabase) {
        self.database = database
    }

    static let migrations = PostgresMigrations(
        scope: "token-server",
        steps: [
            .init(
                version: 1,
                name: "users, grants, sessions, signing keys, audit, login throttle",
                statements: [
                    """
                    CREATE TABLE token_users (
                        username TEXT COLLATE "C" PRIMARY KEY, role TEXT NOT NULL, password_hash TEXT NOT NULL,
                        created_at BIGINT NOT NULL)
                    """,
                    """
                    CREATE TABLE token_grants (
                        username TEXT COLLATE "C" NOT NULL REFERENCES token_users (username) ON DELETE CASCADE,
                        kind TEXT COLLATE "C" NOT NULL, resource_id TEXT COLLATE "C" NOT NULL,
                        PRIMARY KEY (username, kind, resource_id))
                    """,
                    """
                    CREATE TABLE token_sessions (
                        token_hash TEXT COLLATE "C" PRIMARY KEY,
                        username TEXT COLLATE "C" NOT NULL REFERENCES token_users (username) ON DELETE CASCADE,
                        created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)
                    """,
                    "CREATE INDEX token_sessions_by_user ON token_sessions (username)",
                    "CREATE INDEX token_sessions_by_expiry ON token_sessions (expires_at)",
                    """
                    CREATE TABLE token_signing_keys (
                        kid TEXT COLLATE "C" PRIMARY KEY, family TEXT NOT NULL, key_path TEXT, sealed_key BYTEA,
                        created_at BIGINT NOT NULL, retired_at BIGINT,
                        CHECK ((key_path IS NULL) <> (sealed_key IS NULL)))
                    """,
                    """
                    CREATE TABLE token_audit (
                        id BIGSERIAL PRIMARY KEY, issued_at BIGINT NOT NULL, username TEXT NOT NULL,
                        token_type TEXT NOT NULL, scope TEXT NOT NULL, kid TEXT NOT NULL, expires_at BIGINT NOT NULL)
                    """,
                    """
                    CREATE TABLE token_login_failures (
                        key TEXT COLLATE "C" PRIMARY KEY, failures INTEGER NOT NULL, first_failure_ms BIGINT NOT NULL,
                        locked_until_ms BIGINT, forget_after_ms BIGINT NOT NULL)
                    """,
                    "CREATE INDEX token_login_failures_by_age ON token_login_failures (forget_after_ms)",
                ]
            ),
            identitiesMigration,
            .init(
                version: 3,
                name: "audit pruned by age",
                statements: ["CREATE INDEX token_audit_by_issued_at ON token_audit (issued_at)"]
            ),
        ]
    )

    /// The advisory lock the instance pruning the audit log holds ("FAPR"), so instances take turns.
    package static let pruningLock: Int64 = 0x4641_5052

    /// The advisory lock every signing-key change holds ("FAKY").
    static let signingKeysLock: Int64 = 0x4641_4B59

    public func run() async throws { try await database.run() }

    /// Closes the connection pool (for a one-shot use, such as a CLI command).
    public func close() async { await database.close() }

    /// Whether PostgreSQL can hold `text` (``StoredText``); a string it cannot hold names nothing stored.
    static func storable(_ text: String) -> Bool { StoredText.isStorable(text) }

    private static func user(username: String, role: String) throws(StoreError) -> AppUser {
        guard let role = AppUserRole(rawValue: role) else {
            throw .corrupted("User \(username) has an unknown role.")
        }
        return AppUser(username: username, role: role)
    }
}

// MARK: - Users and grants

extension PostgresTokenServerStore {
    public func addUser(_ user: AppUser, passwordHash: String, createdAt: Date) async throws {
        guard Self.storable(user.username) else {
            throw StoreError.corrupted("A username cannot contain NUL.")
        }
        let rows = try await database.query(
            """
            INSERT INTO token_users (username, role, password_hash, created_at)
            VALUES (\(user.username), \(user.role.rawValue), \(passwordHash), \(createdAt.epochSeconds))
            ON CONFLICT DO NOTHING RETURNING 1
            """
        )
        guard !rows.isEmpty else { throw StoreError.alreadyExists("User \(user.username) already exists.") }
    }

    public func setPasswordHash(_ hash: String, for username: String) async throws {
        guard Self.storable(username) else { throw StoreError.notFound("User \(username) not found.") }
        // One statement: the new hash and the end of every session commit together.
        let rows = try await database.query(
            """
            WITH changed AS (
                UPDATE token_users SET password_hash = \(hash) WHERE username = \(username) RETURNING username),
            ended AS (DELETE FROM token_sessions WHERE username IN (SELECT username FROM changed))
            SELECT count(*) FROM changed
            """
        )
        guard try rows.first?.decode(Int64.self) == 1 else { throw StoreError.notFound("User \(username) not found.") }
    }

    public func removeUser(_ username: String) async throws {
        let rows =
            Self.storable(username)
            ? try await database.query("DELETE FROM token_users WHERE username = \(username) RETURNING 1") : []
        guard !rows.isEmpty else { throw StoreError.notFound("User \(username) not found.") }
    }

    public func upgradePasswordHash(_ hash: String, for username: String, replacing current: String) async throws
        -> Bool
    {
        guard Self.storable(username) else { return false }
        let rows = try await database.query(
            """
            UPDATE token_users SET password_hash = \(hash)
            WHERE username = \(username) AND password_hash = \(current) RETURNING 1
            """
        )
        return !rows.isEmpty
    }

    public func passwordHashCosts() async throws -> [UInt8: Int] {
        let rows = try await database.query(
            "SELECT substr(password_hash, 1, 7), count(*) FROM token_users GROUP BY 1"
        )
        var costs: [UInt8: Int] = [:]
        for row in rows {
            let (prefix, count) = try row.decode((String, Int64).self)
            if let cost = PasswordHasher.cost(of: prefix) { costs[cost, default: 0] += Int(count) }
        }
        return costs
    }

    public func credentials(for username: String) async throws -> StoredCredentials? {
        guard Self.storable(username) else { return nil }
        let rows = try await database.query(
            "SELECT username, role, password_hash FROM token_users WHERE username = \(username)"
        )
        return try rows.first.map { row in
            let (name, role, hash) = try row.decode((String, String, String).self)
            return StoredCredentials(user: try Self.user(username: name, role: role), passwordHash: hash)
        }
    }

    public func users() async throws -> [UserRecord] {
        let rows = try await database.query(
            """
            SELECT u.username, u.role, g.kind, g.resource_id FROM token_users u
            LEFT JOIN token_grants g ON g.username = u.username
            ORDER BY u.username, g.kind, g.resource_id
            """
        )
        var records: [UserRecord] = []
        for row in rows {
            let (username, role, kind, id) = try row.decode((String, String, String?, String?).self)
            if records.last?.user.username != username {
                records.append(UserRecord(user: try Self.user(username: username, role: role), grants: []))
            }
            if let kind, let id {
                guard let grantKind = GrantKind(rawValue: kind) else {
                    throw StoreError.corrupted("A grant of \(username) has an unknown kind.")
                }
                records[records.count - 1].grants.append(Grant(kind: grantKind, id: id))
            }
        }
        return records
    }

    public func addGrant(_ grant: Grant, to username: String) async throws {
        guard Self.storable(username), Self.storable(grant.id) else {
            throw StoreError.notFound("User \(username) not found.")
        }
        // Inserted only while the user exists; the foreign key stops a user removed in between.
        let rows = try await database.query(
            """
            WITH found AS (SELECT username FROM token_users WHERE username = \(username) FOR SHARE),
            added AS (
                INSERT INTO token_grants (username, kind, resource_id)
                SELECT username, \(grant.kind.rawValue), \(grant.id) FROM found ON CONFLICT DO NOTHING)
            SELECT count(*) FROM found
            """
        )
        guard try rows.first?.decode(Int64.self) == 1 else { throw StoreError.notFound("User \(username) not found.") }
    }

    public func removeGrant(_ grant: Grant, from username: String) async throws {
        let rows =
            Self.storable(username) && Self.storable(grant.id)
            ? try await database.query(
                """
                DELETE FROM token_grants
                WHERE username = \(username) AND kind = \(grant.kind.rawValue) AND resource_id = \(grant.id)
                RETURNING 1
                """
            ) : []
        guard !rows.isEmpty else {
            throw StoreError.notFound("User \(username) holds no grant for \(grant.kind) \(grant.id).")
        }
    }
}

// MARK: - Sessions

extension PostgresTokenServerStore {
    public func addSession(_ session: SessionRecord) async throws {
        _ = try await database.query(
            """
            WITH expired AS (DELETE FROM token_sessions WHERE expires_at <= \(session.createdAt.epochSeconds))
            INSERT INTO token_sessions (token_hash, username, created_at, expires_at)
            VALUES (\(session.tokenHash), \(session.username), \(session.createdAt.epochSeconds),
                    \(session.expiresAt.epochSeconds))
            """
        )
    }

    public func sessionUser(tokenHash: String, at now: Date, holding grant: Grant?) async throws
        -> (user: AppUser, granted: Bool)?
    {
        guard Self.storable(tokenHash) else { return nil }
        let kind = grant?.kind.rawValue ?? ""
        let id = grant.flatMap { Self.storable($0.id) ? $0.id : nil } ?? ""
        let rows = try await database.execute(
            SessionUser(tokenHash: tokenHash, now: now.epochSeconds, kind: kind, id: id)
        )
        guard let (username, role, granted) = rows.first else { return nil }
        return (try Self.user(username: username, role: role), grant != nil && !id.isEmpty && granted)
    }

    public func removeSession(tokenHash: String) async throws {
        guard Self.storable(tokenHash) else { return }
        _ = try await database.query("DELETE FROM token_sessions WHERE token_hash = \(tokenHash)")
    }
}

/// A token request's lookup, prepared: the session's user and whether it holds the grant, in one statement.
struct SessionUser: PostgresPreparedStatement {
    static let name = "fleetauth_token_server_session_user"
    static let sql = """
        SELECT u.username, u.role, EXISTS (
            SELECT 1 FROM token_grants g WHERE g.username = u.username AND g.kind = $3 AND g.resource_id = $4)
        FROM token_sessions s JOIN token_users u ON u.username = s.username
        WHERE s.token_hash = $1 AND s.expires_at > $2
        """
    typealias Row = (String, String, Bool)

    var tokenHash: String
    var now: Int64
    var kind: String
    var id: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(tokenHash)
        bindings.append(now)
        bindings.append(kind)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
