import ArgumentParser
import FleetAuthDatabase
import FleetAuthServerCore
import Foundation

/// How long a server waits for PostgreSQL before answering 504 or 503 (`--database-timeout`, `--database-down-timeout`).
struct DatabaseTimeoutOptions: ParsableArguments {
    @Option(
        help: """
            With --database: seconds a request may wait for PostgreSQL (a connection and its statement) before it is \
            answered 504 DEADLINE_EXCEEDED, saying that a change it asked for may still be applied.
            """
    )
    var databaseTimeout: Double = 10
    @Option(
        help: """
            With --database: seconds a request waits once PostgreSQL is known to be down (503 UNAVAILABLE with \
            Retry-After when it refuses connections, 504 when it stops answering); requests already waiting when it \
            goes down are held no longer; the first request that reaches it again restores --database-timeout.
            """
    )
    var databaseDownTimeout: Double = 1

    func validate() throws {
        for (name, value) in [
            ("--database-timeout", databaseTimeout), ("--database-down-timeout", databaseDownTimeout),
        ]
        where !(value > 0 && value.isFinite) {
            throw ValidationError("\(name) must be more than 0 seconds.")
        }
    }

    var timeouts: DatabaseTimeouts {
        DatabaseTimeouts(
            statementLimit: .milliseconds(Int64(databaseTimeout * 1000)),
            unreachableLimit: .milliseconds(Int64(databaseDownTimeout * 1000))
        )
    }
}

/// `--database` and `DATABASE_URL`: where a server keeps its state when not in SQLite.
enum DatabaseOption {
    /// The PostgreSQL URL from `--database`, else from `DATABASE_URL` (ignored with `--in-memory`), or nil for
    /// SQLite. A malformed URL is a CLI error that names what is wrong and never shows the password.
    static func postgres(_ option: String?, inMemory: Bool = false) throws -> PostgresURL? {
        let environment = inMemory ? nil : ProcessInfo.processInfo.environment["DATABASE_URL"]
        guard let text = option ?? environment.flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        do {
            return try PostgresURL(text)
        } catch {
            throw CLIError(error.message)
        }
    }
}
