import FleetAuthCore
import FleetAuthServerCore
public import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The PostgreSQL store's trips. A trip assigned to a vehicle is written in a transaction holding a share lock on
/// the vehicle (which cannot be deleted meanwhile); an update holds the trip's row lock from its read to its commit.
extension PostgresFleetStore {
    public func trip(provider: String, id: String) async throws -> StoredTrip? {
        let rows = try await database.query(
            "SELECT id, updated_at, body FROM emulator_trips WHERE provider = \(provider) AND id = \(id)"
        )
        return try rows.first.map { row in
            let (id, updatedAt, body) = try row.decode((String, Int64, ByteBuffer).self)
            return try Self.trip(id: id, updatedAt: updatedAt, body: body)
        }
    }

    /// Whether the vehicle exists, holding a share lock on it until the transaction ends (so it cannot be
    /// deleted while a trip is assigned to it).
    static func lockVehicle(_ connection: PostgresConnection, logger: Logger, provider: String, id: String)
        async throws -> Bool
    {
        var exists = false
        for try await _ in try await connection.query(
            "SELECT 1 FROM emulator_vehicles WHERE provider = \(provider) AND id = \(id) FOR SHARE",
            logger: logger
        ) {
            exists = true
        }
        return exists
    }

    public func insertTrip(_ trip: StoredTrip, provider: String) async throws {
        let body = try Self.encode(trip.trip)
        try await database.transaction { connection in
            let logger = self.database.logger
            if let vehicleID = trip.vehicleID,
                try await !Self.lockVehicle(connection, logger: logger, provider: provider, id: vehicleID)
            {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(vehicleID) not found.")
            }
            var inserted = false
            for try await _ in try await connection.query(
                """
                INSERT INTO emulator_trips (provider, id, vehicle_id, active, updated_at, body)
                VALUES (\(provider), \(trip.id), \(trip.vehicleID), \(trip.isActive),
                        \(trip.updatedAt.epochMilliseconds), \(body))
                ON CONFLICT DO NOTHING RETURNING 1
                """,
                logger: logger
            ) {
                inserted = true
            }
            guard inserted else {
                throw StoreError.alreadyExists("Trip providers/\(provider)/trips/\(trip.id) already exists.")
            }
        }
    }

    public func updateTrip(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (StoredTrip) throws -> StoredTrip
    ) async throws -> StoredTrip {
        try await database.transaction { connection in
            let logger = self.database.logger
            var current: StoredTrip?
            for try await (tripID, updatedAt, body) in try await connection.query(
                """
                SELECT id, updated_at, body FROM emulator_trips WHERE provider = \(provider) AND id = \(id)
                FOR UPDATE
                """,
                logger: logger
            ).decode((String, Int64, ByteBuffer).self) {
                current = try Self.trip(id: tripID, updatedAt: updatedAt, body: body)
            }
            guard let current else { throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.") }
            var updated = try transform(current)
            updated.id = current.id
            if let vehicleID = updated.vehicleID, vehicleID != current.vehicleID,
                try await !Self.lockVehicle(connection, logger: logger, provider: provider, id: vehicleID)
            {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(vehicleID) not found.")
            }
            let body = try Self.encode(updated.trip)
            try await connection.query(
                """
                UPDATE emulator_trips SET vehicle_id = \(updated.vehicleID), active = \(updated.isActive),
                    updated_at = \(updated.updatedAt.epochMilliseconds), body = \(body)
                WHERE provider = \(provider) AND id = \(id)
                """,
                logger: logger
            )
            return updated
        }
    }

    public func deleteTrip(provider: String, id: String) async throws {
        let rows = try await database.query(
            "DELETE FROM emulator_trips WHERE provider = \(provider) AND id = \(id) RETURNING 1"
        )
        guard !rows.isEmpty else { throw StoreError.notFound("Trip providers/\(provider)/trips/\(id) not found.") }
    }

    public func trips(
        provider: String,
        vehicleID: String?,
        activeOnly: Bool,
        updatedAtMost: Date?,
        afterID: String?,
        limit: Int
    ) async throws -> [StoredTrip] {
        let staleSince = updatedAtMost?.epochMilliseconds
        // One statement for every filter: a NULL parameter turns its condition off.
        let rows = try await database.query(
            """
            SELECT id, updated_at, body FROM emulator_trips
            WHERE provider = \(provider) AND id > \(afterID ?? "")
              AND (\(vehicleID)::TEXT IS NULL OR vehicle_id = \(vehicleID))
              AND (NOT \(activeOnly) OR active)
              AND (\(staleSince)::BIGINT IS NULL OR updated_at <= \(staleSince))
            ORDER BY id LIMIT \(limit)
            """
        )
        return try rows.map { row in
            let (id, updatedAt, body) = try row.decode((String, Int64, ByteBuffer).self)
            return try Self.trip(id: id, updatedAt: updatedAt, body: body)
        }
    }
}
