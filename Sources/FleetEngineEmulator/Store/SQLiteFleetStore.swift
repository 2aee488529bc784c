public import FleetAuthCore
public import FleetAuthServerSupport
import Foundation
import GRDB

/// ``FleetStore`` on SQLite through GRDB: one file (``SQLiteDatabase``: WAL journal, `synchronous = NORMAL`, so a
/// committed write survives a crash of the process, `kill -9` included), versioned migrations. `inMemory` keeps a
/// private database for throwaway runs.
public final class SQLiteFleetStore: FleetStore, SQLiteStore {
    public let database: SQLiteDatabase
    private var writer: any DatabaseWriter { database.writer }

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws(StoreError) {
        database = try SQLiteDatabase(path: path, migrator: Self.migrator)
    }

    /// A private in-memory database.
    public init(inMemory: Void = ()) throws(StoreError) {
        database = try SQLiteDatabase(inMemoryWith: Self.migrator)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: vehicles and trips") { db in
            try db.execute(
                sql: """
                    CREATE TABLE vehicles (
                        provider TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                        PRIMARY KEY (provider, id)) WITHOUT ROWID;
                    CREATE TABLE trips (
                        provider TEXT NOT NULL, id TEXT NOT NULL, vehicle_id TEXT, active INTEGER NOT NULL,
                        body TEXT NOT NULL, PRIMARY KEY (provider, id)) WITHOUT ROWID;
                    CREATE INDEX trips_by_vehicle ON trips (provider, vehicle_id, active);
                    """
            )
        }
        return migrator
    }

    static func encode(_ object: JSONObject) -> String { object.jsonText }

    static func decode(_ text: String) throws -> JSONObject {
        do {
            return try StrictJSONParser(maximumDepth: 64).parseObject(Array(text.utf8))
        } catch {
            throw StoreError.corrupted("A stored resource is not valid JSON: \(error.message)")
        }
    }

    public func vehicle(provider: String, id: String) async throws -> JSONObject? {
        let text = try await writer.read { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM vehicles WHERE provider = ? AND id = ?"),
                arguments: [provider, id])
        }
        return try text.map(Self.decode)
    }

    public func insertVehicle(provider: String, id: String, body: JSONObject) async throws {
        let text = Self.encode(body)
        try await writer.write { db in
            if try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM vehicles WHERE provider = ? AND id = ?"),
                arguments: [provider, id]) != nil
            {
                throw StoreError.alreadyExists("Vehicle providers/\(provider)/vehicles/\(id) already exists.")
            }
            try db.cachedStatement(sql: "INSERT INTO vehicles (provider, id, body) VALUES (?, ?, ?)").execute(
                arguments: [provider, id, text])
        }
    }

    public func updateVehicle(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (JSONObject) throws -> JSONObject
    ) async throws -> (body: JSONObject, activeTrips: [StoredTrip]) {
        // One transaction reads, writes and lists the active trips for the response: each extra GRDB call costs
        // two thread hops, more than the SQL itself (measured with `fleetauth bench emulator`; a synchronous write
        // that blocks the cooperative pool measured slower still).
        let (updated, rows) = try await writer.write { db in
            guard
                let text = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT body FROM vehicles WHERE provider = ? AND id = ?"),
                    arguments: [provider, id])
            else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
            }
            let updated = try transform(try Self.decode(text))
            try db.cachedStatement(sql: "UPDATE vehicles SET body = ? WHERE provider = ? AND id = ?")
                .execute(arguments: [Self.encode(updated), provider, id])
            let trips = try Row.fetchAll(
                db.cachedStatement(sql: Self.activeTripsQuery), arguments: [provider, id]
            ).map(Self.tripColumns)
            return (updated, trips)
        }
        return (updated, try rows.map(Self.makeTrip))
    }

    static let activeTripsQuery =
        "SELECT id, vehicle_id, active, body FROM trips WHERE provider = ? AND vehicle_id = ? AND active = 1 ORDER BY id"

    public func deleteVehicle(provider: String, id: String) async throws {
        try await writer.write { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM vehicles WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]) != nil
            else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
            }
            let active =
                try Int.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT COUNT(*) FROM trips WHERE provider = ? AND vehicle_id = ? AND active = 1"),
                    arguments: [provider, id]) ?? 0
            guard active == 0 else {
                throw StoreError.conflict(
                    "Vehicle providers/\(provider)/vehicles/\(id) has \(active) active trip(s); complete or cancel them first."
                )
            }
            try db.cachedStatement(sql: "DELETE FROM vehicles WHERE provider = ? AND id = ?").execute(arguments: [
                provider, id,
            ])
        }
    }

    public func vehicles(provider: String, afterID: String?, limit: Int) async throws -> [(
        id: String, body: JSONObject
    )] {
        let rows = try await writer.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT id, body FROM vehicles WHERE provider = ? AND id > ? ORDER BY id LIMIT ?"),
                arguments: [provider, afterID ?? "", limit]
            ).map { (id: $0["id"] as String, body: $0["body"] as String) }
        }
        return try rows.map { (id: $0.id, body: try Self.decode($0.body)) }
    }

    public func trip(provider: String, id: String) async throws -> StoredTrip? {
        let row = try await writer.read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT id, vehicle_id, active, body FROM trips WHERE provider = ? AND id = ?"),
                arguments: [provider, id]
            )
            .map(Self.tripColumns)
        }
        return try row.map(Self.makeTrip)
    }

    typealias TripColumns = (id: String, vehicleID: String?, active: Bool, body: String)

    static func tripColumns(_ row: Row) -> TripColumns {
        (id: row["id"], vehicleID: row["vehicle_id"], active: row["active"], body: row["body"])
    }

    static func makeTrip(_ columns: TripColumns) throws -> StoredTrip {
        StoredTrip(
            id: columns.id, body: try decode(columns.body), vehicleID: columns.vehicleID, isActive: columns.active)
    }

    public func insertTrip(provider: String, id: String, trip: StoredTrip) async throws {
        let text = Self.encode(trip.body)
        try await writer.write { db in
            if try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM trips WHERE provider = ? AND id = ?"), arguments: [provider, id])
                != nil
            {
                throw StoreError.alreadyExists("Trip providers/\(provider)/trips/\(id) already exists.")
            }
            try db.cachedStatement(
                sql: "INSERT INTO trips (provider, id, vehicle_id, active, body) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [provider, id, trip.vehicleID, trip.isActive, text]
            )
        }
    }

    public func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) async throws -> StoredTrip {
        try await writer.write { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT id, vehicle_id, active, body FROM trips WHERE provider = ? AND id = ?"),
                    arguments: [provider, id])
            else {
                throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.")
            }
            let updated = try transform(try Self.makeTrip(Self.tripColumns(row)))
            try db.cachedStatement(
                sql: "UPDATE trips SET vehicle_id = ?, active = ?, body = ? WHERE provider = ? AND id = ?"
            ).execute(arguments: [updated.vehicleID, updated.isActive, Self.encode(updated.body), provider, id]
            )
            return updated
        }
    }

    public func deleteTrip(provider: String, id: String) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "DELETE FROM trips WHERE provider = ? AND id = ?").execute(arguments: [
                provider, id,
            ])
            guard db.changesCount > 0 else {
                throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.")
            }
        }
    }

    public func trips(provider: String, vehicleID: String?, activeOnly: Bool, afterID: String?, limit: Int) async throws
        -> [StoredTrip]
    {
        var sql = "SELECT id, vehicle_id, active, body FROM trips WHERE provider = ? AND id > ?"
        var arguments: StatementArguments = [provider, afterID ?? ""]
        if let vehicleID {
            sql += " AND vehicle_id = ?"
            arguments += [vehicleID]
        }
        if activeOnly { sql += " AND active = 1" }
        sql += " ORDER BY id LIMIT ?"
        arguments += [limit]
        let query = sql
        let queryArguments = arguments
        let rows = try await writer.read { db in
            try Row.fetchAll(db.cachedStatement(sql: query), arguments: queryArguments).map(Self.tripColumns)
        }
        return try rows.map(Self.makeTrip)
    }
}
