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
            try $0[0].first.map { try $0[0].decode(as: FleetEngineV1.Vehicle.self) }
        }
    }

    func vehicles(provider: String, afterID: String?, limit: Int) -> SQLPlan<[StoredVehicle]> {
        .read(.list, [page(of: vehicles, provider, after: afterID, limit: limit)]) {
            try $0[0].map {
                StoredVehicle(id: $0[0].text ?? "", vehicle: try $0[1].decode(as: FleetEngineV1.Vehicle.self))
            }
        }
    }

    /// What counts the vehicles a query matches: the attribute index alone, the counts kept by state, or else the
    /// query's own condition over the vehicles (`v`) with its values.
    func vehicleCount(provider: String, _ query: VehicleQuery, otherwise condition: () -> VehicleQuerySQL)
        -> SQLStatement
    {
        switch query.countShortcut {
        case .attribute(let key, let value):
            SQLStatement(
                "SELECT count(*) FROM \(vehicleAttributes) WHERE provider = ? AND key = ? AND value = ?",
                [.text(provider), .text(key), .text(value)]
            )
        case .state(let state):
            SQLStatement(
                "SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM \(vehicleCounts) WHERE provider = ? AND state = ?",
                [.text(provider), .integer(Int64(state))]
            )
        case .every:
            SQLStatement(
                "SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM \(vehicleCounts) WHERE provider = ?",
                [.text(provider)]
            )
        case nil:
            condition().counting(in: vehicles)
        }
    }

    package var activeTripCountOfVehicle: String {
        "SELECT COUNT(*) FROM \(trips)\(tripsByVehicle) WHERE provider = ? AND vehicle_id = ? AND active = TRUE"
    }

    /// Deletes a vehicle, its attributes and its place in the spatial index; `conflict` while it has active trips.
    func deleteVehicle(provider: String, id: String) -> SQLPlan<Void> {
        let reads = [
            row("1", of: vehicles, provider, id, locking: locking),
            SQLStatement(activeTripCountOfVehicle, [.text(provider), .text(id)]),
        ]
        return SQLPlan(.write, reads: reads) { rows in
            guard !rows[0].isEmpty else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
            }
            let active = rows[1].first?[0].integer ?? 0
            guard active == 0 else {
                throw StoreError.conflict(
                    "Vehicle providers/\(provider)/vehicles/\(id) has \(active) active trip(s); complete or cancel them first."
                )
            }
            let location = vehicleLocations.map {
                SQLStatement(
                    "DELETE FROM \($0) WHERE seq = (SELECT seq FROM \(vehicles) WHERE provider = ? AND id = ?)",
                    [.text(provider), .text(id)]
                )
            }
            let writes = [
                delete(from: vehicleAttributes, owner: "vehicle_id", provider, id),
                delete(from: vehicles, provider, id),
            ]
            return .done(writes: (location.map { [$0] } ?? []) + writes, result: ())
        }
    }

    private func trip(_ provider: String, _ id: String, locking: String = "") -> SQLStatement {
        row("id, updated_at, body", of: trips, provider, id, locking: locking)
    }

    private static func storedTrips(_ rows: [SQLRow]) throws -> [StoredTrip] {
        try rows.map {
            StoredTrip(
                id: $0[0].text ?? "",
                trip: try $0[2].decode(as: FleetEngineV1.Trip.self),
                updatedAt: Date(epochMilliseconds: $0[1].integer ?? 0)
            )
        }
    }

    /// `outcome` once the vehicle a trip is assigned to is read and held; `not_found` if there is none.
    private func holding<Result>(_ vehicleID: String?, provider: String, then outcome: SQLPlan<Result>.Outcome)
        -> SQLPlan<Result>.Outcome
    {
        guard let vehicleID else { return outcome }
        return .then(reads: [row("1", of: vehicles, provider, vehicleID, locking: sharing)]) { rows in
            guard !rows[0].isEmpty else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(vehicleID) not found.")
            }
            return outcome
        }
    }

    private func values(_ trip: StoredTrip) throws -> SQLRow {
        [
            .init(trip.vehicleID), .bool(trip.isActive), .integer(trip.updatedAt.epochMilliseconds),
            .blob(try trip.trip.serializedData()),
        ]
    }

    func trip(provider: String, id: String) -> SQLPlan<StoredTrip?> {
        .read(.lookup, [trip(provider, id)]) { try Self.storedTrips($0[0]).first }
    }

    func insertTrip(_ trip: StoredTrip, provider: String) -> SQLPlan<Void> {
        SQLPlan(.write, reads: [row("1", of: trips, provider, trip.id)]) { rows in
            let taken = StoreError.alreadyExists("Trip providers/\(provider)/trips/\(trip.id) already exists.")
            guard rows[0].isEmpty else { throw taken }
            let insert = SQLStatement(
                """
                INSERT INTO \(trips) (provider, id, vehicle_id, active, updated_at, body) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING RETURNING 1
                """,
                [.text(provider), .text(trip.id)] + (try values(trip)),
                expecting: (1, taken)
            )
            return holding(trip.vehicleID, provider: provider, then: .done(writes: [insert], result: ()))
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
            let update = SQLStatement(
                "UPDATE \(trips) SET vehicle_id = ?, active = ?, updated_at = ?, body = ? WHERE provider = ? AND id = ?",
                try values(updated) + [.text(provider), .text(id)]
            )
            let done = SQLPlan.Outcome.done(writes: [update], result: updated)
            return updated.vehicleID == current.vehicleID
                ? done : holding(updated.vehicleID, provider: provider, then: done)
        }
    }

    func deleteTrip(provider: String, id: String) -> SQLPlan<Void> {
        let delete = SQLStatement(
            "DELETE FROM \(trips) WHERE provider = ? AND id = ? RETURNING 1",
            [.text(provider), .text(id)],
            expecting: (1, .notFound("Trip providers/\(provider)/trips/\(id) not found."))
        )
        return SQLPlan(.write, reads: []) { _ in .done(writes: [delete], result: ()) }
    }

    func trips(
        provider: String,
        vehicleID: String?,
        activeOnly: Bool,
        updatedAtMost: Date?,
        afterID: String?,
        limit: Int
    ) -> SQLPlan<[StoredTrip]> {
        var sql = "SELECT id, updated_at, body FROM \(trips) WHERE provider = ? AND id > ?"
        var values: [SQLValue] = [.text(provider), .text(afterID ?? "")]
        if let vehicleID {
            sql += " AND vehicle_id = ?"
            values.append(.text(vehicleID))
        }
        if activeOnly { sql += " AND active = TRUE" }
        if let updatedAtMost {
            sql += " AND updated_at <= ?"
            values.append(.integer(updatedAtMost.epochMilliseconds))
        }
        values.append(.integer(Int64(max(limit, 0))))
        return .read(.list, [SQLStatement(sql + " ORDER BY id LIMIT ?", values)]) { try Self.storedTrips($0[0]) }
    }
}
