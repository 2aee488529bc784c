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
        if let vehicleLocations {
            writes.append(
                "DELETE FROM \(vehicleLocations) WHERE seq IN (SELECT seq FROM \(vehicles) WHERE provider = \(provider))"
            )
        }
        for table in [
            vehicleAttributes, trips, vehicleCounts, vehicles, deliveryVehicleAttributes, taskAttributes, taskCounts,
            tasks, deliveryVehicles,
        ] {
            writes.append("DELETE FROM \(table) WHERE provider = \(provider)")
        }
        let statements = writes
        return SQLPlan(.write, reads: []) { _ in .done(writes: statements, result: ()) }
    }
}
