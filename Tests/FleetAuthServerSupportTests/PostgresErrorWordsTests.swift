import FleetAuthDatabase
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetAuthServerTesting
import Foundation
import PostgresNIO
import Testing

/// What a PostgreSQL failure says, to a client (a 503's message) and in the log: FleetAuth's words, never a
/// library's placeholder ("PSQLError – Generic description to prevent accidental leakage…", which PostgresNIO
/// prints for its errors).
@Suite("PostgreSQL failures are told in FleetAuth's words")
struct PostgresErrorWordsTests {
    static func expectOwnWords(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!message.contains("Generic description"), "\(message)", sourceLocation: sourceLocation)
        #expect(!message.contains("PSQLError"), "\(message)", sourceLocation: sourceLocation)
        // Each clause once ("the database closed the connection: the database closed the connection." was a bug).
        let clauses = message.split(separator: ":").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " .")) }
        #expect(
            zip(clauses, clauses.dropFirst()).allSatisfy { $0 != $1 },
            "says the same twice: \(message)",
            sourceLocation: sourceLocation
        )
    }

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

    @Test(
        "the server stopped under an open pool: each statement's error says what happened to the connection",
        .enabled(if: PostgresCluster.binDirectory != nil || PostgresTestServer.required)
    )
    func stopped() async throws {
        try await PostgresCluster.run { cluster in
            // Bounded as a server's calls are (shorter): without a bound the pool keeps each call waiting for a
            // connection until its circuit breaker opens, a minute later.
            let limits = DatabaseDeadline.Limits(statementLimit: .seconds(2), unreachableLimit: .milliseconds(200))
            try await PostgreSQLDatabase.withDatabase(
                cluster.url,
                migrations: nil,
                maximumConnections: 2,
                limits: limits
            ) { database in
                try await Waiting.until("a first query answering") { (try? await database.query("SELECT 1")) != nil }
                try await PostgresCluster.blocking { try cluster.stop(mode: "fast") }
                for _ in 0..<3 {
                    let error = await #expect(throws: StoreError.self) { _ = try await database.query("SELECT 1") }
                    Self.expectOwnWords(try #require(error?.message))
                }
                // Started again: the first calls succeed once the pool reconnects.
                try await PostgresCluster.blocking { try cluster.start() }
                try await Waiting.until("a query succeeding after PostgreSQL restarted") {
                    (try? await database.query("SELECT 1")) != nil
                }
            }
        }
    }

    @Test(
        "a database that stops answering (frozen): the statement fails after its limit, named; the next ones fail fast",
        .enabled(if: PostgresCluster.binDirectory != nil || PostgresTestServer.required)
    )
    func frozen() async throws {
        try await PostgresCluster.run { cluster in
            let limits = DatabaseDeadline.Limits(statementLimit: .seconds(2), unreachableLimit: .milliseconds(200))
            try await PostgreSQLDatabase.withDatabase(
                cluster.url,
                migrations: nil,
                maximumConnections: 2,
                limits: limits
            ) { database in
                // The pool's first connection may take longer than the limit on a loaded machine: wait for it.
                try await Waiting.until("a first query answering") { (try? await database.query("SELECT 1")) != nil }
                try await PostgresCluster.blocking { try cluster.freeze() }
                let error = await #expect(throws: StoreError.self) { _ = try await database.query("SELECT 1") }
                #expect(error?.message.contains("did not answer within 2") == true, "\(String(describing: error))")
                #expect(database.deadline.isUnreachable)
                // Known to be unreachable: the next calls wait only the short limit, and say so.
                let next = await #expect(throws: StoreError.self) { _ = try await database.query("SELECT 1") }
                #expect(next?.message.contains("cannot be reached") == true, "\(String(describing: next))")
                #expect(GoogleAPIError(try #require(next)).retryAfter == 1)
                try await PostgresCluster.blocking { try cluster.thaw() }
                // Back: a call succeeds again (wait for it: the pool may need a new connection).
                try await Waiting.until("a query succeeding after the database came back") {
                    (try? await database.query("SELECT 1")) != nil
                }
                #expect(!database.deadline.isUnreachable)
            }
        }
    }
}
