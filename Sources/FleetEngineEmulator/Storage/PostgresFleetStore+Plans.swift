import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import NIOCore
import PostgresNIO

/// ``DeliveryStore`` on the same PostgreSQL database as the vehicles and trips: a plan that writes is one
/// transaction whose reads lock their rows (`SELECT … FOR UPDATE`), so concurrent changes from any number of
/// instances apply one after the other; a plan that only reads runs its statements on the pool.
extension PostgresFleetStore: SQLPlanStore, DeliveryStore {
    package static var storeSQL: StoreSQL { .postgres }

    package func run<Result: Sendable>(_ plan: SQLPlan<Result>) async throws -> Result {
        guard plan.access == .write else {
            return try await plan.run { statement in
                try Self.values(try await database.query(Self.query(statement)), statement)
            }
        }
        return try await database.transaction { connection in
            let logger = self.database.logger
            return try await plan.run { try await Self.execute($0, on: connection, logger: logger) }
        }
    }

    /// Runs one statement in `connection` (a transaction's or a migration's) and returns its rows.
    @discardableResult
    static func execute(_ statement: SQLStatement, on connection: PostgresConnection, logger: Logger) async throws
        -> [SQLRow]
    {
        var rows: [PostgresRow] = []
        for try await row in try await connection.query(query(statement), logger: logger) { rows.append(row) }
        return try values(rows, statement)
    }

    /// The statement with its `?` numbered, as PostgreSQL's placeholders are (no statement has a `?` of its own).
    private static func query(_ statement: SQLStatement) -> PostgresQuery {
        var sql: [UInt8] = []
        sql.reserveCapacity(statement.sql.utf8.count + 3 * statement.values.count)
        var number = 0
        for byte in statement.sql.utf8 {
            guard byte == UInt8(ascii: "?") else {
                sql.append(byte)
                continue
            }
            number += 1
            sql.append(UInt8(ascii: "$"))
            sql += String(number).utf8
        }
        return PostgresQuery(unsafeSQL: String(decoding: sql, as: UTF8.self), binds: bindings(statement.values))
    }

    private static func values(_ rows: [PostgresRow], _ statement: SQLStatement) throws -> [SQLRow] {
        try statement.check(rows: rows.count)
        guard let first = rows.first else { return [] }
        let columns = first.map(\.columnName)
        return try rows.map { row in
            let values = try row.map { cell -> SQLValue in
                guard let bytes = cell.bytes else { return .null }
                switch cell.dataType {
                case .bool: return .bool(try cell.decode(Bool.self))
                case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
                case .float4, .float8: return .real(try cell.decode(Double.self))
                case .bytea: return .blob(Data(bytes.readableBytesView))
                default: return .text(try cell.decode(String.self))
                }
            }
            return SQLRow(columns: columns, values: values)
        }
    }
}
