import FleetAuthCore
import FleetAuthDatabase
public import Foundation
import GRDB

extension SQLiteTokenServerStore {
    private static func throttleEntries(_ db: Database, keys: [String], at now: Date) throws -> [String: ThrottleEntry]
    {
        var found: [String: ThrottleEntry] = [:]
        let statement = try db.cachedStatement(
            sql: """
                SELECT failures, first_failure_ms, locked_until_ms, forget_after_ms FROM login_failures
                WHERE key = ? AND forget_after_ms > ?
                """
        )
        for key in keys {
            guard let row = try Row.fetchOne(statement, arguments: [key, now.epochMilliseconds]) else { continue }
            found[key] = ThrottleEntry(
                failures: row["failures"],
                firstFailure: Date(epochMilliseconds: row["first_failure_ms"]),
                lockedUntil: (row["locked_until_ms"] as Int64?).map(Date.init(epochMilliseconds:)),
                forgetAfter: Date(epochMilliseconds: row["forget_after_ms"])
            )
        }
        return found
    }

    public func throttleEntries(keys: [String], at now: Date) async throws -> [String: ThrottleEntry] {
        let keys = keys.filter(StoredText.isStorable)
        return try await writer.read { db in try Self.throttleEntries(db, keys: keys, at: now) }
    }

    public func updateThrottleEntries(
        keys: [String],
        at now: Date,
        _ update: @escaping @Sendable ([String: ThrottleEntry]) -> [String: ThrottleEntry]
    ) async throws {
        let keys = keys.filter(StoredText.isStorable)
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM login_failures WHERE forget_after_ms <= ?").execute(arguments: [
                now.epochMilliseconds
            ])
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO login_failures
                        (key, failures, first_failure_ms, locked_until_ms, forget_after_ms) VALUES (?, ?, ?, ?, ?)
                    """
            )
            for (key, entry) in update(try Self.throttleEntries(db, keys: keys, at: now))
            where StoredText.isStorable(key) {
                try statement.execute(arguments: [
                    key, entry.failures, entry.firstFailure.epochMilliseconds,
                    entry.lockedUntil?.epochMilliseconds, entry.forgetAfter.epochMilliseconds,
                ])
            }
        }
    }

    public func removeThrottleEntries(keys: [String]) async throws {
        try await database.writeAlone { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM login_failures WHERE key = ?")
            for key in keys where StoredText.isStorable(key) { try statement.execute(arguments: [key]) }
        }
    }
}
