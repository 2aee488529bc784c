import FleetAuthServerCore

/// The tables both of the project's stores keep, in one store's dialect, and the plans of the methods the stores
/// share (in its extensions: the Deliveries API, trips, plain reads and deletes of vehicles). Both dialects run the
/// same SQL but for table names, row locks and index hints. Package plumbing, not API: what a store names as its
/// ``SQLPlanStore/storeSQL``.
package struct StoreSQL: Sendable {
    let vehicles: SQLFragment
    let vehicleAttributes: SQLFragment
    let vehicleCounts: SQLFragment
    /// SQLite's spatial index of the vehicles' locations (PostgreSQL keeps a location column in the vehicles table).
    let vehicleLocations: SQLFragment?
    let trips: SQLFragment
    let deliveryVehicles: SQLFragment
    let deliveryVehicleAttributes: SQLFragment
    let tasks: SQLFragment
    let taskAttributes: SQLFragment
    let taskCounts: SQLFragment
    /// Ends a read whose rows the plan may write: PostgreSQL locks them against the other instances on the same
    /// database; SQLite's one writer needs no lock.
    let locking: SQLFragment
    /// Ends a read of rows that must not change or go until the plan commits (the vehicle a trip is assigned to).
    let sharing: SQLFragment
    /// SQLite's index hints. Without statistics its planner prefers the primary key's `provider` prefix on these
    /// WITHOUT ROWID tables, a scan of every task of the provider (measured: an UpdateDeliveryVehicle took 1.8 ms
    /// among 10,000 tasks, 0.3 ms among 100), so the lookups by vehicle and by tracking ID name their index.
    let byVehicle: SQLFragment
    let byTrackingID: SQLFragment
    let tripsByVehicle: SQLFragment

    /// The SQLite store's tables.
    package static let sqlite = StoreSQL(prefix: "", sqlite: true)
    /// The PostgreSQL store's tables, prefixed because the emulator may share its database.
    package static let postgres = StoreSQL(prefix: "emulator_", sqlite: false)

    private init(prefix: String, sqlite: Bool) {
        func table(_ name: String) -> SQLFragment { SQLFragment(prefix + name) }
        vehicles = table("vehicles")
        vehicleAttributes = table("vehicle_attributes")
        vehicleCounts = table("vehicle_counts")
        vehicleLocations = sqlite ? "vehicle_locations" : nil
        trips = table("trips")
        deliveryVehicles = table("delivery_vehicles")
        deliveryVehicleAttributes = table("delivery_vehicle_attributes")
        tasks = table("tasks")
        taskAttributes = table("task_attributes")
        taskCounts = table("task_counts")
        (locking, sharing) = sqlite ? ("", "") : (" FOR UPDATE", " FOR SHARE")
        byVehicle = sqlite ? " INDEXED BY tasks_by_vehicle" : ""
        byTrackingID = sqlite ? " INDEXED BY tasks_by_tracking_id" : ""
        tripsByVehicle = sqlite ? " INDEXED BY trips_by_vehicle" : ""
    }

    // MARK: Shared statements

    func row(_ columns: SQLFragment, of table: SQLFragment, _ provider: String, _ id: String, locking: SQLFragment = "")
        -> SQLStatement
    {
        "SELECT \(columns) FROM \(table) WHERE provider = \(provider) AND id = \(id)\(locking)"
    }

    /// Whether the row exists (read for its lock, or to refuse a duplicate): the plan asks only whether it came back.
    func exists(in table: SQLFragment, _ provider: String, _ id: String, locking: SQLFragment = "") -> SQLStatement {
        row("1 AS found", of: table, provider, id, locking: locking)
    }

    func page(of table: SQLFragment, _ provider: String, after afterID: String?, limit: Int) -> SQLStatement {
        """
        SELECT id, body FROM \(table) WHERE provider = \(provider) AND id > \(afterID ?? "") ORDER BY id \
        LIMIT \(max(limit, 0))
        """
    }

    func delete(from table: SQLFragment, owner: SQLFragment = "id", _ provider: String, _ id: String) -> SQLStatement {
        "DELETE FROM \(table) WHERE provider = \(provider) AND \(owner) = \(id)"
    }

    /// `items` in runs of at most a hundred: what one statement binds of a batch.
    static func chunks<Item>(_ items: [Item]) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: 100).map { items[$0..<min($0 + 100, items.count)] }
    }

    /// Inserts `rows` (each a value for each of `columns`), a hundred rows a statement; `suffix` ends each statement,
    /// and `otherwise` is the error when a statement does not return a row for each row (`RETURNING 1` after
    /// `ON CONFLICT DO NOTHING`).
    static func insert(
        into table: SQLFragment,
        _ columns: [String],
        _ rows: [[SQLValue]],
        suffix: SQLFragment = "",
        expecting otherwise: StoreError? = nil
    ) -> [SQLStatement] {
        let names = SQLFragment(columns.joined(separator: ", "))
        return chunks(rows).map { chunk in
            let tuples = chunk.map { row -> SQLStatement in "(\(list: row))" }.joined(separator: ", ")
            let insert: SQLStatement = "INSERT INTO \(table) (\(names)) VALUES \(tuples)\(suffix)"
            return otherwise.map { insert.expecting(chunk.count, otherwise: $0) } ?? insert
        }
    }
}
