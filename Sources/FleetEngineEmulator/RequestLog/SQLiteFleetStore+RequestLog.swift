import FleetAuthDatabase
import Foundation
import GRDB

/// The request log on SQLite, in a database of its own (``SQLiteFleetStore/logDatabase``): numbered by an
/// `AUTOINCREMENT` key, so a number is never given twice, even after the entries that held the highest were deleted.
extension SQLiteFleetStore {
    static var requestLogMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: request log") { db in try createRequestLog(db) }
        return migrator
    }

    static func createRequestLog(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE request_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, provider TEXT NOT NULL, ts INTEGER NOT NULL,
                    body BLOB NOT NULL);
                CREATE INDEX request_log_by_provider ON request_log (provider, ts, id);
                CREATE INDEX request_log_by_time ON request_log (ts);
                """
        )
    }

    package func appendLogEntries(_ entries: [StoredLogEntry]) async throws {
        // Transactions of a few hundred entries each, so a read waits for at most one of them.
        for start in stride(from: 0, to: entries.count, by: Self.logBatch) {
            let batch = entries[start..<min(start + Self.logBatch, entries.count)]
            try await logDatabase.writeAlone { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO request_log (provider, ts, body) VALUES (?, ?, ?)"
                )
                for entry in batch {
                    try insert.execute(arguments: [entry.provider, entry.timestamp, Data(entry.body)])
                }
            }
        }
    }

    /// The most entries one transaction writes.
    static let logBatch = 200

    package func logEntries(
        providers: [String],
        descending: Bool,
        after position: LogPosition?,
        notBefore: Int64,
        limit: Int
    ) async throws -> [(position: LogPosition, body: [UInt8])] {
        guard !providers.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: providers.count).joined(separator: ", ")
        var sql = "SELECT id, ts, body FROM request_log WHERE provider IN (\(marks)) AND ts >= ?"
        var arguments = StatementArguments(providers) + [notBefore]
        if let position {
            sql += descending ? " AND (ts, id) < (?, ?)" : " AND (ts, id) > (?, ?)"
            arguments += [position.timestamp, position.id]
        }
        sql += descending ? " ORDER BY ts DESC, id DESC LIMIT ?" : " ORDER BY ts, id LIMIT ?"
        arguments += [limit]
        let (query, values) = (sql, arguments)
        return try await logDatabase.writer.read { db in
            try Row.fetchAll(db.cachedStatement(sql: query), arguments: values).map {
                (LogPosition(timestamp: $0["ts"], id: $0["id"]), [UInt8]($0["body"] as Data))
            }
        }
    }

    package func trimLog(keepingLatest count: Int, before: Int64) async throws {
        try await logDatabase.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM request_log WHERE ts < ?").execute(arguments: [before])
            try db.cachedStatement(
                sql: "DELETE FROM request_log WHERE id <= (SELECT max(id) FROM request_log) - ?"
            ).execute(arguments: [count])
        }
    }

    package func deleteLogEntries(provider: String) async throws {
        try await logDatabase.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM request_log WHERE provider = ?").execute(arguments: [provider])
        }
    }
}
