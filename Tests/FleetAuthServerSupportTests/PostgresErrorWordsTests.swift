import FleetAuthServerSupport
import FleetAuthServerTesting
import PostgresNIO
import Testing

/// What a PostgreSQL failure says, to a client (the 503's message) and in the log: FleetAuth's words, never a
/// library's placeholder ("PSQLError – Generic description…").
@Suite("PostgreSQL failures are told in FleetAuth's words")
struct PostgresErrorWordsTests {
    static func expectOwnWords(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!message.contains("Generic description"), "\(message)", sourceLocation: sourceLocation)
        #expect(!message.contains("PSQLError"), "\(message)", sourceLocation: sourceLocation)
    }

    @Test("nothing listening at the URL: a refused connection, said so")
    func refused() async throws {
        // Port 9 on loopback: nothing listens.
        let url = PostgresURL(host: "127.0.0.1", port: 9, username: "fleet", database: "fleet", tls: .disable)
        let error = await #expect(throws: StoreError.self) {
            try await PostgreSQLDatabase.withDatabase(url, migrations: nil, maximumConnections: 1) { _ in }
        }
        let message = try #require(error?.message)
        #expect(message.contains("refused"), "\(message)")
        Self.expectOwnWords(message)
    }
}
