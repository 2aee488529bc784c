import FleetAuthServerCore

/// The tables both of the project's stores keep, in one store's dialect, and the plans of the methods the stores
/// share (in its extensions: the Deliveries API, trips, plain reads and deletes of vehicles). Both dialects run the
/// same SQL but for table names, row locks and index hints. Package plumbing, not API: what a store names as its
/// ``SQLPlanStore/storeSQL``.
package struct StoreSQL: Sendable {
    let vehicles: String
    let vehicleAttributes: String
    let vehicleCounts: String
    /// SQLite's spatial index of the vehicles' locations (PostgreSQL keeps a location column in the vehicles table).
    let vehicleLocations: String?
    let trips: String
    let deliveryVehicles: String
    let deliveryVehicleAttributes: String
    let tasks: String
    let taskAttributes: String
    let taskCounts: String
    /// Ends a read whose rows the plan may write: PostgreSQL locks them against the other instances on the same
    /// database; SQLite's one writer needs no lock.
    let locking: String
    /// Ends a read of rows that must not change or go until the plan commits (the vehicle a trip is assigned to).
    let sharing: String
    /// SQLite's index hints. Without statistics its planner prefers the primary key's `provider` prefix on these
    /// WITHOUT ROWID tables, a scan of every task of the provider (measured: an UpdateDeliveryVehicle took 1.8 ms
    /// among 10,000 tasks, 0.3 ms among 100), so the lookups by vehicle and by tracking ID name their index.
    let byVehicle: String
    let byTrackingID: String
    let tripsByVehicle: String

    /// The SQLite store's tables.
    package static let sqlite = StoreSQL(prefix: "", sqlite: true)
    /// The PostgreSQL store's tables, prefixed because the emulator may share its database.
    package static let postgres = StoreSQL(prefix: "emulator_", sqlite: false)

    private init(prefix: String, sqlite: Bool) {
        vehicles = prefix + "vehicles"
        vehicleAttributes = prefix + "vehicle_attributes"
        vehicleCounts = prefix + "vehicle_counts"
        vehicleLocations = sqlite ? "vehicle_locations" : nil
        trips = prefix + "trips"
        deliveryVehicles = prefix + "delivery_vehicles"
        deliveryVehicleAttributes = prefix + "delivery_vehicle_attributes"
        tasks = prefix + "tasks"
        taskAttributes = prefix + "task_attributes"
        taskCounts = prefix + "task_counts"
        (locking, sharing) = sqlite ? ("", "") : (" FOR UPDATE", " FOR SHARE")
        byVehicle = sqlite ? " INDEXED BY tasks_by_vehicle" : ""
        byTrackingID = sqlite ? " INDEXED BY tasks_by_tracking_id" : ""
        tripsByVehicle = sqlite ? " INDEXED BY trips_by_vehicle" : ""
    }

    // MARK: Shared statements

    func row(_ columns: String, of table: String, _ provider: String, _ id: String, locking: String = "")
        -> SQLStatement
    {
        SQLStatement(
            "SELECT \(columns) FROM \(table) WHERE provider = ? AND id = ?\(locking)",
            [.text(provider), .text(id)]
        )
    }

    func page(of table: String, _ provider: String, after afterID: String?, limit: Int) -> SQLStatement {
        SQLStatement(
            "SELECT id, body FROM \(table) WHERE provider = ? AND id > ? ORDER BY id LIMIT ?",
            [.text(provider), .text(afterID ?? ""), .integer(Int64(max(limit, 0)))]
        )
    }

    func delete(from table: String, owner: String = "id", _ provider: String, _ id: String) -> SQLStatement {
        SQLStatement("DELETE FROM \(table) WHERE provider = ? AND \(owner) = ?", [.text(provider), .text(id)])
    }

    /// `count` placeholders, comma-separated: `?, ?, ?`.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// `items` in runs of at most a hundred: what one statement binds of a batch.
    static func chunks<Item>(_ items: [Item]) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: 100).map { items[$0..<min($0 + 100, items.count)] }
    }

    /// Inserts `rows` into `columns`, a hundred rows a statement; `suffix` ends each statement, and `otherwise` is
    /// the error when a statement does not return a row for each row (`RETURNING 1` after `ON CONFLICT DO NOTHING`).
    static func insert(
        into table: String,
        _ columns: [String],
        _ rows: [SQLRow],
        suffix: String = "",
        expecting otherwise: StoreError? = nil
    ) -> [SQLStatement] {
        let tuple = "(" + placeholders(columns.count) + ")"
        return chunks(rows).map { chunk in
            SQLStatement(
                """
                INSERT INTO \(table) (\(columns.joined(separator: ", ")))
                VALUES \(Array(repeating: tuple, count: chunk.count).joined(separator: ", "))\(suffix)
                """,
                chunk.flatMap { $0 },
                expecting: otherwise.map { (chunk.count, $0) }
            )
        }
    }
}
