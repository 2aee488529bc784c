package import FleetAuthServerCore
import Foundation
package import Logging
import NIOCore
package import PostgresNIO
import ServiceLifecycle

/// A PostgreSQL database opened one way for every store: a pool of connections (postgres-nio's `PostgresClient`),
/// checked at open so that a refused connection or wrong credentials are a clear error then, not at the first
/// request; and versioned migrations applied once, under an advisory lock, so that several instances starting at
/// once on one database neither race nor apply a step twice.
///
/// The pool runs in a scope (``PostgresPools``):
/// ``withDatabase(_:migrations:maximumConnections:reservedConnections:settings:logger:isolation:_:)`` for one
/// database, ``PostgresPools/withPools(_:)`` for several; it is closed when the scope ends, and a store opened in it
/// can run in a service group inside that scope. As a `Service` the database waits for graceful shutdown and then
/// closes its pool and its reserved connections (``PostgresReservedConnections``).
package final class PostgreSQLDatabase: Service, Sendable {
    package let url: PostgresURL
    package let client: PostgresClient
    /// Connections kept out of the pool for the hottest statements (``execute(_:reserved:)``); none unless asked.
    package let reserved: PostgresReservedConnections
    private let stop: Stop
    /// The logger queries run with (postgres-nio's, silent by default).
    package let logger: Logger
    /// Bounds every call: no request waits without end for a database that does not answer or cannot be reached.
    package let deadline: DatabaseDeadline

    /// How the pool is stopped: by the end of its scope (and ``close()`` asks for it early), or, for a database
    /// opened without a scope, by cancelling the task that runs it.
    enum Stop: Sendable {
        case scoped(AsyncStream<Never>.Continuation)
        case unscoped(Task<Void, Never>)
    }

    init(
        url: PostgresURL,
        client: PostgresClient,
        reserved: PostgresReservedConnections,
        stop: Stop,
        logger: Logger,
        deadline: DatabaseDeadline = DatabaseDeadline(nil)
    ) {
        self.url = url
        self.client = client
        self.reserved = reserved
        self.stop = stop
        self.logger = logger
        self.deadline = deadline
    }

    /// Runs `body` with the database at `url`, checked and migrated; its pool closes when `body` returns.
    ///
    /// - Parameters:
    ///   - url: where the database is.
    ///   - migrations: the schema, step by step (nil: none, for administration); each scope keeps its own versions.
    ///   - maximumConnections: how many connections it opens at most, reserved ones included.
    ///   - reservedConnections: how many of them are kept out of the pool for ``execute(_:reserved:)``.
    ///   - settings: run-time parameters of every connection (`synchronous_commit`: `off`).
    ///   - limits: how long a call may wait (``DatabaseDeadline``); nil (the default) for no limit.
    ///   - logger: where postgres-nio logs in the background (silent by default).
    package static func withDatabase<Result>(
        _ url: PostgresURL,
        migrations: PostgresMigrations?,
        maximumConnections: Int = 20,
        reservedConnections: Int = 0,
        settings: [String: String] = [:],
        limits: DatabaseDeadline.Limits? = nil,
        logger: Logger = .silent(label: "fleetauth.postgres"),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgreSQLDatabase) async throws -> Result
    ) async throws -> Result {
        try await PostgresPools.withPools { pools in
            let database = try await pools.connect(
                url,
                migrations: migrations,
                maximumConnections: maximumConnections,
                reservedConnections: reservedConnections,
                settings: settings,
                limits: limits,
                logger: logger
            )
            return try await body(database)
        }
    }

    /// Connects with a pool that runs in a task of its own until ``close()``, for code that cannot give it a
    /// scope; prefer
    /// ``withDatabase(_:migrations:maximumConnections:reservedConnections:settings:logger:isolation:_:)``.
    package static func connect(
        _ url: PostgresURL,
        migrations: PostgresMigrations?,
        maximumConnections: Int = 20,
        reservedConnections: Int = 0,
        settings: [String: String] = [:],
        limits: DatabaseDeadline.Limits? = nil,
        logger: Logger = .silent(label: "fleetauth.postgres")
    ) async throws(StoreError) -> PostgreSQLDatabase {
        let client = PostgresClient(
            configuration: configuration(
                url,
                maximumConnections: maximumConnections,
                reserved: reservedConnections,
                settings: settings
            ),
            backgroundLogger: logger
        )
        let runner = Task { await client.run() }
        let database = PostgreSQLDatabase(
            url: url,
            client: client,
            reserved: reserved(url, reservedConnections, settings: settings, logger: logger),
            stop: .unscoped(runner),
            logger: logger,
            deadline: DatabaseDeadline(limits, onChange: PostgreSQLDatabase.outageLog(url))
        )
        try await database.prepare(migrations)
        return database
    }

    /// The pool's configuration: `maximumConnections` less the `reserved` ones.
    static func configuration(
        _ url: PostgresURL,
        maximumConnections: Int,
        reserved: Int,
        settings: [String: String]
    ) -> PostgresClient.Configuration {
        precondition(
            (0..<maximumConnections).contains(reserved),
            "The pool keeps at least one of its \(maximumConnections) connections."
        )
        var configuration = PostgresClient.Configuration(
            host: url.host,
            port: url.port,
            username: url.username,
            password: url.password,
            database: url.database,
            tls: url.tls == .disable
                ? .disable
                : url.tls == .prefer
                    ? .prefer(.makeClientConfiguration())
                    : .require(.makeClientConfiguration())
        )
        configuration.options.maximumConnections = maximumConnections - reserved
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = settings.sorted { $0.key < $1.key }.map {
            ($0.key, $0.value)
        }
        return configuration
    }

    /// Checks the connection and applies the pending migrations; on failure the pool is closed.
    func prepare(_ migrations: PostgresMigrations?) async throws(StoreError) {
        do {
            try await check()
            try await migrations?.apply(on: self)
        } catch {
            await close()
            throw error
        }
    }

    /// One connection of its own, opened and closed, proves the server is there and accepts us: the pool would
    /// retry a refused connection or a wrong password quietly until its queries time out.
    private func check() async throws(StoreError) {
        do {
            let connection = try await Self.openConnection(url, settings: [:], id: 0, logger: logger)
            try await connection.close()
        } catch {
            throw .unavailable("Cannot use PostgreSQL at \(url.location) as \(url.username): \(Self.reason(error)).")
        }
    }

    /// One connection outside the pool, with `settings` as run-time parameters; the caller closes it.
    ///
    /// A connection not established within 5 s (TCP, startup and authentication) is tried once more: a server whose
    /// accept queue is full while it forks backends (many instances or pools opening at once) drops the SYN, and the
    /// kernel resends it after 1 s and 3 s; a busy machine may also take a while to authenticate. The second try
    /// gives it as long again; a refused connection or a wrong password still fail at once.
    package static func openConnection(
        _ url: PostgresURL,
        settings: [String: String] = [:],
        id: Int,
        logger: Logger = .silent(label: "fleetauth.postgres")
    ) async throws -> PostgresConnection {
        do {
            return try await openConnectionOnce(url, settings: settings, id: id, logger: logger)
        } catch let error where isConnectTimeout(error) {
            return try await openConnectionOnce(url, settings: settings, id: id, logger: logger)
        }
    }

    private static func openConnectionOnce(
        _ url: PostgresURL,
        settings: [String: String],
        id: Int,
        logger: Logger
    ) async throws -> PostgresConnection {
        let tls: PostgresConnection.Configuration.TLS =
            switch url.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: url.host,
            port: url.port,
            username: url.username,
            password: url.password,
            database: url.database,
            tls: tls
        )
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = settings.sorted { $0.key < $1.key }.map {
            ($0.key, $0.value)
        }
        return try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
    }

    /// `count` connections kept out of the pool, opened as ``openConnection(_:settings:id:logger:)`` opens one.
    static func reserved(_ url: PostgresURL, _ count: Int, settings: [String: String], logger: Logger)
        -> PostgresReservedConnections
    {
        PostgresReservedConnections(capacity: count) { id in
            try await openConnection(url, settings: settings, id: id, logger: logger)
        }
    }

    /// Runs `body` in one transaction; an error thrown by `body` rolls it back and is rethrown as it is. Bounded by
    /// ``deadline`` unless `bounded` is false (a migration, which may wait for another instance's).
    package func transaction<Result: Sendable>(
        bounded: Bool = true,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        do {
            let work: @Sendable () async throws -> Result = {
                try await self.client.withTransaction(logger: self.logger) { connection in try await body(connection) }
            }
            let result = bounded ? try await deadline.run(work) : try await work()
            deadline.note(reached: true)
            return result
        } catch let error as PostgresTransactionError {
            // The body's own errors (a store's, a service's) pass through; the database's become `unavailable`.
            if let closure = error.closureError, !(closure is PSQLError) {
                deadline.note(reached: true)
                throw closure
            }
            throw unavailable(error)
        } catch let error as StoreError {
            deadline.note(reached: true)
            throw error
        } catch {
            throw unavailable(error)
        }
    }

    /// Runs one statement outside a transaction and returns its rows. Bounded by ``deadline``.
    package func query(_ query: PostgresQuery) async throws(StoreError) -> [PostgresRow] {
        do {
            let rows = try await deadline.run {
                var rows: [PostgresRow] = []
                for try await row in try await self.client.query(query, logger: self.logger) { rows.append(row) }
                return rows
            }
            deadline.note(reached: true)
            return rows
        } catch {
            throw unavailable(error)
        }
    }

    /// Runs a prepared statement outside a transaction and returns its rows. Each connection prepares it once and
    /// then only binds and executes it: no parsing or planning per call, for the hot paths. `reserved`: on one of
    /// the connections kept out of the pool when one is free (``PostgresReservedConnections``), else the pool's.
    /// Bounded by ``deadline``.
    package func execute<Statement: PostgresPreparedStatement & Sendable>(
        _ statement: Statement,
        reserved: Bool = false
    ) async throws(StoreError) -> [Statement.Row] where Statement.Row: Sendable {
        do {
            let rows = try await deadline.run { try await self.rows(statement, reserved: reserved) }
            deadline.note(reached: true)
            return rows
        } catch let error as StoreError {
            throw error
        } catch {
            throw unavailable(error)
        }
    }

    /// Runs a prepared statement like ``execute(_:reserved:)``, but answers nil when the server ended it for a
    /// deadlock or a serialization failure (SQLSTATE 40P01, 40001): it was rolled back whole, so the caller may
    /// safely try again another way. Any other error is thrown as ``execute(_:reserved:)`` throws it — a lost
    /// connection, for one, leaves unknown whether the statement committed.
    package func executeUnlessAborted<Statement: PostgresPreparedStatement & Sendable>(
        _ statement: Statement,
        reserved: Bool = false
    ) async throws(StoreError) -> [Statement.Row]? where Statement.Row: Sendable {
        do {
            let rows = try await deadline.run { try await self.rows(statement, reserved: reserved) }
            deadline.note(reached: true)
            return rows
        } catch let error as PSQLError where ["40P01", "40001"].contains(error.serverInfo?[.sqlState]) {
            deadline.note(reached: true)
            return nil
        } catch {
            throw unavailable(error)
        }
    }

    private func rows<Statement: PostgresPreparedStatement>(_ statement: Statement, reserved: Bool) async throws
        -> [Statement.Row]
    {
        if reserved,
            let rows = try await self.reserved.withConnection({ connection in
                try await Self.collect(connection.execute(statement, logger: logger))
            })
        {
            return rows
        }
        return try await Self.collect(client.execute(statement, logger: logger))
    }

    private static func collect<Rows: AsyncSequence>(_ sequence: Rows) async throws -> [Rows.Element] {
        var rows: [Rows.Element] = []
        for try await row in sequence { rows.append(row) }
        return rows
    }

    /// Waits for graceful shutdown, then closes the pool.
    package func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes the pool; waiting queries fail. In a scope the pool is stopped now and the scope's end waits for it.
    package func close() async {
        await reserved.close()
        switch stop {
        case .scoped(let signal):
            signal.finish()
        case .unscoped(let runner):
            runner.cancel()
            await runner.value
        }
    }
}

/// Runs PostgreSQL connection pools for the length of a scope: every pool opened with
/// ``connect(_:migrations:maximumConnections:reservedConnections:settings:logger:)`` runs in a child task of
/// ``withPools(_:)``, which closes them all, reserved connections included, and waits for them before it returns.
/// Nothing outlives the scope.
package struct PostgresPools: Sendable {
    /// A pool to run, its reserved connections, and the signal that closes both.
    private typealias Opened = (client: PostgresClient, reserved: PostgresReservedConnections, stop: AsyncStream<Never>)
    private let pools: AsyncStream<Opened>.Continuation

    /// Runs `body`; the pools it opens are closed when it returns or throws.
    package static func withPools<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresPools) async throws -> Result
    ) async throws -> Result {
        let (opened, pools) = AsyncStream.makeStream(of: Opened.self)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask {
                await withDiscardingTaskGroup { running in
                    for await (client, reserved, stop) in opened {
                        running.addTask {
                            await withDiscardingTaskGroup { pool in
                                pool.addTask { await client.run() }
                                for await _ in stop {}  // until close() or the scope's end
                                await reserved.close()
                                pool.cancelAll()
                            }
                        }
                    }
                }
            }
            defer {
                pools.finish()
                group.cancelAll()
            }
            return try await body(PostgresPools(pools: pools))
        }
    }

    /// Connects, checks the connection, and applies the pending `migrations` (nil: none, for administration); the
    /// pool runs until the scope ends or the database is closed.
    package func connect(
        _ url: PostgresURL,
        migrations: PostgresMigrations?,
        maximumConnections: Int = 20,
        reservedConnections: Int = 0,
        settings: [String: String] = [:],
        limits: DatabaseDeadline.Limits? = nil,
        logger: Logger = .silent(label: "fleetauth.postgres")
    ) async throws(StoreError) -> PostgreSQLDatabase {
        let client = PostgresClient(
            configuration: PostgreSQLDatabase.configuration(
                url,
                maximumConnections: maximumConnections,
                reserved: reservedConnections,
                settings: settings
            ),
            backgroundLogger: logger
        )
        let reserved = PostgreSQLDatabase.reserved(url, reservedConnections, settings: settings, logger: logger)
        let (stopped, stop) = AsyncStream.makeStream(of: Never.self)
        guard case .enqueued = pools.yield((client, reserved, stopped)) else {
            throw .unavailable("PostgreSQL at \(url.location): opened after its scope ended.")
        }
        let database = PostgreSQLDatabase(
            url: url,
            client: client,
            reserved: reserved,
            stop: .scoped(stop),
            logger: logger,
            deadline: DatabaseDeadline(limits, onChange: PostgreSQLDatabase.outageLog(url))
        )
        try await database.prepare(migrations)
        return database
    }
}
