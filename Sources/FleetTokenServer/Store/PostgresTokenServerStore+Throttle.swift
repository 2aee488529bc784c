import FleetAuthCore
public import Foundation
import NIOCore
import PostgresNIO

// MARK: - Login throttle

extension PostgresTokenServerStore {
    private static func throttleEntries(_ rows: [PostgresRow]) throws -> [String: ThrottleEntry] {
        var found: [String: ThrottleEntry] = [:]
        for row in rows {
            let (key, failures, first, lockedUntil, forgetAfter) = try row.decode(
                (String, Int32, Int64, Int64?, Int64).self
            )
            found[key] = ThrottleEntry(
                failures: Int(failures),
                firstFailure: Date(epochMilliseconds: first),
                lockedUntil: lockedUntil.map(Date.init(epochMilliseconds:)),
                forgetAfter: Date(epochMilliseconds: forgetAfter)
            )
        }
        return found
    }

    private static func selectEntries(keys: [String], at now: Date) -> PostgresQuery {
        """
        SELECT key, failures, first_failure_ms, locked_until_ms, forget_after_ms FROM token_login_failures
        WHERE key = ANY(\(keys)) AND forget_after_ms > \(now.epochMilliseconds)
        """
    }

    public func throttleEntries(keys: [String], at now: Date) async throws -> [String: ThrottleEntry] {
        let keys = keys.filter(Self.storable)
        guard !keys.isEmpty else { return [:] }
        let rows = try await database.query(Self.selectEntries(keys: keys, at: now))
        return try Self.throttleEntries(rows)
    }

    public func updateThrottleEntries(
        keys: [String],
        at now: Date,
        _ update: @escaping @Sendable ([String: ThrottleEntry]) -> [String: ThrottleEntry]
    ) async throws {
        let keys = keys.filter(Self.storable)
        guard !keys.isEmpty else { return }
        try await database.transaction { connection in
            let logger = self.database.logger
            // Each key's lock, taken in one order by every instance, so two updates of a key run one after the other.
            try await connection.query(
                """
                SELECT pg_advisory_xact_lock(h) FROM (
                    SELECT DISTINCT hashtextextended(k, 1179403339) AS h FROM unnest(\(keys)::text[]) AS k ORDER BY h
                ) AS locks
                """,
                logger: logger
            )
            try await connection.query(
                "DELETE FROM token_login_failures WHERE forget_after_ms <= \(now.epochMilliseconds)",
                logger: logger
            )
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(Self.selectEntries(keys: keys, at: now), logger: logger) {
                rows.append(row)
            }
            let current = try Self.throttleEntries(rows)
            for (key, entry) in update(current) where Self.storable(key) {
                try await connection.query(
                    """
                    INSERT INTO token_login_failures (key, failures, first_failure_ms, locked_until_ms, forget_after_ms)
                    VALUES (\(key), \(Int32(clamping: entry.failures)), \(entry.firstFailure.epochMilliseconds),
                            \(entry.lockedUntil?.epochMilliseconds), \(entry.forgetAfter.epochMilliseconds))
                    ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
                        first_failure_ms = excluded.first_failure_ms, locked_until_ms = excluded.locked_until_ms,
                        forget_after_ms = excluded.forget_after_ms
                    """,
                    logger: logger
                )
            }
        }
    }

    public func removeThrottleEntries(keys: [String]) async throws {
        let keys = keys.filter(Self.storable)
        guard !keys.isEmpty else { return }
        _ = try await database.query("DELETE FROM token_login_failures WHERE key = ANY(\(keys))")
    }
}
