import FleetAuthServerCore
import Foundation
import SwiftProtobuf

/// A store kept in SQL tables: both of the project's stores. The methods they share (the Deliveries API, trips, plain
/// reads and deletes of vehicles) are written once, as ``SQLPlan``s of statements in the SQL both databases run
/// (``StoreSQL``); a store supplies only its dialect and how it runs a plan in one transaction. (SQLite's transactions
/// are synchronous closures and PostgreSQL's are async, which is why a method is a plan of statements rather than code
/// that calls the database.) Plans are made inside this module only.
package protocol SQLPlanStore: Sendable {
    /// The store's dialect: its table names, locks and index hints.
    static var storeSQL: StoreSQL { get }
    /// Runs `plan`: its reads, its decisions and its writes in one transaction when it writes, its reads alone in
    /// one read when it does not.
    func run<Result: Sendable>(_ plan: SQLPlan<Result>) async throws -> Result
}

/// A value bound to a statement or read from a row, in either store.
enum SQLValue: Sendable, Hashable {
    case null
    case text(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case blob(Data)

    init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }
    init(_ number: Double?) { self = number.map(SQLValue.real) ?? .null }

    var text: String? {
        guard case .text(let text) = self else { return nil }
        return text
    }

    /// A number, or a boolean as SQLite keeps it (1 or 0).
    var integer: Int64? {
        switch self {
        case .integer(let number): number
        case .bool(let flag): flag ? 1 : 0
        default: nil
        }
    }

    /// The message a column keeps (``decode(_:as:)``).
    func decode<M: SwiftProtobuf.Message>(as type: M.Type) throws -> M {
        guard case .blob(let data) = self else {
            throw StoreError.corrupted("A stored \(M.protoMessageName) is not a byte string.")
        }
        return try Self.decode(data, as: type)
    }

    /// How both stores keep messages, the protobuf binary format, read back: a stored message that no longer decodes
    /// is a corrupted store, not a crash.
    static func decode<M: SwiftProtobuf.Message>(_ bytes: some SwiftProtobufContiguousBytes, as type: M.Type) throws
        -> M
    {
        do {
            return try M(serializedBytes: bytes)
        } catch {
            throw StoreError.corrupted("A stored \(M.protoMessageName) cannot be read back: \(error)")
        }
    }
}

typealias SQLRow = [SQLValue]

/// One statement, with a `?` for each of its values (PostgreSQL's store numbers them).
struct SQLStatement: Sendable {
    var sql: String
    var values: [SQLValue]
    /// For a write that returns a row for each row it wrote: how many it must write, and the error if it does not.
    var expected: (rows: Int, otherwise: StoreError)?

    init(_ sql: String, _ values: [SQLValue], expecting expected: (rows: Int, otherwise: StoreError)? = nil) {
        self.sql = sql
        self.values = values
        self.expected = expected
    }

    func check(rows: Int) throws {
        if let expected, expected.rows != rows { throw expected.otherwise }
    }
}

/// One store method as a store runs it: its reads, then a decision on their rows, which either names what to write
/// (in order) and the answer, or the next reads and decision. A plan that writes runs in one transaction, in which
/// PostgreSQL's reads lock the rows they name; a decision's error is thrown with nothing written.
package struct SQLPlan<Result: Sendable>: Sendable {
    /// Where the reads of a plan that does not write go: a lookup by key, or a longer read (a list).
    enum Access: Sendable { case lookup, list, write }

    /// What a decision comes to.
    enum Outcome: Sendable {
        case done(writes: [SQLStatement], result: Result)
        case then(reads: [SQLStatement], decide: @Sendable ([[SQLRow]]) throws -> Outcome)
    }

    let access: Access
    let reads: [SQLStatement]
    let decide: @Sendable ([[SQLRow]]) throws -> Outcome

    init(
        _ access: Access,
        reads: [SQLStatement],
        decide: @escaping @Sendable ([[SQLRow]]) throws -> Outcome
    ) {
        (self.access, self.reads, self.decide) = (access, reads, decide)
    }

    /// A plan that only reads: `answer` is its result.
    static func read(
        _ access: Access,
        _ reads: [SQLStatement],
        _ answer: @escaping @Sendable ([[SQLRow]]) throws -> Result
    ) -> Self {
        Self(access, reads: reads) { .done(writes: [], result: try answer($0)) }
    }

    /// Runs the plan on a database that runs one statement at a time (`execute` runs one and returns its rows).
    func run(_ execute: (SQLStatement) throws -> [SQLRow]) throws -> Result {
        var (reads, decide) = (reads, decide)
        while true {
            switch try decide(try reads.map(execute)) {
            case .done(let writes, let result):
                for write in writes { _ = try execute(write) }
                return result
            case .then(let next, let then): (reads, decide) = (next, then)
            }
        }
    }

    /// ``run(_:)`` for a database whose statements are async.
    func run(_ execute: (SQLStatement) async throws -> [SQLRow]) async throws -> Result {
        var (reads, decide) = (reads, decide)
        while true {
            var rows: [[SQLRow]] = []
            for read in reads { rows.append(try await execute(read)) }
            switch try decide(rows) {
            case .done(let writes, let result):
                for write in writes { _ = try await execute(write) }
                return result
            case .then(let next, let then): (reads, decide) = (next, then)
            }
        }
    }
}
