import FleetAuthDatabase
import FleetEngineAPI
import NIOCore
import PostgresNIO
import SwiftProtobuf

/// The PostgreSQL store's schema, as versioned migration steps (scope `emulator`), each applied once, in order.
extension PostgresFleetStore {
    static let migrations = PostgresMigrations(
        scope: "emulator",
        steps: [
            .init(
                version: 1,
                name: "vehicles and trips",
                statements: [
                    """
                    CREATE TABLE emulator_vehicles (
                        provider TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, body BYTEA NOT NULL,
                        PRIMARY KEY (provider, id))
                    """,
                    """
                    CREATE TABLE emulator_trips (
                        provider TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL,
                        vehicle_id TEXT COLLATE "C", active BOOLEAN NOT NULL,
                        updated_at BIGINT NOT NULL, body BYTEA NOT NULL, PRIMARY KEY (provider, id))
                    """,
                    "CREATE INDEX emulator_trips_by_vehicle ON emulator_trips (provider, vehicle_id, active)",
                ]
            ),
            .init(
                version: 2,
                name: "vehicle versions, for updates without a transaction",
                statements: [
                    "CREATE SEQUENCE emulator_vehicle_versions",
                    """
                    ALTER TABLE emulator_vehicles
                    ADD COLUMN version BIGINT NOT NULL DEFAULT nextval('emulator_vehicle_versions')
                    """,
                ]
            ),
            .init(
                version: 3,
                name: "indexed vehicle columns, locations in a GiST index, attributes",
                statements: [
                    """
                    ALTER TABLE emulator_vehicles
                    ADD COLUMN state INTEGER NOT NULL DEFAULT 0, ADD COLUMN category INTEGER NOT NULL DEFAULT 0,
                    ADD COLUMN capacity INTEGER NOT NULL DEFAULT 0, ADD COLUMN trip_types BIGINT NOT NULL DEFAULT 0,
                    ADD COLUMN seen DOUBLE PRECISION, ADD COLUMN lat DOUBLE PRECISION, ADD COLUMN lng DOUBLE PRECISION,
                    ADD COLUMN location POINT
                    """,
                    """
                    CREATE TABLE emulator_vehicle_attributes (
                        provider TEXT COLLATE "C" NOT NULL, vehicle_id TEXT COLLATE "C" NOT NULL,
                        key TEXT COLLATE "C" NOT NULL, value TEXT COLLATE "C" NOT NULL,
                        PRIMARY KEY (provider, vehicle_id, key))
                    """,
                    """
                    CREATE INDEX emulator_vehicle_attributes_by_value
                    ON emulator_vehicle_attributes (provider, key, value, vehicle_id)
                    """,
                    "CREATE INDEX emulator_vehicles_by_location ON emulator_vehicles USING gist (location)",
                    "CREATE INDEX emulator_vehicles_by_state ON emulator_vehicles (provider, state, id)",
                ],
                then: { connection, logger in
                    for (provider, id, body) in try await PostgresFleetStore.storedRows(
                        "emulator_vehicles",
                        connection,
                        logger: logger
                    ) {
                        let row = VehicleRow(try PostgresFleetStore.decode(body, as: FleetEngineV1.Vehicle.self))
                        try await connection.query(
                            """
                            UPDATE emulator_vehicles SET state = \(row.state), category = \(row.category),
                                capacity = \(row.capacity), trip_types = \(row.tripTypes), seen = \(row.seen),
                                lat = \(row.latitude), lng = \(row.longitude),
                                location = point(\(row.latitude)::float8, \(row.longitude)::float8)
                            WHERE provider = \(provider) AND id = \(id)
                            """,
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
                }
            ),
            .init(
                version: 4,
                name: "vehicle counts by state",
                statements: countsByState(
                    of: "emulator_vehicles",
                    in: "emulator_vehicle_counts",
                    function: "emulator_count_vehicles"
                )
            ),
            deliveryTables,
            deliveryColumns,
            taskColumnsOnAttributes,
            taskCounts,
            requestLogTable,
        ]
    )

    /// A table `counts` of `table`'s rows per provider and state, filled now and kept by a trigger: a listing's total is
    /// read, not counted. A location update changes no state and fires none.
    static func countsByState(of table: String, in counts: String, function: String) -> [String] {
        [
            """
            CREATE TABLE \(counts) (
                provider TEXT COLLATE "C" NOT NULL, state INTEGER NOT NULL, n BIGINT NOT NULL,
                PRIMARY KEY (provider, state))
            """,
            "INSERT INTO \(counts) (provider, state, n) SELECT provider, state, count(*) FROM \(table) GROUP BY provider, state",
            // One statement per change, each touching the counts in the same order (by state), so that two
            // opposite state changes cannot deadlock.
            """
            CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO \(counts) AS c (provider, state, n) VALUES (NEW.provider, NEW.state, 1)
                    ON CONFLICT (provider, state) DO UPDATE SET n = c.n + 1;
                ELSIF TG_OP = 'DELETE' THEN
                    UPDATE \(counts) SET n = n - 1 WHERE provider = OLD.provider AND state = OLD.state;
                ELSE
                    INSERT INTO \(counts) AS c (provider, state, n)
                    SELECT x.provider, x.state, x.d FROM (VALUES (OLD.provider, OLD.state, -1), (NEW.provider, NEW.state, 1))
                        AS x(provider, state, d)
                    ORDER BY x.provider, x.state
                    ON CONFLICT (provider, state) DO UPDATE SET n = c.n + EXCLUDED.n;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER \(counts)_insert_delete AFTER INSERT OR DELETE ON \(table)
            FOR EACH ROW EXECUTE FUNCTION \(function)()
            """,
            """
            CREATE TRIGGER \(counts)_update AFTER UPDATE OF provider, state ON \(table)
            FOR EACH ROW WHEN (OLD.state <> NEW.state OR OLD.provider <> NEW.provider)
            EXECUTE FUNCTION \(function)()
            """,
        ]
    }
}
