package import FleetEngineAPI
package import Foundation

/// Where the emulator keeps vehicles and trips: each as its `maps.fleetengine.v1` message, keyed by provider and
/// ID. A trip's assigned vehicle and whether it is active are derived from the message and indexed, so a
/// vehicle's `currentTrips` and a driver's access to its trips always come from one place.
///
/// Every method is atomic: an update reads, transforms and writes in one transaction, so concurrent updates of
/// one vehicle never lose an update or interleave fields, and a call that returned has been made durable.
/// Failures are `StoreError`s (`not_found`, `already_exists`, `conflict`); an error thrown by a `transform`
/// is rethrown as it is, with nothing written.
///
/// Its lifecycle is the whole database's (``EmulatorStore``).
package protocol OnDemandStore: Sendable {
    /// A vehicle, or nil.
    func vehicle(provider: String, id: String) async throws -> FleetEngineV1.Vehicle?
    /// A vehicle and its active trips in ID order, read together (one transaction, one round trip), or nil.
    func vehicleWithActiveTrips(provider: String, id: String) async throws
        -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip])?
    /// Stores a new vehicle; `already_exists` if the ID is taken.
    func insertVehicle(_ vehicle: FleetEngineV1.Vehicle, provider: String, id: String) async throws
    /// Replaces a vehicle with `transform(current, activeTrips)`; `not_found` if there is none. Returns the stored
    /// vehicle and its active trips, read in the same transaction.
    func updateVehicle(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineV1.Vehicle, [StoredTrip]) throws -> FleetEngineV1.Vehicle
    ) async throws -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip])
    /// Deletes a vehicle; `not_found`, or `conflict` while active trips are assigned to it.
    func deleteVehicle(provider: String, id: String) async throws
    /// Vehicles in ID order after `afterID`, at most `limit`.
    func vehicles(provider: String, afterID: String?, limit: Int) async throws -> [StoredVehicle]
    /// The vehicles `query` matches whose IDs sort after `afterID`, in ID order, at most `limit` (all when nil),
    /// each with its active trips; with `counting`, also how many match on every page. The result must equal
    /// ``scanVehicles(provider:matching:after:limit:counting:)``'s (the default, which reads every vehicle); the
    /// project's stores answer from indexes, at a cost that follows the matches rather than the fleet.
    func vehicles(provider: String, matching query: VehicleQuery, after afterID: String?, limit: Int?, counting: Bool)
        async throws -> VehicleQueryResult
    /// The positions of the vehicles `query` matches that have a last location, in no particular order: what a
    /// search ranks by distance before it reads any vehicle whole. Must equal the default's answer.
    func vehiclePositions(provider: String, matching query: VehicleQuery) async throws -> [VehiclePosition]

    /// A trip, or nil.
    func trip(provider: String, id: String) async throws -> StoredTrip?
    /// Stores a new trip; `already_exists` if the ID is taken, `not_found` if it names a vehicle that does not
    /// exist (checked in the same transaction).
    func insertTrip(_ trip: StoredTrip, provider: String) async throws
    /// Replaces a trip with `transform(current)`; `not_found` if there is none, or if the result names a vehicle
    /// it was not assigned to before and that does not exist (checked in the same transaction).
    func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) async throws -> StoredTrip
    /// Deletes a trip; `not_found`.
    func deleteTrip(provider: String, id: String) async throws
    /// Trips in ID order after `afterID`, optionally only those of one vehicle, only active ones, and only those
    /// last changed at or before `updatedAtMost` (SearchTrips' `minimumStaleness`): every condition in the query.
    func trips(
        provider: String,
        vehicleID: String?,
        activeOnly: Bool,
        updatedAtMost: Date?,
        afterID: String?,
        limit: Int
    ) async throws -> [StoredTrip]
}

/// A vehicle as stored, with its ID.
package struct StoredVehicle: Sendable, Hashable {
    package var id: String
    package var vehicle: FleetEngineV1.Vehicle

    package init(id: String, vehicle: FleetEngineV1.Vehicle) {
        self.id = id
        self.vehicle = vehicle
    }
}

/// A trip as stored: its ID, its message, and when it last changed.
package struct StoredTrip: Sendable, Hashable {
    /// The trip ID.
    package var id: String
    /// The message as kept (server-set fields included, `name` and derived fields not).
    package var trip: FleetEngineV1.Trip
    /// When the trip was created or last changed.
    package var updatedAt: Date

    package init(id: String, trip: FleetEngineV1.Trip, updatedAt: Date) {
        self.id = id
        self.trip = trip
        self.updatedAt = updatedAt
    }

    /// The assigned vehicle, if any.
    package var vehicleID: String? { trip.vehicleID.isEmpty ? nil : trip.vehicleID }
    /// Whether the trip is active: not `COMPLETE` or `CANCELED`.
    package var isActive: Bool { trip.tripStatus != .complete && trip.tripStatus != .canceled }
}

extension OnDemandStore {
    /// Two reads: stores answer in one.
    package func vehicleWithActiveTrips(provider: String, id: String) async throws
        -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip])?
    {
        guard let vehicle = try await vehicle(provider: provider, id: id) else { return nil }
        let trips = try await trips(provider: provider, vehicleID: id, activeOnly: true, afterID: nil, limit: .max)
        return (vehicle, trips)
    }

    /// Trips in ID order after `afterID`, optionally only those of one vehicle and only active ones.
    package func trips(provider: String, vehicleID: String?, activeOnly: Bool, afterID: String?, limit: Int)
        async throws
        -> [StoredTrip]
    {
        try await trips(
            provider: provider,
            vehicleID: vehicleID,
            activeOnly: activeOnly,
            updatedAtMost: nil,
            afterID: afterID,
            limit: limit
        )
    }
}
