import FleetAuthDatabase
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetAuthServerTesting
import Foundation
import NIOConcurrencyHelpers
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

    @Test("each change of the database's state is told once (what logs an outage), not once per call")
    func stateChangesTold() {
        let told = NIOLockedValueBox<[DatabaseDeadline.State]>([])
        let deadline = DatabaseDeadline(.requests) { state in told.withLockedValue { $0.append(state) } }
        deadline.note(reached: true)
        deadline.note(reached: false)
        deadline.note(reached: false)
        deadline.note(.notAnswering)
        deadline.note(reached: true)
        deadline.note(reached: true)
        #expect(told.withLockedValue { $0 } == [.refusing, .notAnswering, .answering])
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
                // A frozen server may commit what it received once it runs again: the outcome is unknown, and said so.
                #expect(error?.code == .deadlineExceeded)
                #expect(error?.message.contains("did not answer within 2") == true, "\(String(describing: error))")
                #expect(error?.message.contains("may still be applied") == true, "\(String(describing: error))")
                #expect(GoogleAPIError(try #require(error)).code == .deadlineExceeded)
                #expect(database.deadline.state == .notAnswering)
                // Known not to answer: the next calls wait only the short limit, and say so — slow, not unreachable.
                let next = await #expect(throws: StoreError.self) { _ = try await database.query("SELECT 1") }
                #expect(next?.code == .deadlineExceeded)
                #expect(next?.message.contains("is not answering") == true, "\(String(describing: next))")
                #expect(next?.message.contains("cannot be reached") == false, "\(String(describing: next))")
                try await PostgresCluster.blocking { try cluster.thaw() }
                // Back: a call succeeds again (wait for it: the pool may need a new connection).
                try await Waiting.until("a query succeeding after the database came back") {
                    (try? await database.query("SELECT 1")) != nil
                }
                #expect(!database.deadline.isUnreachable)
            }
        }
    }

    @Test(
        "stopped while calls wait for a connection: once one call finds it gone, the waiting ones fail within the short limit, not their whole limit",
        .enabled(if: PostgresCluster.binDirectory != nil || PostgresTestServer.required)
    )
    func stoppedUnderWaitingCalls() async throws {
        try await PostgresCluster.run { cluster in
            // A statement limit no test waits out: only being cut short ends the waiting calls.
            let limits = DatabaseDeadline.Limits(statementLimit: .seconds(3600), unreachableLimit: .milliseconds(200))
            try await PostgreSQLDatabase.withDatabase(
                cluster.url,
                migrations: nil,
                maximumConnections: 2,
                limits: limits
            ) { database in
                try await Waiting.until("a first query answering") { (try? await database.query("SELECT 1")) != nil }
                try await withThrowingTaskGroup(of: StoreError?.self) { group in
                    // Two calls hold both connections; three more wait for one.
                    for _ in 0..<2 {
                        group.addTask {
                            do {
                                _ = try await database.query("SELECT pg_sleep(3600)")
                                return nil
                            } catch { return error as? StoreError }
                        }
                    }
                    let admin = try await PostgreSQLDatabase.openConnection(cluster.url, id: 9)
                    try await Waiting.until("both connections sleeping") {
                        let rows = try await admin.query(
                            "SELECT count(*)::int FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3600)'",
                            logger: database.logger
                        )
                        var count = 0
                        for try await (value) in rows.decode(Int.self) { count = value }
                        return count == 2
                    }
                    try await admin.close()
                    for _ in 0..<3 {
                        group.addTask {
                            do {
                                _ = try await database.query("SELECT 1")
                                return nil
                            } catch { return error as? StoreError }
                        }
                    }
                    try await Waiting.until("five calls in flight") { database.deadline.callsInFlight == 5 }
                    try await PostgresCluster.blocking { try cluster.stop(mode: "fast") }
                    var errors: [StoreError] = []
                    for try await error in group { errors.append(try #require(error, "a call succeeded")) }
                    #expect(errors.count == 5)
                    // The three that never had a connection were cut short: "cannot be reached", nothing sent.
                    let cut = errors.filter {
                        $0.message.contains("cannot be reached (no connection within 0.2 seconds)")
                    }
                    #expect(cut.count == 3, "\(errors)")
                    #expect(errors.allSatisfy { $0.code == .unavailable }, "\(errors)")
                }
            }
        }
    }
}
