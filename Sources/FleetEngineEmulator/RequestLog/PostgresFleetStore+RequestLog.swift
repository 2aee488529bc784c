import FleetAuthDatabase
import NIOCore
import PostgresNIO

/// The request log's table on PostgreSQL (migration step 9), shared by every emulator on the database: numbered by
/// one identity column, so entries of every instance are read in one order.
extension PostgresFleetStore {
    static let requestLogTable = PostgresMigrations.Step(
        version: 9,
        name: "request log",
        statements: [
            """
            CREATE TABLE emulator_request_log (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, provider TEXT COLLATE "C" NOT NULL,
                ts BIGINT NOT NULL, body BYTEA NOT NULL)
            """,
            "CREATE INDEX emulator_request_log_by_provider ON emulator_request_log (provider, ts, id)",
            "CREATE INDEX emulator_request_log_by_time ON emulator_request_log (ts)",
        ]
    )

    package func appendLogEntries(_ entries: [StoredLogEntry]) async throws {
        guard !entries.isEmpty else { return }
        // One statement for the batch; `WITH ORDINALITY` keeps the batch's order in the numbers given.
        _ = try await database.query(
            """
            INSERT INTO emulator_request_log (provider, ts, body)
            SELECT p, t, b FROM unnest(\(entries.map(\.provider))::text[], \(entries.map(\.timestamp))::int8[],
                \(entries.map { ByteBuffer(bytes: $0.body) })::bytea[]) WITH ORDINALITY AS x(p, t, b, n)
            ORDER BY n
            """
        )
    }

    package func logEntries(
        providers: [String],
        descending: Bool,
        after position: LogPosition?,
        notBefore: Int64,
        limit: Int
    ) async throws -> [(position: LogPosition, body: [UInt8])] {
        guard !providers.isEmpty else { return [] }
        let (timestamp, id) = position.map { ($0.timestamp, $0.id) } ?? (descending ? (.max, .max) : (-1, -1))
        let query: PostgresQuery =
            descending
            ? """
            SELECT id, ts, body FROM emulator_request_log
            WHERE provider = ANY(\(providers)::text[]) AND ts >= \(notBefore) AND (ts, id) < (\(timestamp), \(id))
            ORDER BY ts DESC, id DESC LIMIT \(limit)
            """
            : """
            SELECT id, ts, body FROM emulator_request_log
            WHERE provider = ANY(\(providers)::text[]) AND ts >= \(notBefore) AND (ts, id) > (\(timestamp), \(id))
            ORDER BY ts, id LIMIT \(limit)
            """
        return try await database.query(query).map { row in
            let (id, timestamp, body) = try row.decode((Int64, Int64, ByteBuffer).self)
            return (LogPosition(timestamp: timestamp, id: id), Array(body.readableBytesView))
        }
    }

    package func trimLog(keepingLatest count: Int, before: Int64) async throws {
        _ = try await database.query("DELETE FROM emulator_request_log WHERE ts < \(before)")
        _ = try await database.query(
            """
            DELETE FROM emulator_request_log
            WHERE id <= (SELECT max(id) FROM emulator_request_log) - \(Int64(count))
            """
        )
    }

    package func deleteLogEntries(provider: String) async throws {
        _ = try await database.query("DELETE FROM emulator_request_log WHERE provider = \(provider)")
    }
}
