import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import GRDB

/// ``DeliveryStore`` on the same SQLite database as the vehicles and trips: a plan's writes go through the store's
/// shared write transactions, its lookups through the shared reads, its lists through a read of their own.
extension SQLiteFleetStore: SQLPlanStore, DeliveryStore {
    package static var storeSQL: StoreSQL { .sqlite }

    package func run<Result: Sendable>(_ plan: SQLPlan<Result>) async throws -> Result {
        switch plan.access {
        case .lookup: try await database.lookup { db in try plan.run { try Self.execute($0, in: db) } }
        case .list: try await writer.read { db in try plan.run { try Self.execute($0, in: db) } }
        case .write: try await database.write { db in try plan.run { try Self.execute($0, in: db) } }
        }
    }

    /// Runs one statement and returns its rows (none for a statement that returns no columns).
    static func execute(_ statement: SQLStatement, in db: Database) throws -> [SQLRow] {
        let prepared = try db.cachedStatement(sql: statement.sql)
        let arguments = StatementArguments(statement.values.map(databaseValue))
        guard prepared.columnCount > 0 else {
            try prepared.execute(arguments: arguments)
            try statement.check(rows: 0)
            return []
        }
        let columns = prepared.columnNames
        var rows: [SQLRow] = []
        let cursor = try Row.fetchCursor(prepared, arguments: arguments)
        while let row = try cursor.next() {
            let values = Array(row.databaseValues).map { value -> SQLValue in
                switch value.storage {
                case .null: .null
                case .int64(let number): .integer(number)
                case .double(let number): .real(number)
                case .string(let text): .text(text)
                case .blob(let data): .blob(data)
                }
            }
            rows.append(SQLRow(columns: columns, values: values))
        }
        try statement.check(rows: rows.count)
        return rows
    }
}
