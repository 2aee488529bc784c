import FleetEngineAPI
import NIOCore
import PostgresNIO

/// The PostgreSQL store's vehicle listings and searches (``VehicleQuerySQL`` in PostgreSQL's dialect, the spatial
/// condition on the GiST index), and the bulk operations benchmarks use.
extension PostgresFleetStore {
    static let dialect = VehicleQuerySQL.Dialect(
        vehicles: "emulator_vehicles",
        attributes: "emulator_vehicle_attributes",
        trips: "emulator_trips",
        activeTrip: "t.active",
        countsFromAttributeIndex: false,
        placeholder: { "$\($0)" },
        spatialFirst: false,
        spatialIndex: { box, bind in
            // GiST answers `<@` with geometric comparisons' tolerance: a superset the exact columns narrow.
            "v.location <@ box(point(\(bind(.real(box.lowLatitude)))::float8, \(bind(.real(box.lowLongitude)))::float8),"
                + " point(\(bind(.real(box.highLatitude)))::float8, \(bind(.real(box.highLongitude)))::float8))"
        }
    )

    /// The count, then the page in ID order (keyset: `id > afterID`) with its active trips in one statement.
    package func vehicles(
        provider: String,
        matching query: VehicleQuery,
        after afterID: String?,
        limit: Int?,
        counting: Bool
    ) async throws -> VehicleQueryResult {
        let sql = VehicleQuerySQL(provider: provider, query: query, dialect: Self.dialect)
        let count = Self.storeSQL.vehicleCount(provider: provider, query) { sql }
        let total =
            counting ? try await run(.read(.list, [count]) { try $0[0].first?.decode("n", as: Int.self) }) : nil
        let page = sql.page(after: afterID)
        let limitClause = limit.map { " LIMIT \(max($0, 0))" } ?? ""
        // $1 is the provider (VehicleQuerySQL binds it first).
        let rows = try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT m.id, m.body, t.id, t.updated_at, t.body FROM (
                        SELECT v.id, v.body FROM emulator_vehicles v WHERE \(page.whereClause) ORDER BY v.id\(limitClause)
                    ) m LEFT JOIN emulator_trips t ON t.provider = $1 AND t.vehicle_id = m.id AND t.active
                    ORDER BY m.id, t.id
                    """,
                binds: Self.bindings(page.values)
            )
        )
        var vehicles: [MatchedVehicle] = []
        for row in rows {
            let (id, body, tripID, updatedAt, tripBody) = try row.decode(
                (String, ByteBuffer, String?, Int64?, ByteBuffer?).self
            )
            if vehicles.last?.id != id {
                vehicles.append(
                    MatchedVehicle(
                        id: id,
                        vehicle: try Self.decode(body, as: FleetEngineV1.Vehicle.self),
                        activeTrips: []
                    )
                )
            }
            if let tripID, let updatedAt, let tripBody {
                vehicles[vehicles.count - 1].activeTrips.append(
                    try Self.trip(id: tripID, updatedAt: updatedAt, body: tripBody)
                )
            }
        }
        return VehicleQueryResult(vehicles: vehicles, totalCount: total)
    }

    package func vehiclePositions(provider: String, matching query: VehicleQuery) async throws -> [VehiclePosition] {
        let sql = VehicleQuerySQL(provider: provider, query: query, dialect: Self.dialect)
        let rows = try await database.query(
            PostgresQuery(
                unsafeSQL:
                    "SELECT v.id, v.lat, v.lng FROM emulator_vehicles v WHERE \(sql.whereClause) AND v.lat IS NOT NULL",
                binds: Self.bindings(sql.values)
            )
        )
        return try rows.map { row in
            let (id, latitude, longitude) = try row.decode((String, Double, Double).self)
            return VehiclePosition(id: id, latitude: latitude, longitude: longitude)
        }
    }

    /// Vacuums and analyzes the emulator's tables, as autovacuum does shortly after a bulk load (benchmarks run it
    /// after loading a fleet, so that counts use index-only scans as they would in steady state).
    package func vacuum() async throws {
        _ = try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    VACUUM (ANALYZE) emulator_vehicles, emulator_vehicle_attributes, emulator_trips, emulator_tasks,
                        emulator_task_attributes, emulator_delivery_vehicles, emulator_delivery_vehicle_attributes
                    """
            )
        )
    }

    /// Deletes every vehicle, trip, delivery vehicle and task of `provider` in one transaction (benchmarks start from
    /// nothing).
    package func deleteAll(provider: String) async throws {
        try await database.transaction { connection in
            for table in [
                "emulator_vehicle_attributes", "emulator_trips", "emulator_vehicles", "emulator_tasks",
                "emulator_task_attributes", "emulator_delivery_vehicles", "emulator_delivery_vehicle_attributes",
            ] {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "DELETE FROM \(table) WHERE provider = $1",
                        binds: Self.bindings([.text(provider)])
                    ),
                    logger: self.database.logger
                )
            }
        }
    }

    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .text(let text): bindings.append(text)
            case .integer(let number): bindings.append(number)
            case .real(let number): bindings.append(number)
            case .bool(let flag): bindings.append(flag)
            case .blob(let data): bindings.append(ByteBuffer(bytes: data))
            }
        }
        return bindings
    }
}
