import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
public import Foundation
import GRDB

/// The SQLite store's trips: each change one write transaction, a trip's vehicle checked in the same transaction.
extension SQLiteFleetStore {
    public func trip(provider: String, id: String) async throws -> StoredTrip? {
        try await database.lookup { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT id, updated_at, body FROM trips WHERE provider = ? AND id = ?"),
                arguments: [provider, id]
            ).map(Self.trip)
        }
    }

    public func insertTrip(_ trip: StoredTrip, provider: String) async throws {
        let data = try Self.encode(trip.trip)
        try await database.write { db in
            if try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM trips WHERE provider = ? AND id = ?"),
                arguments: [provider, trip.id]
            ) != nil {
                throw StoreError.alreadyExists("Trip providers/\(provider)/trips/\(trip.id) already exists.")
            }
            if let vehicleID = trip.vehicleID, try !Self.vehicleExists(db, provider: provider, id: vehicleID) {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(vehicleID) not found.")
            }
            try db.cachedStatement(
                sql: "INSERT INTO trips (provider, id, vehicle_id, active, updated_at, body) VALUES (?, ?, ?, ?, ?, ?)"
            ).execute(arguments: [
                provider, trip.id, trip.vehicleID, trip.isActive, trip.updatedAt.epochMilliseconds, data,
            ])
        }
    }

    public func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) async throws -> StoredTrip {
        try await database.write { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT id, updated_at, body FROM trips WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                )
            else {
                throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.")
            }
            let current = try Self.trip(row)
            var updated = try transform(current)
            updated.id = current.id
            if let vehicleID = updated.vehicleID, vehicleID != current.vehicleID,
                try !Self.vehicleExists(db, provider: provider, id: vehicleID)
            {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(vehicleID) not found.")
            }
            try db.cachedStatement(
                sql:
                    "UPDATE trips SET vehicle_id = ?, active = ?, updated_at = ?, body = ? WHERE provider = ? AND id = ?"
            ).execute(arguments: [
                updated.vehicleID, updated.isActive, updated.updatedAt.epochMilliseconds, try Self.encode(updated.trip),
                provider, id,
            ])
            return updated
        }
    }

    public func deleteTrip(provider: String, id: String) async throws {
        try await database.write { db in
            try db.cachedStatement(sql: "DELETE FROM trips WHERE provider = ? AND id = ?").execute(arguments: [
                provider, id,
            ])
            guard db.changesCount > 0 else {
                throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.")
            }
        }
    }

    public func trips(
        provider: String,
        vehicleID: String?,
        activeOnly: Bool,
        updatedAtMost: Date?,
        afterID: String?,
        limit: Int
    ) async throws -> [StoredTrip] {
        var sql = "SELECT id, updated_at, body FROM trips WHERE provider = ? AND id > ?"
        var arguments: StatementArguments = [provider, afterID ?? ""]
        if let vehicleID {
            sql += " AND vehicle_id = ?"
            arguments += [vehicleID]
        }
        if activeOnly { sql += " AND active = 1" }
        if let updatedAtMost {
            sql += " AND updated_at <= ?"
            arguments += [updatedAtMost.epochMilliseconds]
        }
        sql += " ORDER BY id LIMIT ?"
        arguments += [limit]
        let query = sql
        let queryArguments = arguments
        return try await writer.read { db in
            try Row.fetchAll(db.cachedStatement(sql: query), arguments: queryArguments).map(Self.trip)
        }
    }
}
