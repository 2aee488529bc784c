package import FleetAuthServerCore
package import GRDB
import ServiceLifecycle

/// A SQLite database the way both servers keep one: a file in WAL mode with `synchronous = NORMAL` (a committed
/// write survives a crash of the process, `kill -9` included, and readers never wait for the writer), a 5-second
/// busy timeout so a second process (`fleetauth users` next to a running server) waits its turn instead of
/// failing, foreign keys on, and the store's versioned migrations applied at open.
///
/// As a service it keeps the database open until graceful shutdown and then closes it; list it before the
/// services that use it in a `ServiceGroup`, which shuts services down in reverse order.
package final class SQLiteDatabase: Service, Sendable {
    /// Reads and writes.
    package let writer: any DatabaseWriter
    /// Writes that share transactions under load: what a store's frequent updates go through.
    package let batches: SQLiteGroupCommit
    /// Key lookups that share a reader's turn under load.
    package let lookups: SQLiteGroupRead
    /// Whether writes succeed (a full disk makes them fail until there is room): what `/readyz` says of the store.
    package let health: SQLiteWriteHealth

    /// Opens (creating if needed) the database file at `path` and migrates it; `label` names it in the log.
    package init(path: String, migrator: DatabaseMigrator, label: String = "the database") throws(StoreError) {
        health = SQLiteWriteHealth(label: label)
        var configuration = Self.configuration
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        PrivateFiles.database(path)
        do {
            writer = try DatabasePool(path: path, configuration: configuration)
            batches = SQLiteGroupCommit(writer)
            lookups = SQLiteGroupRead(writer)
            try migrator.migrate(writer)
        } catch {
            throw .unavailable("Cannot open the database \(path): \(error)")
        }
    }

    /// A private in-memory database, migrated.
    package init(inMemoryWith migrator: DatabaseMigrator, label: String = "the database") throws(StoreError) {
        health = SQLiteWriteHealth(label: label)
        do {
            writer = try DatabaseQueue(configuration: Self.configuration)
            batches = SQLiteGroupCommit(writer)
            lookups = SQLiteGroupRead(writer)
            try migrator.migrate(writer)
        } catch {
            throw .unavailable("Cannot open an in-memory database: \(error)")
        }
    }

    private static var configuration: Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        return configuration
    }

    /// Runs `updates` in a transaction, shared with the writes queued beside it (``SQLiteGroupCommit``); returns
    /// once that transaction committed. An error thrown by `updates` undoes its own writes and no others; a full
    /// disk is ``StoreError/unavailable(_:)`` in words (see ``SQLiteWriteHealth``).
    package func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            let value = try await batches.write(updates)
            health.succeeded()
            return value
        } catch {
            throw health.failed(error)
        }
    }

    /// Runs `updates` in a transaction of its own (for writes that are rare, or must not share one), with
    /// ``write(_:)``'s answer to a full disk.
    package func writeAlone<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            let value = try await writer.write(updates)
            health.succeeded()
            return value
        } catch {
            throw health.failed(error)
        }
    }

    /// Runs `value`, a short read (a lookup by key), sharing a reader's turn with the reads queued beside it
    /// (``SQLiteGroupRead``): it sees every write committed before it was called. Long reads (lists, searches)
    /// go to `writer.read`, where they do not hold up the lookups queued behind them.
    package func lookup<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await lookups.read(value)
    }

    /// Why the database cannot be written now, or nil. While writes fail (``SQLiteWriteHealth``) it tries one itself,
    /// so a server that a load balancer stopped sending writes to (its `/readyz` failing) still finds out when
    /// there is room again: 64 KiB in a table of its own, committed and then dropped.
    package func storageProblem() async -> String? {
        guard health.problem != nil else { return nil }
        do {
            try await writeAlone { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS fleetauth_space_probe (data BLOB NOT NULL)")
                try db.execute(sql: "INSERT INTO fleetauth_space_probe (data) VALUES (zeroblob(65536))")
            }
            try await writer.write { db in try db.execute(sql: "DROP TABLE IF EXISTS fleetauth_space_probe") }
        } catch {
            // Still failing: the health says why.
        }
        return health.problem
    }

    /// Waits for graceful shutdown, then closes the database.
    package func run() async throws {
        try? await gracefulShutdown()
        try writer.close()
    }
}
