import FleetAuthDatabase
import FleetAuthServerCore
import FleetAuthServerTesting
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Testing

@Suite(
    "Connections reserved out of the pool",
    .enabled(if: PostgresTestServer.url != nil, "no PostgreSQL server: set FLEETAUTH_TEST_POSTGRES_URL")
)
struct PostgresReservedConnectionsTests {
    /// The server process behind the connection, and a run-time setting it was opened with.
    struct Backend: PostgresPreparedStatement {
        static let name = "fleetauth_test_backend"
        static let sql = "SELECT pg_backend_pid(), current_setting('synchronous_commit')"
        typealias Row = (Int32, String)
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((Int32, String).self) }
    }

    static func pid(_ connection: PostgresConnection) async throws -> Int32 {
        var pid: Int32 = 0
        for try await (value, _) in try await connection.execute(Backend(), logger: .silent(label: "test")) {
            pid = value
        }
        return pid
    }

    @Test("reserved statements run on connections the pool never hands out, with the pool's settings, closed with it")
    func separateFromThePool() async throws {
        let admin = try #require(PostgresTestServer.url)
        try await admin.withTemporaryDatabase(prefix: "fleetauth_test_reserved") { url in
            try await PostgresPools.withPools { pools in
                let database = try await pools.connect(
                    url,
                    migrations: nil,
                    maximumConnections: 3,
                    reservedConnections: 1,
                    settings: ["synchronous_commit": "off"]
                )
                var reserved: Set<Int32> = []
                for _ in 0..<5 {
                    let rows = try await database.execute(Backend(), reserved: true)
                    #expect(rows.map(\.1) == ["off"])
                    reserved.formUnion(rows.map(\.0))
                }
                #expect(reserved.count == 1, "one connection serves every reserved statement in turn")
                #expect(database.reserved.openConnections == 1)
                // Every pooled connection busy at once, the reserved one idle: none of them is it.
                let pooled = try await withThrowingTaskGroup(of: [Int32].self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await database.execute(Backend()).map(\.0) }
                    }
                    return try await group.reduce(into: Set<Int32>()) { $0.formUnion($1) }
                }
                #expect(!pooled.isEmpty && pooled.isDisjoint(with: reserved), "\(pooled) \(reserved)")
                #expect(try await PostgresPoolsTests.connections(to: url.database, admin: admin) >= 2)
            }
            try await PostgresPoolsTests.expectNoConnections(
                to: url.database,
                admin: admin,
                "the scope closed the pool and its reserved connections"
            )
        }
    }

    @Test("a caller that finds every reserved connection leased is answered nil, and uses the pool")
    func capacity() async throws {
        let admin = try #require(PostgresTestServer.url)
        try await admin.withTemporaryDatabase(prefix: "fleetauth_test_reserved") { url in
            try await PostgreSQLDatabase.withDatabase(
                url,
                migrations: nil,
                maximumConnections: 4,
                reservedConnections: 2
            ) { database in
                let gates = (0..<2).map { _ in AsyncStream.makeStream(of: Void.self) }
                let (leased, lease) = AsyncStream.makeStream(of: Int32.self)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (released, _) in gates {
                        group.addTask {
                            let held: Void? = try await database.reserved.withConnection { connection in
                                lease.yield(try await Self.pid(connection))
                                for await _ in released {}
                            }
                            #expect(held != nil)
                        }
                    }
                    var held: Set<Int32> = []
                    for await pid in leased {
                        held.insert(pid)
                        if held.count == 2 { break }
                    }
                    #expect(try await database.reserved.withConnection { _ in Issue.record("a third lease") } == nil)
                    // The statement still runs, on the pool.
                    let pooled = try await database.execute(Backend(), reserved: true).map(\.0)
                    #expect(pooled.count == 1 && !held.contains(pooled[0]))
                    for (_, release) in gates { release.finish() }
                    try await group.waitForAll()
                }
                #expect(database.reserved.openConnections == 2)
            }
        }
    }

    @Test(
        "an idle connection past the limit or closed by the server is replaced; one closed under its caller is reopened"
    )
    func replacement() async throws {
        let admin = try #require(PostgresTestServer.url)
        // PostgresNIO describes its errors generically (so that they cannot leak what a server said): record the
        // details, or a failure here says nothing of its cause.
        do { try await replacement(admin) } catch { Issue.record("\(String(reflecting: error))") }
    }

    func replacement(_ admin: PostgresURL) async throws {
        try await admin.withTemporaryDatabase(prefix: "fleetauth_test_reserved") { url in
            // Idle times on a clock of the test's: only its moves count, however slowly the machine runs.
            let clock = NIOLockedValueBox(NIODeadline.uptimeNanoseconds(0))
            let stale = PostgresReservedConnections(capacity: 1, now: { clock.withLockedValue { $0 } }) { id in
                try await PostgreSQLDatabase.openConnection(url, id: id)
            }
            let first = try await stale.withConnection { try await Self.pid($0) }
            clock.withLockedValue { $0 = $0 + .seconds(31) }
            let second = try await stale.withConnection { try await Self.pid($0) }
            #expect(first != nil && second != nil && first != second, "an idle connection past the limit is not reused")
            #expect(stale.openConnections == 1)
            await stale.close()
            #expect(stale.openConnections == 0)
            #expect(try await stale.withConnection { _ in Issue.record("used after close") } == nil)

            let kept = PostgresReservedConnections(capacity: 1, now: { clock.withLockedValue { $0 } }) { id in
                try await PostgreSQLDatabase.openConnection(url, id: id)
            }
            let a = try await kept.withConnection { try await Self.pid($0) }
            struct Failure: Error {}
            await #expect(throws: Failure.self) {
                try await kept.withConnection { _ in throw Failure() }
            }
            let b = try await kept.withConnection { try await Self.pid($0) }
            #expect(a != nil && a == b, "a caller's error leaves the connection in place")
            _ = try await kept.withConnection { try await $0.close() }
            #expect(kept.openConnections == 0, "a connection closed under its caller is dropped")
            let c = try await kept.withConnection { try await Self.pid($0) }
            #expect(c != nil && c != a)
            // The server ends the idle connection (a restart would): the next caller gets a new one, not an error.
            let idle = try #require(try await kept.withConnection { $0 })
            try await PostgreSQLDatabase.withDatabase(admin, migrations: nil, maximumConnections: 1) { admin in
                _ = try await admin.query("SELECT pg_terminate_backend(\(try #require(c)))")
            }
            try? await idle.closeFuture.get()
            #expect(idle.isClosed)
            let d = try await kept.withConnection { connection -> Int32? in
                // A statement written to a closed connection is never answered: record it rather than hang.
                guard !connection.isClosed else {
                    Issue.record("a connection the server closed while idle was handed out")
                    return nil
                }
                return try await Self.pid(connection)
            }
            #expect(d != nil && d != c, "a connection the server closed while idle is replaced before use")
            await kept.close()
            try await PostgresPoolsTests.expectNoConnections(
                to: url.database,
                admin: admin,
                "the reserved connections were closed"
            )
        }
    }
}
