import FleetAuthDatabase
import FleetAuthServerCore
import FleetAuthServerTesting
import PostgresNIO
import Testing

@Suite(
    "PostgreSQL pools live in scopes",
    .enabled(if: PostgresTestServer.url != nil, "no PostgreSQL server: set FLEETAUTH_TEST_POSTGRES_URL")
)
struct PostgresPoolsTests {
    /// Connections to `database` other than the asking one, as the server counts them.
    static func connections(to database: String, admin: PostgresURL) async throws -> Int {
        try await PostgreSQLDatabase.withDatabase(admin, migrations: nil, maximumConnections: 1) { connection in
            let rows = try await connection.query(
                "SELECT count(*)::int FROM pg_stat_activity WHERE datname = \(database) AND pid <> pg_backend_pid()"
            )
            var count = 0
            for row in rows { count = try row.decode(Int.self) }
            return count
        }
    }

    /// Waits until the server counts no connection to `database`: a closed connection's backend leaves
    /// `pg_stat_activity` a moment after the client hung up, later on a loaded machine.
    static func expectNoConnections(to database: String, admin: PostgresURL, _ what: String) async throws {
        try await Waiting.until("\(what): no connection to \(database) left on the server") {
            try await connections(to: database, admin: admin) == 0
        }
    }

    @Test("a scope's pools are closed when it ends, and a temporary database is dropped")
    func scopes() async throws {
        let admin = try #require(PostgresTestServer.url)
        let name = try await admin.withTemporaryDatabase(prefix: "fleetauth_test_scope") { url in
            try await PostgresPools.withPools { pools in
                let first = try await pools.connect(url, migrations: nil, maximumConnections: 3)
                let second = try await pools.connect(url, migrations: nil, maximumConnections: 3)
                _ = try await first.query("SELECT 1")
                _ = try await second.query("SELECT 1")
                #expect(try await Self.connections(to: url.database, admin: admin) >= 2)
            }
            try await Self.expectNoConnections(to: url.database, admin: admin, "the scope closed its pools")
            return url.database
        }
        let rows = try await PostgreSQLDatabase.withDatabase(admin, migrations: nil, maximumConnections: 1) {
            try await $0.query("SELECT 1 FROM pg_database WHERE datname = \(name)")
        }
        #expect(rows.isEmpty, "the temporary database was dropped")
    }

    @Test("a refused connection is a clear error at open, and the scope still ends")
    func refused() async throws {
        var url = try #require(PostgresTestServer.url)
        url.host = "127.0.0.1"
        url.port = 1
        await expectRefusal {
            try await PostgreSQLDatabase.withDatabase(url, migrations: nil) { _ in }
        }
    }

    func expectRefusal(_ body: () async throws -> Void) async {
        let error = await #expect(throws: StoreError.self) { try await body() }
        #expect(
            error?.code == .unavailable && error?.message.contains("127.0.0.1:1") == true,
            "\(String(describing: error))"
        )
    }

    /// A statement that fails with the SQL state it is given.
    struct Fail: PostgresPreparedStatement {
        static let name = "fleetauth_test_fail"
        static let sql = "SELECT fleetauth_test_fail($1)"
        typealias Row = Int
        var code: String
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(code)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    @Test("a statement the server ended for a deadlock or a serialization failure answers nil; other errors throw")
    func aborted() async throws {
        let admin = try #require(PostgresTestServer.url)
        try await admin.withTemporaryDatabase(prefix: "fleetauth_test_aborted") { url in
            try await PostgreSQLDatabase.withDatabase(url, migrations: nil, maximumConnections: 1) { database in
                _ = try await database.query(
                    """
                    CREATE FUNCTION fleetauth_test_fail(code text) RETURNS int AS $$
                    BEGIN RAISE EXCEPTION 'failed on purpose' USING ERRCODE = code; END $$ LANGUAGE plpgsql
                    """
                )
                #expect(try await database.executeUnlessAborted(Fail(code: "40P01")) == nil)
                #expect(try await database.executeUnlessAborted(Fail(code: "40001")) == nil)
                let error = await #expect(throws: StoreError.self) {
                    try await database.executeUnlessAborted(Fail(code: "23505"))
                }
                #expect(error?.message.contains("SQLSTATE 23505") == true, "\(String(describing: error))")
            }
        }
    }
}
