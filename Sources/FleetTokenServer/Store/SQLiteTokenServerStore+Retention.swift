import FleetAuthCore
public import Foundation
import GRDB

// MARK: - Retention

extension SQLiteTokenServerStore {
    public func pruneAudit(issuedBefore cutoff: Date, limit: Int) async throws -> Int {
        try await database.writeAlone { db in
            try db.cachedStatement(
                sql: """
                    DELETE FROM audit WHERE id IN (
                        SELECT id FROM audit WHERE issued_at < ? ORDER BY issued_at LIMIT ?)
                    """
            ).execute(arguments: [cutoff.epochSeconds, limit])
            return db.changesCount
        }
    }

    public func pruneExpired(at now: Date, limit: Int) async throws -> Int {
        try await database.writeAlone { db in
            try db.cachedStatement(
                sql: """
                    DELETE FROM sessions WHERE token_hash IN (
                        SELECT token_hash FROM sessions WHERE expires_at <= ? LIMIT ?)
                    """
            ).execute(arguments: [now.epochSeconds, limit])
            var removed = db.changesCount
            try db.cachedStatement(
                sql: """
                    DELETE FROM login_failures WHERE key IN (
                        SELECT key FROM login_failures WHERE forget_after_ms <= ? LIMIT ?)
                    """
            ).execute(arguments: [now.epochMilliseconds, limit])
            removed += db.changesCount
            return removed
        }
    }
}
