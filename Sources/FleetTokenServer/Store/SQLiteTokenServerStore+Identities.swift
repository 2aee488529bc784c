import FleetAuthCore
import FleetAuthDatabase
import FleetAuthServerCore
public import Foundation
import GRDB

extension SQLiteTokenServerStore {
    static let identitiesMigration = """
        CREATE TABLE identities (
            issuer TEXT NOT NULL, subject TEXT NOT NULL,
            username TEXT NOT NULL REFERENCES users(username) ON DELETE CASCADE,
            PRIMARY KEY (issuer, subject)) WITHOUT ROWID;
        CREATE INDEX identities_by_user ON identities (username);
        """

    private static func storable(_ identity: ExternalIdentity) -> Bool {
        StoredText.isStorable(identity.issuer) && StoredText.isStorable(identity.subject)
    }

    private static func insert(_ identity: ExternalIdentity, username: String, _ db: Database) throws {
        guard
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM identities WHERE issuer = ? AND subject = ?"),
                arguments: [identity.issuer, identity.subject]
            ) == nil
        else { throw StoreError.alreadyExists("The identity \(identity) is already linked to a user.") }
        try db.cachedStatement(sql: "INSERT INTO identities (issuer, subject, username) VALUES (?, ?, ?)")
            .execute(arguments: [identity.issuer, identity.subject, username])
    }

    public func addUser(_ user: AppUser, passwordHash: String, createdAt: Date, identity: ExternalIdentity)
        async throws
    {
        guard StoredText.isStorable(user.username), Self.storable(identity) else {
            throw StoreError.corrupted("A username or identity cannot contain NUL.")
        }
        try await database.writeAlone { db in
            try Self.insert(user, passwordHash: passwordHash, createdAt: createdAt, db)
            try Self.insert(identity, username: user.username, db)
        }
    }

    public func linkIdentity(_ identity: ExternalIdentity, to username: String) async throws {
        guard StoredText.isStorable(username), Self.storable(identity) else {
            throw StoreError.notFound("User \(username) not found.")
        }
        try await database.writeAlone { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM users WHERE username = ?"),
                    arguments: [username]
                ) != nil
            else { throw StoreError.notFound("User \(username) not found.") }
            try Self.insert(identity, username: username, db)
        }
    }

    public func linkedUser(issuer: String, subject: String, matchingUnqualified: Bool) async throws -> AppUser? {
        guard StoredText.isStorable(issuer), StoredText.isStorable(subject) else { return nil }
        return try await database.writer.read { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT users.username, users.role FROM identities JOIN users USING (username)
                            WHERE identities.subject = ? AND (identities.issuer = ? OR (? AND identities.issuer = ''))
                            ORDER BY identities.issuer DESC LIMIT 1
                            """
                    ),
                    arguments: [subject, issuer, matchingUnqualified]
                )
            else { return nil }
            guard let role = AppUserRole(rawValue: row["role"]) else {
                throw StoreError.corrupted("User \(row["username"] as String) has an unknown role.")
            }
            return AppUser(username: row["username"], role: role)
        }
    }

    public func identities() async throws -> [String: [ExternalIdentity]] {
        try await database.writer.read { db in
            var result: [String: [ExternalIdentity]] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT username, issuer, subject FROM identities ORDER BY username, issuer, subject"
            ) {
                result[row["username"], default: []].append(
                    ExternalIdentity(issuer: row["issuer"], subject: row["subject"])
                )
            }
            return result
        }
    }
}
