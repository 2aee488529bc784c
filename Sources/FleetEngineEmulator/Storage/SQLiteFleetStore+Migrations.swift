import FleetEngineAPI
import Foundation
import GRDB
import SwiftProtobuf

/// The SQLite store's schema, as versioned migrations: each runs once, in order, in a transaction.
extension SQLiteFleetStore {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: vehicles and trips") { db in
            try db.execute(
                sql: """
                    CREATE TABLE vehicles (
                        provider TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                        PRIMARY KEY (provider, id)) WITHOUT ROWID;
                    CREATE TABLE trips (
                        provider TEXT NOT NULL, id TEXT NOT NULL, vehicle_id TEXT, active INTEGER NOT NULL,
                        body TEXT NOT NULL, PRIMARY KEY (provider, id)) WITHOUT ROWID;
                    CREATE INDEX trips_by_vehicle ON trips (provider, vehicle_id, active);
                    """
            )
        }
        migrator.registerMigration("v2: protobuf bodies, trip update times") { db in
            // v1 kept each message as its REST JSON; from v2 on it is the protobuf binary form.
            try db.execute(sql: "ALTER TABLE trips ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0")
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            for row in try Row.fetchAll(db, sql: "SELECT provider, id, body FROM vehicles") {
                let vehicle = try FleetEngineV1.Vehicle(jsonString: row["body"] as String, options: options)
                try db.execute(
                    sql: "UPDATE vehicles SET body = ? WHERE provider = ? AND id = ?",
                    arguments: [try Self.encode(vehicle), row["provider"] as String, row["id"] as String]
                )
            }
            for row in try Row.fetchAll(db, sql: "SELECT provider, id, body FROM trips") {
                let trip = try FleetEngineV1.Trip(jsonString: row["body"] as String, options: options)
                try db.execute(
                    sql: "UPDATE trips SET body = ? WHERE provider = ? AND id = ?",
                    arguments: [try Self.encode(trip), row["provider"] as String, row["id"] as String]
                )
            }
        }
        migrator.registerMigration("v3: indexed vehicle columns, locations in an R*Tree, attributes") { db in
            // The vehicle's searchable values beside its body, so queries read only the vehicles they match.
            try db.execute(
                sql: """
                    CREATE TABLE vehicles_v3 (
                        seq INTEGER PRIMARY KEY, provider TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL,
                        state INTEGER NOT NULL, category INTEGER NOT NULL, capacity INTEGER NOT NULL,
                        trip_types INTEGER NOT NULL, seen REAL, lat REAL, lng REAL, UNIQUE (provider, id));
                    CREATE VIRTUAL TABLE vehicle_locations USING rtree(seq, min_lat, max_lat, min_lng, max_lng);
                    CREATE TABLE vehicle_attributes (
                        provider TEXT NOT NULL, vehicle_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                        PRIMARY KEY (provider, vehicle_id, key)) WITHOUT ROWID;
                    CREATE INDEX vehicle_attributes_by_value ON vehicle_attributes (provider, key, value, vehicle_id);
                    """
            )
            for row in try Row.fetchAll(db, sql: "SELECT provider, id, body FROM vehicles ORDER BY provider, id") {
                let vehicle = try Self.decode(row["body"] as Data, as: FleetEngineV1.Vehicle.self)
                try Self.insert(
                    db,
                    vehicle,
                    body: row["body"],
                    provider: row["provider"],
                    id: row["id"],
                    table: "vehicles_v3"
                )
            }
            try db.execute(
                sql: """
                    DROP TABLE vehicles;
                    ALTER TABLE vehicles_v3 RENAME TO vehicles;
                    CREATE INDEX vehicles_by_state ON vehicles (provider, state, id);
                    """
            )
        }
        migrator.registerMigration("v4: vehicle counts by state") { db in
            try db.execute(sql: Self.countsByState(of: "vehicles", in: "vehicle_counts"))
        }
        migrator.registerMigration("v5: delivery vehicles and tasks") { db in try Self.createDeliveryTables(db) }
        migrator.registerMigration("v6: indexed task and delivery vehicle columns, their attributes") { db in
            try Self.indexDeliveryColumns(db)
        }
        migrator.registerMigration("v7: task columns on their attribute rows") { db in try Self.carryTaskColumns(db) }
        migrator.registerMigration("v8: task counts by state") { db in
            try db.execute(sql: Self.countsByState(of: "tasks", in: "task_counts"))
        }
        return migrator
    }

    /// A table `counts` of `table`'s rows per provider and state, filled now and kept by triggers: a listing's total
    /// is read, not counted. A location update changes no state and fires none.
    static func countsByState(of table: String, in counts: String) -> String {
        """
        CREATE TABLE \(counts) (
            provider TEXT NOT NULL, state INTEGER NOT NULL, n INTEGER NOT NULL,
            PRIMARY KEY (provider, state)) WITHOUT ROWID;
        INSERT INTO \(counts) (provider, state, n) SELECT provider, state, count(*) FROM \(table) GROUP BY provider, state;
        CREATE TRIGGER \(counts)_insert AFTER INSERT ON \(table) BEGIN
            INSERT INTO \(counts) (provider, state, n) VALUES (new.provider, new.state, 1)
                ON CONFLICT (provider, state) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER \(counts)_delete AFTER DELETE ON \(table) BEGIN
            UPDATE \(counts) SET n = n - 1 WHERE provider = old.provider AND state = old.state;
        END;
        CREATE TRIGGER \(counts)_update AFTER UPDATE OF provider, state ON \(table)
        WHEN old.state <> new.state OR old.provider <> new.provider BEGIN
            UPDATE \(counts) SET n = n - 1 WHERE provider = old.provider AND state = old.state;
            INSERT INTO \(counts) (provider, state, n) VALUES (new.provider, new.state, 1)
                ON CONFLICT (provider, state) DO UPDATE SET n = n + 1;
        END;
        """
    }
}
