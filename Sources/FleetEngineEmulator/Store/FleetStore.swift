public import FleetAuthCore
import FleetAuthServerSupport
public import ServiceLifecycle

/// Where the emulator keeps vehicles and trips. Each resource is its REST JSON message, keyed by provider and ID;
/// a trip also records the vehicle it is assigned to and whether it is active, so a vehicle's `currentTrips` and a
/// driver's access to its trips are always derived from one place.
///
/// Every method is atomic: an update reads, transforms and writes in one transaction, so concurrent updates of
/// one vehicle never lose an update or interleave fields, and a call that returned has been made durable.
/// Failures are ``StoreError``s (`not_found`, `already_exists`, `conflict`); an error thrown by a `transform`
/// is rethrown as it is, with nothing written.
///
/// As a `Service`, a store lives as long as the server using it: `run()` holds its connections until graceful
/// shutdown. Every driver passes the same conformance suite (`FleetStoreConformanceTests`).
public protocol FleetStore: Service {
    /// A vehicle's message, or nil.
    func vehicle(provider: String, id: String) async throws -> JSONObject?
    /// Stores a new vehicle; throws `already_exists` if the ID is taken.
    func insertVehicle(provider: String, id: String, body: JSONObject) async throws
    /// Replaces a vehicle's message with `transform(current)`; throws `not_found` if there is none. Returns the
    /// stored message and the vehicle's active trips, read in the same transaction.
    func updateVehicle(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (JSONObject) throws -> JSONObject
    ) async throws -> (body: JSONObject, activeTrips: [StoredTrip])
    /// Deletes a vehicle; throws `not_found`, or `conflict` while active trips are assigned to it.
    func deleteVehicle(provider: String, id: String) async throws
    /// Vehicles in ID order after `afterID`, at most `limit`.
    func vehicles(provider: String, afterID: String?, limit: Int) async throws -> [(id: String, body: JSONObject)]

    /// A trip's message, or nil.
    func trip(provider: String, id: String) async throws -> StoredTrip?
    /// Stores a new trip; throws `already_exists` if the ID is taken.
    func insertTrip(provider: String, id: String, trip: StoredTrip) async throws
    /// Replaces a trip with `transform(current)`; throws `not_found` if there is none.
    func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) async throws -> StoredTrip
    /// Deletes a trip; throws `not_found`.
    func deleteTrip(provider: String, id: String) async throws
    /// Trips in ID order after `afterID`, optionally only those of one vehicle and only active ones.
    func trips(provider: String, vehicleID: String?, activeOnly: Bool, afterID: String?, limit: Int) async throws
        -> [StoredTrip]
}

/// A trip as stored: its message plus the two facts the store indexes.
public struct StoredTrip: Sendable, Hashable {
    /// The trip ID.
    public var id: String
    /// The REST JSON message.
    public var body: JSONObject
    /// The assigned vehicle, if any.
    public var vehicleID: String?
    /// Whether the trip is active (not `COMPLETE` or `CANCELED`).
    public var isActive: Bool

    public init(id: String, body: JSONObject, vehicleID: String?, isActive: Bool) {
        self.id = id
        self.body = body
        self.vehicleID = vehicleID
        self.isActive = isActive
    }
}
