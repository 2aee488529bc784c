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
    /// The file the database was opened from, and which file that was (nil in memory): see ``SQLiteFileIdentity``.
    private let file: (path: String, identity: SQLiteFileIdentity)?

    /// Opens (creating if needed) the database file at `path` and migrates it; `label` names it in the log.
    ///
    /// A database that opens but cannot be written (a read-only file, directory or file system) is found out here,
    /// by one small write, so the server reports it not ready from the start rather than after its first refused
    /// write.
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
        guard let identity = SQLiteFileIdentity(path: path) else {
            throw .unavailable("Cannot open the database \(path): the file disappeared while it was opened.")
        }
        file = (path, identity)
        do {
            // Creating and dropping a table in one transaction writes pages at commit, and leaves nothing behind.
            try writer.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS fleetauth_write_probe (data BLOB)")
                try db.execute(sql: "DROP TABLE fleetauth_write_probe")
            }
        } catch {
            _ = health.failed(error)
        }
    }

    /// A private in-memory database, migrated.
    package init(inMemoryWith migrator: DatabaseMigrator, label: String = "the database") throws(StoreError) {
        health = SQLiteWriteHealth(label: label)
        file = nil
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
    /// A database whose file was deleted or replaced refuses every write from then on (``SQLiteFileIdentity``).
    package func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkFile()
        let value: T
        do {
            value = try await batches.write(updates)
        } catch {
            throw health.failed(error)
        }
        try checkFile()
        health.succeeded()
        return value
    }

    /// Throws ``StoreError/unavailable(_:)`` once the database's file is not the one it opened.
    private func checkFile() throws {
        if let lost = health.lostFile { throw StoreError.unavailable(lost) }
        guard let file, let change = file.identity.change(at: file.path) else { return }
        throw StoreError.unavailable(health.lost(change))
    }

    /// Runs `updates` in a transaction of its own (for writes that are rare, or must not share one), with
    /// ``write(_:)``'s answer to a full disk.
    package func writeAlone<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkFile()
        let value: T
        do {
            value = try await writer.write(updates)
        } catch {
            throw health.failed(error)
        }
        try checkFile()
        health.succeeded()
        return value
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
    ///
    /// A file deleted or replaced is found here too, before any write meets it; that state does not end.
    package func storageProblem() async -> String? {
        do {
            try checkFile()
        } catch {
            return health.problem
        }
        guard health.problem != nil else { return nil }
        do {
            try await writeAlone(Self.probe)
            try await writer.write { db in try db.execute(sql: "DROP TABLE IF EXISTS fleetauth_space_probe") }
        } catch {
            // Still failing: the health says why.
        }
        return health.problem
    }

    /// A write that needs room: 64 KiB in a table of its own (dropped by the caller once it succeeded).
    private static let probe: @Sendable (Database) throws -> Void = { db in
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS fleetauth_space_probe (data BLOB NOT NULL)")
        try db.execute(sql: "INSERT INTO fleetauth_space_probe (data) VALUES (zeroblob(65536))")
    }

    /// Waits for graceful shutdown, then closes the database.
    package func run() async throws {
        try? await gracefulShutdown()
        try writer.close()
    }
}
