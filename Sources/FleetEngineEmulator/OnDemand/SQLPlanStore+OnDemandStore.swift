package import FleetEngineAPI
package import Foundation

/// ``OnDemandStore``'s methods that a store kept in SQL tables runs as plans.
extension SQLPlanStore {
    package func vehicle(provider: String, id: String) async throws -> FleetEngineV1.Vehicle? {
        try await run(Self.storeSQL.vehicle(provider: provider, id: id))
    }

    package func vehicles(provider: String, afterID: String?, limit: Int) async throws -> [StoredVehicle] {
        try await run(Self.storeSQL.vehicles(provider: provider, afterID: afterID, limit: limit))
    }

    package func deleteVehicle(provider: String, id: String) async throws {
        try await run(Self.storeSQL.deleteVehicle(provider: provider, id: id))
    }

    package func trip(provider: String, id: String) async throws -> StoredTrip? {
        try await run(Self.storeSQL.trip(provider: provider, id: id))
    }

    package func insertTrip(_ trip: StoredTrip, provider: String) async throws {
        try await run(Self.storeSQL.insertTrip(trip, provider: provider))
    }

    package func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) async throws -> StoredTrip {
        try await run(Self.storeSQL.updateTrip(provider: provider, id: id, transform))
    }

    package func deleteTrip(provider: String, id: String) async throws {
        try await run(Self.storeSQL.deleteTrip(provider: provider, id: id))
    }

    package func trips(
        provider: String,
        vehicleID: String?,
        activeOnly: Bool,
        updatedAtMost: Date?,
        afterID: String?,
        limit: Int
    ) async throws -> [StoredTrip] {
        let plan = Self.storeSQL.trips(
            provider: provider,
            vehicleID: vehicleID,
            activeOnly: activeOnly,
            updatedAtMost: updatedAtMost,
            afterID: afterID,
            limit: limit
        )
        return try await run(plan)
    }
}
