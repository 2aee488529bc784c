import FleetAuthCore
public import Foundation
import PostgresNIO

// MARK: - Retention

extension PostgresTokenServerStore {
    public func pruneAudit(issuedBefore cutoff: Date, limit: Int) async throws -> Int {
        try await database.transaction { connection in
            // One instance prunes at a time; the others find the lock taken and leave it to it.
            var locked = false
            for try await row in try await connection.query(
                "SELECT pg_try_advisory_xact_lock(\(Self.pruningLock))",
                logger: self.database.logger
            ) {
                locked = try row.decode(Bool.self)
            }
            guard locked else { return 0 }
            var removed = 0
            for try await row in try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM token_audit WHERE id IN (
                        SELECT id FROM token_audit WHERE issued_at < \(cutoff.epochSeconds)
                        ORDER BY issued_at LIMIT \(limit))
                    RETURNING 1)
                SELECT count(*) FROM gone
                """,
                logger: self.database.logger
            ) {
                removed = Int(try row.decode(Int64.self))
            }
            return removed
        }
    }

    public func pruneExpired(at now: Date, limit: Int) async throws -> Int {
        let rows = try await database.query(
            """
            WITH sessions AS (
                DELETE FROM token_sessions WHERE token_hash IN (
                    SELECT token_hash FROM token_sessions WHERE expires_at <= \(now.epochSeconds) LIMIT \(limit))
                RETURNING 1),
            failures AS (
                DELETE FROM token_login_failures WHERE key IN (
                    SELECT key FROM token_login_failures WHERE forget_after_ms <= \(now.epochMilliseconds) LIMIT \(limit))
                RETURNING 1)
            SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM failures)
            """
        )
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }
}
