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

/// A type a column's value is read as (``SQLRow/decode(_:as:)``).
protocol SQLDecodable {
    /// The value, or `nil` when the column's value is not one of this type.
    init?(sqlValue: SQLValue)
}

extension String: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .text(let text) = sqlValue else { return nil }
        self = text
    }
}

extension Int64: SQLDecodable {
    /// A number, or a boolean as SQLite keeps it (1 or 0).
    init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .integer(let number): self = number
        case .bool(let flag): self = flag ? 1 : 0
        default: return nil
        }
    }
}

extension Int: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard let number = Int64(sqlValue: sqlValue) else { return nil }
        self.init(exactly: number)
    }
}

extension Bool: SQLDecodable {
    /// A boolean, or SQLite's 1 or 0.
    init?(sqlValue: SQLValue) {
        guard let number = Int64(sqlValue: sqlValue), number == 0 || number == 1 else { return nil }
        self = number == 1
    }
}

extension Data: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .blob(let data) = sqlValue else { return nil }
        self = data
    }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    /// `nil` for SQL's NULL.
    init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
        } else if let value = Wrapped(sqlValue: sqlValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

/// A row a statement returned, read by column name and type, as GRDB's `Row` and postgres-nio's `PostgresRow` are
/// read: `try row.decode("id", as: String.self)`. A column the statement did not select, or a value of another type,
/// is a corrupted store (an error), never a default.
struct SQLRow: Sendable {
    /// The statement's column names, shared by its rows.
    let columns: [String]
    let values: [SQLValue]

    private func value(_ column: String) throws -> SQLValue {
        guard let index = columns.firstIndex(of: column) else {
            throw StoreError.corrupted("A stored row has no column \(column) (it has \(columns)).")
        }
        return values[index]
    }

    func decode<Value: SQLDecodable>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        let value = try value(column)
        guard let decoded = Value(sqlValue: value) else {
            throw StoreError.corrupted("A stored \(column) is not a \(Value.self): \(value).")
        }
        return decoded
    }

    /// The message a column keeps, in the protobuf binary format.
    func decode<M: SwiftProtobuf.Message>(_ column: String, as type: M.Type) throws -> M {
        try SQLValue.decode(try decode(column, as: Data.self), as: type)
    }
}

/// SQL that is not a value: a table's name, a list of columns, a lock or an index hint. Only this module makes them,
/// from its own constants, so a name is never a caller's string.
struct SQLFragment: Sendable, Hashable, ExpressibleByStringLiteral {
    let sql: String

    init(_ sql: String) { self.sql = sql }
    init(stringLiteral sql: String) { self.sql = sql }
}

/// One statement, written as a string literal whose interpolations bind values, as postgres-nio's `PostgresQuery`
/// and GRDB's `SQL` literals are: `"SELECT body FROM \(vehicles) WHERE provider = \(provider) AND id = \(id)"` puts a
/// `?` for each value (PostgreSQL's store numbers them) and binds it; no value is ever spliced into the text. A
/// ``SQLFragment`` (a table's name, a hint) is written as it is, and another statement's text and values are
/// appended in place.
struct SQLStatement: Sendable, ExpressibleByStringInterpolation {
    private(set) var sql: String
    private(set) var values: [SQLValue]
    /// For a write that returns a row for each row it wrote: how many it must write, and the error if it does not.
    private(set) var expected: (rows: Int, otherwise: StoreError)?

    /// A statement from text that already holds a `?` for each of `values` (what ``FilterSQL`` and
    /// ``VehicleQuerySQL`` build).
    init(unsafeSQL sql: String, binds values: [SQLValue]) {
        (self.sql, self.values) = (sql, values)
    }

    init(stringLiteral sql: String) { self.init(unsafeSQL: sql, binds: []) }

    init(stringInterpolation: StringInterpolation) {
        self.init(unsafeSQL: stringInterpolation.sql, binds: stringInterpolation.values)
    }

    struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var values: [SQLValue] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 2 * interpolationCount)
            values.reserveCapacity(interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) { sql += literal }

        mutating func appendInterpolation(_ value: SQLValue) {
            sql += "?"
            values.append(value)
        }
        mutating func appendInterpolation(_ text: String) { appendInterpolation(SQLValue.text(text)) }
        mutating func appendInterpolation(_ text: String?) { appendInterpolation(SQLValue(text)) }
        mutating func appendInterpolation(_ number: Int64) { appendInterpolation(SQLValue.integer(number)) }
        mutating func appendInterpolation(_ number: Int) { appendInterpolation(SQLValue.integer(Int64(number))) }
        mutating func appendInterpolation(_ number: Double?) { appendInterpolation(SQLValue(number)) }
        mutating func appendInterpolation(_ flag: Bool) { appendInterpolation(SQLValue.bool(flag)) }
        mutating func appendInterpolation(_ data: Data) { appendInterpolation(SQLValue.blob(data)) }

        /// Each value bound, comma-separated: `IN (\(list: ids))`.
        mutating func appendInterpolation(list: some Collection<SQLValue>) {
            sql += Array(repeating: "?", count: list.count).joined(separator: ", ")
            values += list
        }

        mutating func appendInterpolation(_ fragment: SQLFragment) { sql += fragment.sql }

        mutating func appendInterpolation(_ statement: SQLStatement) {
            sql += statement.sql
            values += statement.values
        }
    }

    /// This write, returning a row for each row it writes (`RETURNING 1`), must return `rows`, or fails with
    /// `otherwise`.
    func expecting(_ rows: Int, otherwise: StoreError) -> SQLStatement {
        var statement = self
        statement.expected = (rows, otherwise)
        return statement
    }

    func check(rows: Int) throws {
        if let expected, expected.rows != rows { throw expected.otherwise }
    }
}

extension Sequence<SQLStatement> {
    /// The statements' text joined by `separator`, with their values in order.
    func joined(separator: SQLFragment) -> SQLStatement {
        var joined = SQLStatement.StringInterpolation(literalCapacity: 0, interpolationCount: 0)
        for (index, statement) in enumerated() {
            if index > 0 { joined.appendInterpolation(separator) }
            joined.appendInterpolation(statement)
        }
        return SQLStatement(stringInterpolation: joined)
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
