import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// The on-demand tables: ``OnDemandStore``'s trip methods and its plain reads of vehicles, as plans in both stores'
/// SQL (each store writes and searches vehicles its own way). A trip assigned to a vehicle is written while the
/// vehicle's row is held (PostgreSQL: a share lock, so it cannot be deleted meanwhile); an update holds the trip's
/// row from its read to its commit.
extension StoreSQL {
    func vehicle(provider: String, id: String) -> SQLPlan<FleetEngineV1.Vehicle?> {
        .read(.lookup, [row("body", of: vehicles, provider, id)]) {
            try $0[0].first?.decode("body", as: FleetEngineV1.Vehicle.self)
        }
    }

    func vehicles(provider: String, afterID: String?, limit: Int) -> SQLPlan<[StoredVehicle]> {
        .read(.list, [page(of: vehicles, provider, after: afterID, limit: limit)]) {
            try $0[0].map {
                StoredVehicle(id: try $0.decode("id"), vehicle: try $0.decode("body", as: FleetEngineV1.Vehicle.self))
            }
        }
    }

    /// What counts the vehicles a query matches, as its column `n`: the attribute index alone, the counts kept by
    /// state, or else the query's own condition over the vehicles (`v`) with its values.
    func vehicleCount(provider: String, _ query: VehicleQuery, otherwise condition: () -> VehicleQuerySQL)
        -> SQLStatement
    {
        switch query.countShortcut {
        case .attribute(let key, let value):
            """
            SELECT count(*) AS n FROM \(vehicleAttributes) WHERE provider = \(provider) AND key = \(key) \
            AND value = \(value)
            """
        case .state(let state):
            """
            SELECT CAST(coalesce(sum(n), 0) AS BIGINT) AS n FROM \(vehicleCounts) WHERE provider = \(provider) \
            AND state = \(Int64(state))
            """
        case .every:
            "SELECT CAST(coalesce(sum(n), 0) AS BIGINT) AS n FROM \(vehicleCounts) WHERE provider = \(provider)"
        case nil:
            condition().counting(in: vehicles)
        }
    }

    /// The number (`n`) of the vehicle's active trips.
    func activeTripCount(provider: String, vehicleID: String) -> SQLStatement {
        """
        SELECT COUNT(*) AS n FROM \(trips)\(tripsByVehicle) WHERE provider = \(provider) AND vehicle_id = \(vehicleID) \
        AND active = TRUE
        """
    }

    /// Deletes a vehicle, its attributes and its place in the spatial index; `conflict` while it has active trips.
    func deleteVehicle(provider: String, id: String) -> SQLPlan<Void> {
        let reads = [
            exists(in: vehicles, provider, id, locking: locking), activeTripCount(provider: provider, vehicleID: id),
        ]
        return SQLPlan(.write, reads: reads) { rows in
            guard !rows[0].isEmpty else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
            }
            let active = try rows[1].first?.decode("n", as: Int64.self) ?? 0
            guard active == 0 else {
                throw StoreError.conflict(
                    "Vehicle providers/\(provider)/vehicles/\(id) has \(active) active trip(s); complete or cancel them first."
                )
            }
            let location = vehicleLocations.map { locations -> SQLStatement in
                """
                DELETE FROM \(locations) WHERE seq = (SELECT seq FROM \(vehicles) WHERE provider = \(provider) \
                AND id = \(id))
                """
            }
            let writes = [
                delete(from: vehicleAttributes, owner: "vehicle_id", provider, id),
                delete(from: vehicles, provider, id),
            ]
            return .done(writes: (location.map { [$0] } ?? []) + writes, result: ())
        }
    }

    private func trip(_ provider: String, _ id: String, locking: SQLFragment = "") -> SQLStatement {
        row("id, updated_at, body", of: trips, provider, id, locking: locking)
    }

    private static func storedTrips(_ rows: [SQLRow]) throws -> [StoredTrip] {
        try rows.map {
            StoredTrip(
                id: try $0.decode("id"),
                trip: try $0.decode("body", as: FleetEngineV1.Trip.self),
                updatedAt: Date(epochMilliseconds: try $0.decode("updated_at"))
            )
        }
    }

    /// `outcome` once the vehicle a trip is assigned to is read and held; `not_found` if there is none.
    private func holding<Result>(_ vehicleID: String?, provider: String, then outcome: SQLPlan<Result>.Outcome)
        -> SQLPlan<Result>.Outcome
    {
        guard let vehicleID else { return outcome }
        return .then(reads: [exists(in: vehicles, provider, vehicleID, locking: sharing)]) { rows in
            guard !rows[0].isEmpty else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(vehicleID) not found.")
            }
            return outcome
        }
    }

    func trip(provider: String, id: String) -> SQLPlan<StoredTrip?> {
        .read(.lookup, [trip(provider, id)]) { try Self.storedTrips($0[0]).first }
    }

    func insertTrip(_ trip: StoredTrip, provider: String) -> SQLPlan<Void> {
        SQLPlan(.write, reads: [exists(in: trips, provider, trip.id)]) { rows in
            let taken = StoreError.alreadyExists("Trip providers/\(provider)/trips/\(trip.id) already exists.")
            guard rows[0].isEmpty else { throw taken }
            let insert: SQLStatement = """
                INSERT INTO \(trips) (provider, id, vehicle_id, active, updated_at, body)
                VALUES (\(provider), \(trip.id), \(trip.vehicleID), \(trip.isActive), \(trip.updatedAt.epochMilliseconds), \
                \(try trip.trip.serializedData()))
                ON CONFLICT DO NOTHING RETURNING 1
                """
            return holding(
                trip.vehicleID,
                provider: provider,
                then: .done(writes: [insert.expecting(1, otherwise: taken)], result: ())
            )
        }
    }

    func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) -> SQLPlan<StoredTrip> {
        SQLPlan(.write, reads: [trip(provider, id, locking: locking)]) { rows in
            guard let current = try Self.storedTrips(rows[0]).first else {
                throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.")
            }
            var updated = try transform(current)
            updated.id = current.id
            let update: SQLStatement = """
                UPDATE \(trips) SET vehicle_id = \(updated.vehicleID), active = \(updated.isActive), \
                updated_at = \(updated.updatedAt.epochMilliseconds), body = \(try updated.trip.serializedData()) \
                WHERE provider = \(provider) AND id = \(id)
                """
            let done = SQLPlan.Outcome.done(writes: [update], result: updated)
            return updated.vehicleID == current.vehicleID
                ? done : holding(updated.vehicleID, provider: provider, then: done)
        }
    }

    func deleteTrip(provider: String, id: String) -> SQLPlan<Void> {
        let delete: SQLStatement = "DELETE FROM \(trips) WHERE provider = \(provider) AND id = \(id) RETURNING 1"
        let missing = StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.")
        return SQLPlan(.write, reads: []) { _ in .done(writes: [delete.expecting(1, otherwise: missing)], result: ()) }
    }

    func trips(
        provider: String,
        vehicleID: String?,
        activeOnly: Bool,
        updatedAtMost: Date?,
        afterID: String?,
        limit: Int
    ) -> SQLPlan<[StoredTrip]> {
        var select: SQLStatement =
            "SELECT id, updated_at, body FROM \(trips) WHERE provider = \(provider) AND id > \(afterID ?? "")"
        if let vehicleID { select = "\(select) AND vehicle_id = \(vehicleID)" }
        if activeOnly { select = "\(select) AND active = TRUE" }
        if let updatedAtMost { select = "\(select) AND updated_at <= \(updatedAtMost.epochMilliseconds)" }
        return .read(.list, ["\(select) ORDER BY id LIMIT \(max(limit, 0))"]) { try Self.storedTrips($0[0]) }
    }
}
