import FleetAuthDatabase
import GRDB

/// The request log's table on SQLite (migration v9): numbered by an `AUTOINCREMENT` key, so a number is never
/// given twice, even after the entries that held the highest were deleted.
extension SQLiteFleetStore {
    static func createRequestLog(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE request_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, provider TEXT NOT NULL, ts INTEGER NOT NULL,
                    body TEXT NOT NULL);
                CREATE INDEX request_log_by_provider ON request_log (provider, ts, id);
                CREATE INDEX request_log_by_time ON request_log (ts);
                """
        )
    }

    package func appendLogEntries(_ entries: [StoredLogEntry]) async throws {
        guard !entries.isEmpty else { return }
        // A transaction of its own: a batch of entries must not hold up the fleet's writes that share a commit.
        try await database.writeAlone { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO request_log (provider, ts, body) VALUES (?, ?, ?)")
            for entry in entries { try insert.execute(arguments: [entry.provider, entry.timestamp, entry.body]) }
        }
    }

    package func logEntries(
        providers: [String],
        descending: Bool,
        after position: LogPosition?,
        notBefore: Int64,
        limit: Int
    ) async throws -> [(position: LogPosition, body: String)] {
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
        return try await writer.read { db in
            try Row.fetchAll(db.cachedStatement(sql: query), arguments: values).map {
                (LogPosition(timestamp: $0["ts"], id: $0["id"]), $0["body"])
            }
        }
    }

    package func trimLog(keepingLatest count: Int, before: Int64) async throws {
        try await database.writeAlone { db in
            try db.cachedStatement(sql: "DELETE FROM request_log WHERE ts < ?").execute(arguments: [before])
            try db.cachedStatement(
                sql: "DELETE FROM request_log WHERE id <= (SELECT max(id) FROM request_log) - ?"
            ).execute(arguments: [count])
        }
    }
}
