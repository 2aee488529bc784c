import FleetAuthCore
public import FleetAuthDatabase
import FleetAuthServerCore
package import FleetEngineAPI
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import SwiftProtobuf

/// The emulator's store (``EmulatorStorage``) on PostgreSQL, for several emulators on one database: messages kept in
/// the protobuf binary format as on SQLite, each change one transaction (or one conditional statement), and every
/// read-modify-write applied only to the state it read — UpdateVehicle by a version check
/// (`updateVehicle(provider:id:_:)`), the rest holding the row's lock (`SELECT … FOR UPDATE`) — so concurrent updates
/// of one vehicle or trip from any number of instances apply one after the other: none is lost and no two interleave
/// fields. IDs are compared byte by byte (`COLLATE "C"`), so pages come in the same order as on SQLite. A vehicle's
/// current trips are read from the trips table, never copied into the vehicle, so a trip's assignment and the vehicle's
/// trips cannot disagree.
public final class PostgresFleetStore: EmulatorStore {
    package let database: PostgreSQLDatabase

    /// Runs `body` with the store at `url`, connected and migrated; its connection pool closes when `body`
    /// returns. Run a server's service group inside `body`: the store is one of its services.
    ///
    /// `maximumConnections` counts every connection the store opens: a quarter of them, four at most, are kept out
    /// of the pool for the batched writes of concurrent location updates. `timeouts` bound every call.
    public static func withConnected<Result>(
        _ url: PostgresURL,
        maximumConnections: Int = 20,
        timeouts: DatabaseTimeouts = .requests,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresFleetStore) async throws -> Result
    ) async throws -> Result {
        try await PostgreSQLDatabase.withDatabase(
            url,
            migrations: migrations,
            maximumConnections: maximumConnections,
            reservedConnections: reservedConnections(maximumConnections),
            settings: settings,
            limits: timeouts
        ) { database in
            try await body(PostgresFleetStore(database: database))
        }
    }

    /// Connects and migrates, with the pool running in `pools`' scope. Its calls are bounded by a
    /// ``DatabaseDeadline`` only when `limits` says so: tests leave them out, since their statements may rightly
    /// queue long on a loaded machine; a server's store, opened by `withConnected`, has ``DatabaseDeadline/Limits/requests``, and so has the benchmark's.
    package static func connect(
        _ url: PostgresURL,
        maximumConnections: Int = 20,
        limits: DatabaseDeadline.Limits? = nil,
        in pools: PostgresPools
    ) async throws(StoreError) -> PostgresFleetStore {
        PostgresFleetStore(
            database: try await pools.connect(
                url,
                migrations: migrations,
                maximumConnections: maximumConnections,
                reservedConnections: reservedConnections(maximumConnections),
                settings: settings,
                limits: limits
            )
        )
    }

    /// The emulator's connections commit without waiting for the WAL to reach the disk (`synchronous_commit = off`),
    /// as its SQLite store does (WAL, `synchronous = NORMAL`): a commit survives the emulator's crash, `kill -9`
    /// included, and a crash of the database server or of its machine can lose at most the last fraction of a second
    /// of commits (PostgreSQL flushes the WAL every `wal_writer_delay`, 200 ms by default), never consistency. It
    /// holds emulated fleet data; waiting for a disk flush on every update made one update cost a flush's latency
    /// (the token server keeps PostgreSQL's default for its users, grants and audit log).
    static let settings = ["synchronous_commit": "off"]

    /// The vehicles this instance last read or wrote, as they were at a version: an update starts from here and
    /// writes in one round trip when nobody changed the vehicle since. The write's version check is what decides,
    /// so an entry gone stale (another instance wrote) costs one failed write and a read, never a lost update.
    private let recent: NIOLockedValueBox<[VehicleKey: KnownVehicle]>
    /// How many vehicles `recent` holds before it starts again from empty.
    private let recentCapacity: Int

    /// UpdateVehicle's writes of a new body and location (most updates), committed together under load: one
    /// statement for the batch, each row under its own version check; the outcome is the new version, or nil
    /// where the check failed.
    private let bodyWrites: GroupCommit<WriteVehicleBody, Int64?>
    /// How many batches of body writes run at once. One at a time makes a batch's round trip the ceiling when
    /// few calls are in flight (8 in flight: 1,077 updates/s against 2,513/s unbatched); 2, 4 and 8 measured
    /// 1,412 / 2,715 / 3,511, 2,397 / 4,016 / 4,471 and 2,256 / 3,194 / 4,310 per s at 8 / 32 / 64 in flight
    /// (`fleetauth bench emulator --only fleet,postgres`).
    static let concurrentBodyWrites = 4

    /// The connections kept out of the pool for the body writes, one per concurrent batch, from a quarter of
    /// `maximumConnections` at most (none from fewer than four). Leasing from the pool for every batch started
    /// keep-alive timers that cost more than the pool saved (``PostgresReservedConnections``).
    static func reservedConnections(_ maximumConnections: Int) -> Int {
        min(concurrentBodyWrites, maximumConnections / 4)
    }

    package init(database: PostgreSQLDatabase, recentCapacity: Int = 20_000) {
        self.database = database
        self.recentCapacity = recentCapacity
        self.recent = NIOLockedValueBox([:])
        bodyWrites = GroupCommit(maximumBatch: 64, maximumConcurrentCommits: Self.concurrentBodyWrites) { writes in
            try await Self.writeBodies(writes, database)
        }
    }

    /// Writes a batch of bodies in one statement; the new version of each, or nil where its check failed.
    ///
    /// The rows are sent in key order, so that every batch — of this instance or another — locks vehicles in the
    /// same order and two batches sharing vehicles wait for each other instead of deadlocking. Should the server
    /// still end the batch for a deadlock (with other writers' transactions) or a serialization failure, nothing of
    /// it was written, and each write is sent on its own: a one-row statement holds one lock.
    private static func writeBodies(_ writes: [WriteVehicleBody], _ database: PostgreSQLDatabase) async throws
        -> [Int64?]
    {
        if writes.count == 1 { return [try await database.execute(writes[0], reserved: true).first] }
        let order = writes.indices.sorted {
            (writes[$0].provider, writes[$0].id) < (writes[$1].provider, writes[$1].id)
        }
        var versions = [Int64?](repeating: nil, count: writes.count)
        guard
            let written = try await database.executeUnlessAborted(
                WriteVehicleBodies(writes: order.map { writes[$0] }),
                reserved: true
            )
        else {
            for (index, write) in writes.enumerated() { versions[index] = try await database.execute(write).first }
            return versions
        }
        for (item, version) in written { versions[order[Int(item) - 1]] = version }
        return versions
    }

    public func run() async throws { try await database.run() }

    /// Closes the connection pool (for a one-shot use, such as a CLI command).
    public func close() async { await database.close() }

    // MARK: Vehicles

    package func vehicleWithActiveTrips(provider: String, id: String) async throws
        -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip])?
    {
        do {
            let current = try await read(VehicleKey(provider: provider, id: id))
            return (current.vehicle, current.trips)
        } catch let error as StoreError where error.code == .notFound {
            return nil
        }
    }

    package func insertVehicle(_ vehicle: FleetEngineV1.Vehicle, provider: String, id: String) async throws {
        let body = try Self.encode(vehicle)
        let row = VehicleRow(vehicle)
        // The vehicle and its attributes in one statement: the attributes only if the vehicle was inserted.
        let rows = try await database.query(
            """
            WITH inserted AS (
                INSERT INTO emulator_vehicles
                    (provider, id, body, state, category, capacity, trip_types, seen, lat, lng, location)
                VALUES (\(provider), \(id), \(body), \(row.state), \(row.category), \(row.capacity),
                    \(row.tripTypes), \(row.seen), \(row.latitude), \(row.longitude),
                    point(\(row.latitude)::float8, \(row.longitude)::float8))
                ON CONFLICT DO NOTHING RETURNING provider, id),
            attributes AS (
                INSERT INTO emulator_vehicle_attributes (provider, vehicle_id, key, value)
                SELECT i.provider, i.id, x.k, x.val FROM inserted i,
                    unnest(\(Array(row.attributes.keys))::text[], \(Array(row.attributes.values))::text[]) AS x(k, val))
            SELECT 1 FROM inserted
            """
        )
        guard !rows.isEmpty else {
            throw StoreError.alreadyExists("Vehicle providers/\(provider)/vehicles/\(id) already exists.")
        }
    }

    /// How many times an update reads again after another writer changed the vehicle (or its active trips) in
    /// between, before it takes the row lock instead.
    static let optimisticAttempts = 3

    /// An update in one round trip and no transaction when this instance last wrote or read the vehicle, two
    /// otherwise: the vehicle, its version and its active trips come from memory or from one statement; the new body
    /// is written by one statement only if neither the vehicle's version nor its set of active trips changed since
    /// (every write of a vehicle takes a new version from a sequence, so a deleted and recreated vehicle never
    /// matches). If another instance got there first, it reads again (a transform's refusal of a remembered state
    /// is checked against a fresh read the same way); after `optimisticAttempts` conflicting reads it falls back to
    /// `lockedUpdate(provider:id:_:)`. Either way each update applies to the state it read, so none is lost and no
    /// two interleave fields.
    package func updateVehicle(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineV1.Vehicle, [StoredTrip]) throws -> FleetEngineV1.Vehicle
    ) async throws -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) {
        let key = VehicleKey(provider: provider, id: id)
        var known = recent.withLockedValue { $0[key] }
        var attempts = 0
        while attempts < Self.optimisticAttempts {
            let current: KnownVehicle
            if let remembered = known {
                current = remembered
                known = nil
            } else {
                current = try await read(key)
                attempts += 1
            }
            let updated: FleetEngineV1.Vehicle
            do {
                updated = try transform(current.vehicle, current.trips)
            } catch {
                // A refusal of what this instance remembers may be a refusal of a state another instance has
                // since changed: only a refusal of what was just read stands.
                guard attempts == 0 else { throw error }
                forget(key)
                continue
            }
            let body = try Self.encode(updated)
            let row = VehicleRow(updated)
            let written =
                row.sameOutsideLocation(as: VehicleRow(current.vehicle))
                ? try await bodyWrites.submit(
                    WriteVehicleBody(
                        provider: provider,
                        id: id,
                        body: body,
                        version: current.version,
                        trips: current.signature,
                        row: row
                    )
                )
                : try await database.execute(
                    WriteVehicle(
                        provider: provider,
                        id: id,
                        body: body,
                        version: current.version,
                        trips: current.signature,
                        row: row,
                        attributesChanged: Attributes.dictionary(current.vehicle.attributes)
                            != Attributes.dictionary(updated.attributes)
                    )
                ).first
            if let version = written {
                remember(
                    key,
                    KnownVehicle(vehicle: updated, version: version, trips: current.trips, signature: current.signature)
                )
                return (updated, current.trips)
            }
        }
        forget(key)
        return try await lockedUpdate(provider: provider, id: id, transform)
    }

    /// The vehicle, its version and its active trips, read in one statement (and remembered).
    private func read(_ key: VehicleKey) async throws -> KnownVehicle {
        var current: (body: ByteBuffer, version: Int64)?
        var trips: [StoredTrip] = []
        var signature: [String] = []
        for (body, version, tripID, updatedAt, tripBody) in try await database.execute(
            ReadVehicle(provider: key.provider, id: key.id)
        ) {
            current = (body, version)
            if let tripID, let updatedAt, let tripBody {
                trips.append(try Self.trip(id: tripID, updatedAt: updatedAt, body: tripBody))
                signature.append("\(tripID):\(updatedAt)")
            }
        }
        guard let current else {
            forget(key)
            throw StoreError.notFound("Vehicle providers/\(key.provider)/vehicles/\(key.id) not found.")
        }
        let known = KnownVehicle(
            vehicle: try Self.decode(current.body, as: FleetEngineV1.Vehicle.self),
            version: current.version,
            trips: trips,
            signature: signature.joined(separator: ",")
        )
        remember(key, known)
        return known
    }

    private func remember(_ key: VehicleKey, _ known: KnownVehicle) {
        recent.withLockedValue { recent in
            if recent.count >= recentCapacity, recent[key] == nil { recent.removeAll(keepingCapacity: true) }
            recent[key] = known
        }
    }

    private func forget(_ key: VehicleKey) {
        _ = recent.withLockedValue { $0.removeValue(forKey: key) }
    }

    /// The update holding the vehicle's row lock from the read to the commit (four round trips): what a contended
    /// vehicle falls back to.
    func lockedUpdate(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineV1.Vehicle, [StoredTrip]) throws -> FleetEngineV1.Vehicle
    ) async throws -> (vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) {
        try await database.transaction { connection in
            let logger = self.database.logger
            // The vehicle, locked, and its active trips in one round trip (each costs more than the SQL itself).
            var current: ByteBuffer?
            var trips: [StoredTrip] = []
            for try await (body, tripID, updatedAt, tripBody) in try await connection.query(
                """
                SELECT v.body, t.id, t.updated_at, t.body FROM emulator_vehicles v
                LEFT JOIN emulator_trips t ON t.provider = v.provider AND t.vehicle_id = v.id AND t.active
                WHERE v.provider = \(provider) AND v.id = \(id) ORDER BY t.id FOR UPDATE OF v
                """,
                logger: logger
            ).decode((ByteBuffer, String?, Int64?, ByteBuffer?).self) {
                current = body
                if let tripID, let updatedAt, let tripBody {
                    trips.append(try Self.trip(id: tripID, updatedAt: updatedAt, body: tripBody))
                }
            }
            guard let current else {
                throw StoreError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
            }
            let vehicle = try Self.decode(current, as: FleetEngineV1.Vehicle.self)
            let updated = try transform(vehicle, trips)
            let body = try Self.encode(updated)
            let row = VehicleRow(updated)
            try await connection.query(
                """
                UPDATE emulator_vehicles SET body = \(body), version = nextval('emulator_vehicle_versions'),
                    state = \(row.state), category = \(row.category), capacity = \(row.capacity),
                    trip_types = \(row.tripTypes), seen = \(row.seen), lat = \(row.latitude), lng = \(row.longitude),
                    location = point(\(row.latitude)::float8, \(row.longitude)::float8)
                WHERE provider = \(provider) AND id = \(id)
                """,
                logger: logger
            )
            if row.attributes != Attributes.dictionary(vehicle.attributes) {
                try await connection.query(
                    "DELETE FROM emulator_vehicle_attributes WHERE provider = \(provider) AND vehicle_id = \(id)",
                    logger: logger
                )
                try await connection.query(
                    """
                    INSERT INTO emulator_vehicle_attributes (provider, vehicle_id, key, value)
                    SELECT \(provider), \(id), k, val
                    FROM unnest(\(Array(row.attributes.keys))::text[], \(Array(row.attributes.values))::text[]) AS x(k, val)
                    """,
                    logger: logger
                )
            }
            return (updated, trips)
        }
    }
}

/// A vehicle's key in ``PostgresFleetStore``'s memory of recent vehicles.
private struct VehicleKey: Hashable, Sendable {
    var provider: String
    var id: String
}

/// A vehicle as it was stored at `version`, with its active trips and their signature (IDs and change times).
private struct KnownVehicle: Sendable {
    var vehicle: FleetEngineV1.Vehicle
    var version: Int64
    var trips: [StoredTrip]
    var signature: String
}
