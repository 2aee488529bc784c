import FleetAuthCore
import FleetAuthServerCore
import Foundation
import GRDB

extension SQLiteTokenServerStore {
    public func append(contentsOf entries: [AuditEntry]) async throws {
        try await database.writeAlone { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO audit (issued_at, username, token_type, scope, kid, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            )
            for entry in entries {
                try statement.execute(
                    arguments: [
                        entry.issuedAt.epochSeconds, entry.username, entry.endpoint.name, entry.scope, entry.kid,
                        entry.expiresAt.epochSeconds,
                    ])
            }
        }
    }

    public func recentEntries(limit: Int) async throws -> [AuditEntry] {
        try await writer.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT issued_at, username, token_type, scope, kid, expires_at FROM audit
                        ORDER BY id DESC LIMIT ?
                        """
                ),
                arguments: [limit]
            ).map { row in
                guard let endpoint = TokenServerEndpoint(name: row["token_type"]) else {
                    throw StoreError.corrupted("An audit entry names an unknown endpoint.")
                }
                return AuditEntry(
                    issuedAt: Date(epochSeconds: row["issued_at"]),
                    username: row["username"],
                    endpoint: endpoint,
                    scope: row["scope"],
                    kid: row["kid"],
                    expiresAt: Date(epochSeconds: row["expires_at"])
                )
            }
        }
    }
}
