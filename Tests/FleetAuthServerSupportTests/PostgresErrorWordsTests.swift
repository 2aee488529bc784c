import FleetAuthServerSupport
import FleetAuthServerTesting
import Testing

/// What a PostgreSQL failure says, to a client (a 503's message) and in the log: FleetAuth's words, never a
/// library's placeholder ("PSQLError – Generic description to prevent accidental leakage…", which PostgresNIO
/// prints for its errors).
@Suite("PostgreSQL failures are told in FleetAuth's words")
struct PostgresErrorWordsTests {
    @Test("nothing listening at the address: the connection was refused, said so")
    func refused() async throws {
        // A port just freed on loopback: nothing listens there.
        let url = PostgresURL(
            host: "127.0.0.1",
            port: try LoopbackPort.free(),
            username: "fleet",
            database: "fleet",
            tls: .disable
        )
        var reason = ""
        do {
            _ = try await PostgreSQLDatabase.openConnection(url, id: 1)
            Issue.record("a connection to a port nobody listens on was opened")
        } catch {
            reason = PostgreSQLDatabase.reason(error)
        }
        #expect(reason.contains("connection refused"), "\(reason)")
        #expect(!reason.contains("Generic description") && !reason.contains("PSQLError"), "\(reason)")
    }

    @Test(
        "a refusal by the server keeps the server's message and its SQLSTATE",
        .enabled(if: PostgresTestServer.url != nil)
    )
    func serverMessage() async throws {
        let admin = try #require(PostgresTestServer.url)
        var url = admin
        url.password = "not-the-password"
        var reason = ""
        do {
            _ = try await PostgreSQLDatabase.openConnection(url, id: 1)
            Issue.record("a wrong password was accepted")
        } catch {
            reason = PostgreSQLDatabase.reason(error)
        }
        #expect(reason.contains("password authentication failed") && reason.contains("SQLSTATE 28P01"), "\(reason)")
        #expect(!reason.contains("not-the-password"), "\(reason)")
    }
}
