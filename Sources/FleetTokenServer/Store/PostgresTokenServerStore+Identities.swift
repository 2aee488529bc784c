import FleetAuthCore
import FleetAuthDatabase
import FleetAuthServerCore
public import Foundation
import PostgresNIO

extension PostgresTokenServerStore {
    static let identitiesMigration = PostgresMigrations.Step(
        version: 2,
        name: "identities linked to users",
        statements: [
            """
            CREATE TABLE token_identities (
                issuer TEXT COLLATE "C" NOT NULL, subject TEXT COLLATE "C" NOT NULL,
                username TEXT COLLATE "C" NOT NULL REFERENCES token_users (username) ON DELETE CASCADE,
                PRIMARY KEY (issuer, subject))
            """,
            "CREATE INDEX token_identities_by_user ON token_identities (username)",
        ]
    )

    private static func storable(_ identity: ExternalIdentity) -> Bool {
        storable(identity.issuer) && storable(identity.subject)
    }

    public func addUser(_ user: AppUser, passwordHash: String, createdAt: Date, identity: ExternalIdentity)
        async throws
    {
        guard Self.storable(user.username), Self.storable(identity) else {
            throw StoreError.corrupted("A username or identity cannot contain NUL.")
        }
        try await database.transaction { connection in
            var added = false
            for try await _ in try await connection.query(
                """
                INSERT INTO token_users (username, role, password_hash, created_at)
                VALUES (\(user.username), \(user.role.rawValue), \(passwordHash), \(createdAt.epochSeconds))
                ON CONFLICT DO NOTHING RETURNING 1
                """,
                logger: self.database.logger
            ) {
                added = true
            }
            guard added else { throw StoreError.alreadyExists("User \(user.username) already exists.") }
            try await Self.insert(identity, username: user.username, connection, self.database)
        }
    }

    public func linkIdentity(_ identity: ExternalIdentity, to username: String) async throws {
        guard Self.storable(username), Self.storable(identity) else {
            throw StoreError.notFound("User \(username) not found.")
        }
        try await database.transaction { connection in
            var found = false
            for try await _ in try await connection.query(
                "SELECT 1 FROM token_users WHERE username = \(username) FOR SHARE",
                logger: self.database.logger
            ) {
                found = true
            }
            guard found else { throw StoreError.notFound("User \(username) not found.") }
            try await Self.insert(identity, username: username, connection, self.database)
        }
    }

    private static func insert(
        _ identity: ExternalIdentity,
        username: String,
        _ connection: PostgresConnection,
        _ database: PostgreSQLDatabase
    ) async throws {
        var inserted = false
        for try await _ in try await connection.query(
            """
            INSERT INTO token_identities (issuer, subject, username)
            VALUES (\(identity.issuer), \(identity.subject), \(username)) ON CONFLICT DO NOTHING RETURNING 1
            """,
            logger: database.logger
        ) {
            inserted = true
        }
        guard inserted else { throw StoreError.alreadyExists("The identity \(identity) is already linked to a user.") }
    }

    public func linkedUser(issuer: String, subject: String, matchingUnqualified: Bool) async throws -> AppUser? {
        guard Self.storable(issuer), Self.storable(subject) else { return nil }
        let rows = try await database.query(
            """
            SELECT u.username, u.role FROM token_identities i JOIN token_users u ON u.username = i.username
            WHERE i.subject = \(subject) AND (i.issuer = \(issuer) OR (\(matchingUnqualified) AND i.issuer = ''))
            ORDER BY i.issuer DESC LIMIT 1
            """
        )
        guard let row = rows.first else { return nil }
        let (username, role) = try row.decode((String, String).self)
        guard let parsed = AppUserRole(rawValue: role) else {
            throw StoreError.corrupted("User \(username) has an unknown role.")
        }
        return AppUser(username: username, role: parsed)
    }

    public func identities() async throws -> [String: [ExternalIdentity]] {
        var result: [String: [ExternalIdentity]] = [:]
        for row in try await database.query(
            "SELECT username, issuer, subject FROM token_identities ORDER BY username, issuer, subject"
        ) {
            let (username, issuer, subject) = try row.decode((String, String, String).self)
            result[username, default: []].append(ExternalIdentity(issuer: issuer, subject: subject))
        }
        return result
    }
}
