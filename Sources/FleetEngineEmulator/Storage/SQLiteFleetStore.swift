import FleetAuthCore
public import FleetAuthDatabase
public import FleetAuthServerCore
package import FleetEngineAPI
import Foundation
import GRDB
import SwiftProtobuf

/// The emulator's store (``EmulatorStorage``) on SQLite through GRDB: one file (`SQLiteDatabase`: WAL journal,
/// `synchronous = NORMAL`, so a committed write survives a crash of the process, `kill -9` included), messages kept
/// in the protobuf binary format, versioned migrations. `inMemory` keeps a private database for throwaway runs.
public final class SQLiteFleetStore: EmulatorStore, SQLiteStore {
    package let database: SQLiteDatabase
    /// The request log's database: a file of its own beside the fleet's (``requestLogPath(for:)``), so that writing
    /// a batch of entries, and checkpointing its journal, never holds up a fleet write.
    package let logDatabase: SQLiteDatabase

    /// Keeps both databases open until graceful shutdown, then closes them.
    public func run() async throws {
        async let fleet: Void = database.run()
        try await logDatabase.run()
        try await fleet
    }

    /// Nothing to release: the file closes when the store is dropped.
    public func close() async {}
    var writer: any DatabaseWriter { database.writer }

    /// Opens (creating if needed) the database at `path`.
    public init(path: String) throws(StoreError) {
        database = try SQLiteDatabase(path: path, migrator: Self.migrator, label: "the emulator's database")
        logDatabase = try SQLiteDatabase(
            path: Self.requestLogPath(for: path),
            migrator: Self.requestLogMigrator,
            label: "the emulator's request log"
        )
    }

    /// A private in-memory database.
    public init(inMemory: Void = ()) throws(StoreError) {
        database = try SQLiteDatabase(inMemoryWith: Self.migrator, label: "the emulator's database")
        logDatabase = try SQLiteDatabase(inMemoryWith: Self.requestLogMigrator, label: "the emulator's request log")
    }

    /// The request log's file for the fleet's database at `path`: `fleet-engine.sqlite` → `fleet-engine-requests.sqlite`.
    public static func requestLogPath(for path: String) -> String {
        path.hasSuffix(".sqlite") ? String(path.dropLast(7)) + "-requests.sqlite" : path + "-requests"
    }

    /// Inserts a vehicle row with its indexed values, location and attributes.
    static func insert(
        _ db: Database,
        _ vehicle: FleetEngineV1.Vehicle,
        body: Data,
        provider: String,
        id: String,
        table: String = "vehicles"
    ) throws {
        let row = VehicleRow(vehicle)
        try db.cachedStatement(
            sql: """
                INSERT INTO \(table) (provider, id, body, state, category, capacity, trip_types, seen, lat, lng)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            provider, id, body, row.state, row.category, row.capacity, row.tripTypes, row.seen, row.latitude,
            row.longitude,
        ])
        let seq = db.lastInsertedRowID
        try writeLocation(db, seq: seq, row)
        try writeAttributes(db, provider: provider, id: id, row.attributes)
    }

    private static func writeLocation(_ db: Database, seq: Int64, _ row: VehicleRow) throws {
        if let latitude = row.latitude, let longitude = row.longitude {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO vehicle_locations VALUES (?, ?, ?, ?, ?)")
                .execute(arguments: [seq, latitude, latitude, longitude, longitude])
        } else {
            try db.cachedStatement(sql: "DELETE FROM vehicle_locations WHERE seq = ?").execute(arguments: [seq])
        }
    }

    private static func writeAttributes(_ db: Database, provider: String, id: String, _ attributes: [String: String])
        throws
    {
        try db.cachedStatement(sql: "DELETE FROM vehicle_attributes WHERE provider = ? AND vehicle_id = ?")
            .execute(arguments: [provider, id])
        let insert = try db.cachedStatement(
            sql: "INSERT INTO vehicle_attributes (provider, vehicle_id, key, value) VALUES (?, ?, ?, ?)"
        )
        for (key, value) in attributes { try insert.execute(arguments: [provider, id, key, value]) }
    }

    static func encode(_ message: some SwiftProtobuf.Message) throws -> Data {
        try message.serializedData()
    }

    static func decode<M: SwiftProtobuf.Message>(_ data: Data, as type: M.Type) throws -> M {
        try SQLValue.decode(data, as: type)
    }

    /// A vehicle's active trips, by the index named: without statistics SQLite's planner prefers the primary key's
    /// `provider` prefix on this WITHOUT ROWID table, a scan of every trip of the provider.
    package static let activeTripsQuery =
        """
        SELECT id, updated_at, body FROM trips INDEXED BY trips_by_vehicle
        WHERE provider = ? AND vehicle_id = ? AND active = 1 ORDER BY id
        """

    static func trip(_ row: Row) throws -> StoredTrip {
        StoredTrip(
            id: row["id"],
            trip: try decode(row["body"], as: FleetEngineV1.Trip.self),
            updatedAt: Date(epochMilliseconds: row["updated_at"])
        )
    }

    private static func activeTrips(_ db: Database, provider: String, vehicleID: String) throws -> [StoredTrip] {
        try Row.fetchAll(db.cachedStatement(sql: activeTripsQuery), arguments: [provider, vehicleID]).map(trip)
    }

    static func vehicleExists(_ db: Database, provider: String, id: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM vehicles WHERE provider = ? AND id = ?"),
            arguments: [provider, id]
        ) != nil
    }

    package func vehicleWithActiveTrips(provider: String, id: String) async throws
        -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip])?
    {
        // One lookup: each trip to a reader's thread costs more than the SQL.
        try await database.lookup { db in
            guard
                let data = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT body FROM vehicles WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                )
            else { return nil }
            return (
                try Self.decode(data, as: FleetEngineV1.Vehicle.self),
                try Self.activeTrips(db, provider: provider, vehicleID: id)
            )
        }
    }

    package func insertVehicle(_ vehicle: FleetEngineV1.Vehicle, provider: String, id: String) async throws {
        let data = try Self.encode(vehicle)
        try await database.write { db in
            if try Self.vehicleExists(db, provider: provider, id: id) {
                throw StoreError.alreadyExists("Vehicle providers/\(provider)/vehicles/\(id) already exists.")
            }
            try Self.insert(db, vehicle, body: data, provider: provider, id: id)
        }
    }

    package func updateVehicle(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineV1.Vehicle, [StoredTrip]) throws -> FleetEngineV1.Vehicle
    ) async throws -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) {
        // One write reads, writes and lists the active trips: each trip to the writer's thread costs more than the
        // SQL itself (measured with `fleetauth bench emulator`; a synchronous write that blocks the cooperative pool
        // measured slower still). Concurrent updates share the writer's turn and its commit (`SQLiteGroupCommit`),
        // each in a savepoint of its own.
        try await database.write { db in
            guard
                let stored = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT seq, body FROM vehicles WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                )
            else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
            }
            let seq: Int64 = stored["seq"]
            let trips = try Self.activeTrips(db, provider: provider, vehicleID: id)
            let current = try Self.decode(stored["body"], as: FleetEngineV1.Vehicle.self)
            let updated = try transform(current, trips)
            let (old, new) = (VehicleRow(current), VehicleRow(updated))
            try db.cachedStatement(
                sql: """
                    UPDATE vehicles SET body = ?, state = ?, category = ?, capacity = ?, trip_types = ?, seen = ?,
                    lat = ?, lng = ? WHERE seq = ?
                    """
            ).execute(arguments: [
                try Self.encode(updated), new.state, new.category, new.capacity, new.tripTypes, new.seen, new.latitude,
                new.longitude, seq,
            ])
            if old.latitude != new.latitude || old.longitude != new.longitude {
                try Self.writeLocation(db, seq: seq, new)
            }
            if old.attributes != new.attributes {
                try Self.writeAttributes(db, provider: provider, id: id, new.attributes)
            }
            return (updated, trips)
        }
    }

    static let dialect = VehicleQuerySQL.Dialect(
        vehicles: "vehicles",
        attributes: "vehicle_attributes",
        trips: "trips",
        activeTrip: "t.active = 1",
        countsFromAttributeIndex: true,
        placeholder: { _ in "?" },
        spatialFirst: true,
        spatialIndex: { box, bind in
            // The R*Tree keeps 32-bit bounds rounded outwards: a superset, which the exact columns then narrow.
            "v.seq IN (SELECT seq FROM vehicle_locations WHERE max_lat >= \(bind(.real(box.lowLatitude)))"
                + " AND min_lat <= \(bind(.real(box.highLatitude))) AND max_lng >= \(bind(.real(box.lowLongitude)))"
                + " AND min_lng <= \(bind(.real(box.highLongitude))))"
        }
    )

    /// The query in one read transaction: the count, the page in ID order (keyset: `id > afterID`), and the
    /// page's active trips.
    package func vehicles(
        provider: String,
        matching query: VehicleQuery,
        after afterID: String?,
        limit: Int?,
        counting: Bool
    ) async throws -> VehicleQueryResult {
        let sql = VehicleQuerySQL(provider: provider, query: query, dialect: Self.dialect)
        let count = Self.storeSQL.vehicleCount(provider: provider, query) {
            VehicleQuerySQL(provider: provider, query: query, dialect: Self.dialect, purpose: .count)
        }
        let page = sql.page(after: afterID)
        let pageArguments = StatementArguments(page.values.map(Self.databaseValue))
        let rows = try await writer.read { db in
            let total = counting ? try Self.execute(count, in: db).first?.decode("n", as: Int.self) : nil
            var select = "SELECT v.id, v.body FROM vehicles v WHERE \(page.whereClause) ORDER BY v.id"
            if let limit { select += " LIMIT \(max(limit, 0))" }
            let vehicles = try Row.fetchAll(db.cachedStatement(sql: select), arguments: pageArguments).map {
                (id: $0["id"] as String, body: $0["body"] as Data)
            }
            var trips: [String: [StoredTrip]] = [:]
            for start in stride(from: 0, to: vehicles.count, by: 500) {
                let ids = vehicles[start..<min(start + 500, vehicles.count)].map(\.id)
                let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
                for row in try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT vehicle_id, id, updated_at, body FROM trips INDEXED BY trips_by_vehicle
                            WHERE provider = ? AND active = 1 AND vehicle_id IN (\(marks)) ORDER BY id
                            """
                    ),
                    arguments: StatementArguments([provider] + ids)
                ) {
                    trips[row["vehicle_id"], default: []].append(try Self.trip(row))
                }
            }
            return (total, vehicles, trips)
        }
        return VehicleQueryResult(
            vehicles: try rows.1.map {
                MatchedVehicle(
                    id: $0.id,
                    vehicle: try Self.decode($0.body, as: FleetEngineV1.Vehicle.self),
                    activeTrips: rows.2[$0.id] ?? []
                )
            },
            totalCount: rows.0
        )
    }

    package func vehiclePositions(provider: String, matching query: VehicleQuery) async throws -> [VehiclePosition] {
        let sql = VehicleQuerySQL(provider: provider, query: query, dialect: Self.dialect)
        let arguments = StatementArguments(sql.values.map(Self.databaseValue))
        let select = "SELECT v.id, v.lat, v.lng FROM vehicles v WHERE \(sql.whereClause) AND v.lat IS NOT NULL"
        return try await writer.read { db in
            try Row.fetchAll(db.cachedStatement(sql: select), arguments: arguments).map {
                VehiclePosition(id: $0["id"], latitude: $0["lat"], longitude: $0["lng"])
            }
        }
    }

    static func databaseValue(_ value: SQLValue) -> any DatabaseValueConvertible {
        switch value {
        case .null: DatabaseValue.null
        case .text(let text): text
        case .integer(let number): number
        case .real(let number): number
        case .bool(let flag): flag
        case .blob(let data): data
        }
    }
}
