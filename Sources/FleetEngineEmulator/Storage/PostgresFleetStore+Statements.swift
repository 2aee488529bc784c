import FleetEngineAPI
import Foundation
import NIOCore
import PostgresNIO

/// UpdateVehicle's read, prepared: the vehicle, its version and its active trips in one statement.
struct ReadVehicle: PostgresPreparedStatement {
    static let name = "fleetauth_emulator_read_vehicle"
    static let sql = """
        SELECT v.body, v.version, t.id, t.updated_at, t.body FROM emulator_vehicles v
        LEFT JOIN emulator_trips t ON t.provider = v.provider AND t.vehicle_id = v.id AND t.active
        WHERE v.provider = $1 AND v.id = $2 ORDER BY t.id
        """
    typealias Row = (ByteBuffer, Int64, String?, Int64?, ByteBuffer?)

    var provider: String
    var id: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(provider)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// UpdateVehicle's write, prepared: the new body and its indexed values (the attributes only when they changed),
/// only if the vehicle's version and its active trips (IDs and change times) are still those read.
struct WriteVehicle: PostgresPreparedStatement {
    static let name = "fleetauth_emulator_write_vehicle_v2"
    static let sql = """
        WITH updated AS (
            UPDATE emulator_vehicles v SET body = $3, version = nextval('emulator_vehicle_versions'),
                state = $6, category = $7, capacity = $8, trip_types = $9, seen = $10, lat = $11, lng = $12,
                location = point($11::float8, $12::float8)
            WHERE v.provider = $1 AND v.id = $2 AND v.version = $4
            AND (SELECT coalesce(string_agg(t.id || ':' || t.updated_at, ',' ORDER BY t.id), '')
                 FROM emulator_trips t WHERE t.provider = v.provider AND t.vehicle_id = v.id AND t.active) = $5
            RETURNING v.provider, v.id, v.version),
        removed AS (
            DELETE FROM emulator_vehicle_attributes a USING updated u
            WHERE $13 AND a.provider = u.provider AND a.vehicle_id = u.id AND a.key <> ALL($14::text[])),
        added AS (
            INSERT INTO emulator_vehicle_attributes (provider, vehicle_id, key, value)
            SELECT u.provider, u.id, x.k, x.val FROM updated u, unnest($14::text[], $15::text[]) AS x(k, val)
            WHERE $13
            ON CONFLICT (provider, vehicle_id, key) DO UPDATE SET value = EXCLUDED.value)
        SELECT version FROM updated
        """
    /// The vehicle's new version.
    typealias Row = Int64

    var provider: String
    var id: String
    var body: ByteBuffer
    var version: Int64
    var trips: String
    /// The indexed values of the new body.
    var row: VehicleRow
    /// Whether the attribute table is rewritten (when the attributes changed).
    var attributesChanged: Bool

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 15)
        bindings.append(provider)
        bindings.append(id)
        bindings.append(body)
        bindings.append(version)
        bindings.append(trips)
        bindings.append(row.state)
        bindings.append(row.category)
        bindings.append(row.capacity)
        bindings.append(row.tripTypes)
        bindings.append(row.seen)
        bindings.append(row.latitude)
        bindings.append(row.longitude)
        bindings.append(attributesChanged)
        bindings.append(Array(row.attributes.keys))
        bindings.append(Array(row.attributes.values))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
}

/// UpdateVehicle's write when only the body and the location changed (most updates), prepared: ``WriteVehicle``
/// without the attribute table's statements, which PostgreSQL would otherwise set up for every execution, and without
/// the columns the vehicle counts' trigger watches, so it does not fire.
struct WriteVehicleBody: PostgresPreparedStatement {
    static let name = "fleetauth_emulator_write_vehicle_body"
    static let sql = """
        UPDATE emulator_vehicles v SET body = $3, version = nextval('emulator_vehicle_versions'),
            seen = $6, lat = $7, lng = $8, location = point($7::float8, $8::float8)
        WHERE v.provider = $1 AND v.id = $2 AND v.version = $4
        AND (SELECT coalesce(string_agg(t.id || ':' || t.updated_at, ',' ORDER BY t.id), '')
             FROM emulator_trips t WHERE t.provider = v.provider AND t.vehicle_id = v.id AND t.active) = $5
        RETURNING v.version
        """
    /// The vehicle's new version.
    typealias Row = Int64

    var provider: String
    var id: String
    var body: ByteBuffer
    var version: Int64
    var trips: String
    /// The indexed values of the new body.
    var row: VehicleRow

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 8)
        bindings.append(provider)
        bindings.append(id)
        bindings.append(body)
        bindings.append(version)
        bindings.append(trips)
        bindings.append(row.seen)
        bindings.append(row.latitude)
        bindings.append(row.longitude)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
}

/// Several ``WriteVehicleBody`` in one statement: the writes of concurrent updates, batched (``GroupCommit``). Each
/// row is written only under its own conditions; the answer names each written row by its place in the batch
/// (from 1) with its new version. Rows are locked in the order given (the plan walks the arrays and looks each
/// vehicle up by its key), so the store sends them in key order. Two writes of one vehicle in a batch both expect the version they read, so at
/// most one is written, as if they had come one after the other. An absent time or place is sent as NaN (arrays
/// carry no NULL here; no stored value can be NaN: latitudes and longitudes are checked against their ranges).
struct WriteVehicleBodies: PostgresPreparedStatement {
    static let name = "fleetauth_emulator_write_vehicle_bodies"
    static let sql = """
        UPDATE emulator_vehicles v SET body = u.body, version = nextval('emulator_vehicle_versions'),
            seen = NULLIF(u.seen, 'NaN'), lat = NULLIF(u.lat, 'NaN'), lng = NULLIF(u.lng, 'NaN'),
            location = point(NULLIF(u.lat, 'NaN'), NULLIF(u.lng, 'NaN'))
        FROM unnest($1::text[], $2::text[], $3::bytea[], $4::int8[], $5::text[], $6::float8[], $7::float8[],
            $8::float8[]) WITH ORDINALITY AS u(provider, id, body, version, trips, seen, lat, lng, item)
        WHERE v.provider = u.provider AND v.id = u.id AND v.version = u.version
        AND (SELECT coalesce(string_agg(t.id || ':' || t.updated_at, ',' ORDER BY t.id), '')
             FROM emulator_trips t WHERE t.provider = v.provider AND t.vehicle_id = v.id AND t.active) = u.trips
        RETURNING u.item, v.version
        """
    /// A written row's place in the batch (from 1) and its new version.
    typealias Row = (Int64, Int64)

    var writes: [WriteVehicleBody]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 8)
        bindings.append(writes.map(\.provider))
        bindings.append(writes.map(\.id))
        bindings.append(writes.map(\.body))
        bindings.append(writes.map(\.version))
        bindings.append(writes.map(\.trips))
        bindings.append(writes.map { $0.row.seen ?? .nan })
        bindings.append(writes.map { $0.row.latitude ?? .nan })
        bindings.append(writes.map { $0.row.longitude ?? .nan })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
