/// What the test controls (<doc:TestControls>) need of the emulator's store, beyond the two APIs and the request
/// log: both of the project's stores, through the plans they share.
package protocol ControlStore: Sendable {
    /// Deletes every vehicle, trip, delivery vehicle and task of `provider` in one transaction, so a call racing
    /// the reset sees the provider's state before it or after it, never part of each; other providers are untouched.
    func resetFleet(provider: String) async throws
}

extension SQLPlanStore {
    package func resetFleet(provider: String) async throws {
        try await run(Self.storeSQL.resetFleet(provider: provider))
    }
}

extension StoreSQL {
    /// ``ControlStore/resetFleet(provider:)`` as one plan: the rows that point at others first (SQLite's spatial
    /// index, attributes, trips), and the per-state counts before the entities they count. A count's row gone, each
    /// deleted row's trigger finds nothing to decrement: on PostgreSQL, decrementing one row 10,000 times (a new
    /// version of it each time) took 780 ms of a reset's 820; with the row deleted first the delete took 50 ms.
    func resetFleet(provider: String) -> SQLPlan<Void> {
        var writes: [SQLStatement] = []
        for table in [
            vehicleAttributes, trips, vehicleCounts, vehicles, deliveryVehicleAttributes, taskAttributes, taskCounts,
            tasks, deliveryVehicles,
        ] {
            writes.append("DELETE FROM \(table) WHERE provider = \(provider)")
        }
        guard let locations = vehicleLocations else {
            // PostgreSQL: the rows are locked first, trips then vehicles, each in key order, as the API's writes
            // lock them (a trip before its vehicle; a batch of vehicle updates in key order), so the reset waits
            // for them or they for it, and neither is ended for a deadlock.
            let statements = writes
            let locks = [trips, vehicles].map { table -> SQLStatement in
                "SELECT 1 AS locked FROM \(table) WHERE provider = \(provider) ORDER BY id\(locking)"
            }
            return SQLPlan(.write, reads: locks) { _ in .done(writes: statements, result: ()) }
        }
        // SQLite's spatial index: deleting its rows one by one took 60 ms of a 10,000-vehicle reset's 100. When the
        // provider holds most of them, the index is made again from the other providers' vehicles instead (its
        // rows are the vehicles with a location, as the store writes them).
        let counts: SQLStatement = """
            SELECT COUNT(*) FILTER (WHERE provider = \(provider)) AS mine, COUNT(*) FILTER (WHERE provider <> \(provider)) \
            AS others FROM \(vehicles) WHERE lat IS NOT NULL AND lng IS NOT NULL
            """
        let statements = writes
        return SQLPlan(.write, reads: [counts]) { rows in
            let mine = try rows[0].first?.decode("mine", as: Int64.self) ?? 0
            let others = try rows[0].first?.decode("others", as: Int64.self) ?? 0
            let index: [SQLStatement] =
                mine > others
                ? [
                    "DROP TABLE \(locations)",
                    // As migration v3 made it.
                    "CREATE VIRTUAL TABLE \(locations) USING rtree(seq, min_lat, max_lat, min_lng, max_lng)",
                    """
                    INSERT INTO \(locations) SELECT seq, lat, lat, lng, lng FROM \(vehicles) WHERE provider <> \(provider) \
                    AND lat IS NOT NULL AND lng IS NOT NULL
                    """,
                ]
                : [
                    """
                    DELETE FROM \(locations) WHERE seq IN (SELECT seq FROM \(vehicles) WHERE provider = \(provider))
                    """
                ]
            return .done(writes: index + statements, result: ())
        }
    }
}
