import Foundation
import PostgresNIO

extension PostgresURL {
    /// Runs `body` with the URL of a new, empty database on this server (this URL names a database to connect to
    /// as an administrator, such as `postgres`), and drops it afterwards — whether `body` returns or throws —
    /// closing any connection still open to it. For tests and benchmarks.
    package func withTemporaryDatabase<Result>(
        prefix: String,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresURL) async throws -> Result
    ) async throws -> Result {
        var url = self
        url.database = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let name = url.database
        try await PostgreSQLDatabase.withDatabase(self, migrations: nil, maximumConnections: 1) { admin in
            _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        let result: Result
        do {
            result = try await body(url)
        } catch {
            try? await dropDatabase(name)
            throw error
        }
        try await dropDatabase(name)
        return result
    }

    private func dropDatabase(_ name: String) async throws {
        try await PostgreSQLDatabase.withDatabase(self, migrations: nil, maximumConnections: 1) { admin in
            _ = try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }
}
