import FleetEngineAPI
import GRDB

/// The Deliveries API's schema in SQLite: migrations v5–v7 (``SQLiteFleetStore``'s migrator runs them in order).
extension SQLiteFleetStore {
    /// Migration v5: the Deliveries API's tables.
    static func createDeliveryTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE delivery_vehicles (
                    provider TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL,
                    PRIMARY KEY (provider, id)) WITHOUT ROWID;
                CREATE TABLE tasks (
                    provider TEXT NOT NULL, id TEXT NOT NULL, vehicle_id TEXT, open INTEGER NOT NULL,
                    tracking_id TEXT, body BLOB NOT NULL, PRIMARY KEY (provider, id)) WITHOUT ROWID;
                CREATE INDEX tasks_by_vehicle ON tasks (provider, vehicle_id, open);
                CREATE INDEX tasks_by_tracking_id ON tasks (provider, tracking_id);
                """
        )
    }

    /// Migration v6: the columns ListTasks' and ListDeliveryVehicles' filters read, and attribute tables, filled
    /// from the stored messages (the tasks' by migration v7).
    static func indexDeliveryColumns(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE tasks ADD COLUMN state INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE tasks ADD COLUMN type INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE tasks ADD COLUMN outcome INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE tasks ADD COLUMN outcome_time REAL;
                ALTER TABLE tasks ADD COLUMN lat REAL;
                ALTER TABLE tasks ADD COLUMN lng REAL;
                CREATE INDEX tasks_by_state ON tasks (provider, state);
                CREATE TABLE task_attributes (
                    provider TEXT NOT NULL, task_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                    PRIMARY KEY (provider, task_id, key)) WITHOUT ROWID;
                CREATE INDEX task_attributes_by_value ON task_attributes (provider, key, value, task_id);
                ALTER TABLE delivery_vehicles ADD COLUMN lat REAL;
                ALTER TABLE delivery_vehicles ADD COLUMN lng REAL;
                CREATE TABLE delivery_vehicle_attributes (
                    provider TEXT NOT NULL, vehicle_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                    PRIMARY KEY (provider, vehicle_id, key)) WITHOUT ROWID;
                CREATE INDEX delivery_vehicle_attributes_by_value
                    ON delivery_vehicle_attributes (provider, key, value, vehicle_id);
                """
        )
        // The tasks' columns are filled by migration v7, which writes every task as it is written today.
        for row in try Row.fetchAll(db, sql: "SELECT provider, id, body FROM delivery_vehicles") {
            let vehicle = try decode(row["body"], as: FleetEngineDelivery.DeliveryVehicle.self)
            for statement in try StoreSQL.sqlite.update(vehicle, provider: row["provider"], id: row["id"]) {
                _ = try execute(statement, in: db)
            }
        }
    }

    /// Migration v7: each task attribute row holds its task's state, type and outcome, in the index a count reads
    /// (ListTasks' `totalSize` of `state = OPEN AND attributes.zone = "north"`: one range of the index, not a probe of
    /// the tasks per match). Writes every task again, which also fills the columns of migration v6.
    static func carryTaskColumns(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE task_attributes ADD COLUMN state INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE task_attributes ADD COLUMN type INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE task_attributes ADD COLUMN outcome INTEGER NOT NULL DEFAULT 0;
                DROP INDEX task_attributes_by_value;
                CREATE INDEX task_attributes_by_value
                    ON task_attributes (provider, key, value, state, type, outcome, task_id);
                """
        )
        for row in try Row.fetchAll(db, sql: "SELECT provider, id, body FROM tasks") {
            let task = StoredTask(id: row["id"], task: try decode(row["body"], as: FleetEngineDelivery.Task.self))
            for statement in try StoreSQL.sqlite.update(task, provider: row["provider"]) {
                _ = try execute(statement, in: db)
            }
        }
    }
}
