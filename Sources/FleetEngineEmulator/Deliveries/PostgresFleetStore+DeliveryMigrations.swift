import FleetAuthDatabase
import FleetEngineAPI
import Foundation
import NIOCore
import PostgresNIO

/// The Deliveries API's migration steps (scope `emulator`, after the vehicles' and trips').
extension PostgresFleetStore {
    /// Migration step 5: the Deliveries API's tables.
    static let deliveryTables = PostgresMigrations.Step(
        version: 5,
        name: "delivery vehicles and tasks",
        statements: [
            """
            CREATE TABLE emulator_delivery_vehicles (
                provider TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, body BYTEA NOT NULL,
                PRIMARY KEY (provider, id))
            """,
            """
            CREATE TABLE emulator_tasks (
                provider TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, vehicle_id TEXT COLLATE "C",
                open BOOLEAN NOT NULL, tracking_id TEXT COLLATE "C", body BYTEA NOT NULL, PRIMARY KEY (provider, id))
            """,
            "CREATE INDEX emulator_tasks_by_vehicle ON emulator_tasks (provider, vehicle_id, open)",
            "CREATE INDEX emulator_tasks_by_tracking_id ON emulator_tasks (provider, tracking_id)",
        ]
    )

    /// Migration step 6: the columns ListTasks' and ListDeliveryVehicles' filters read, and attribute tables, filled
    /// from the stored messages (the tasks' by step 7).
    static let deliveryColumns = PostgresMigrations.Step(
        version: 6,
        name: "indexed task and delivery vehicle columns, their attributes",
        statements: [
            """
            ALTER TABLE emulator_tasks
            ADD COLUMN state INTEGER NOT NULL DEFAULT 0, ADD COLUMN type INTEGER NOT NULL DEFAULT 0,
            ADD COLUMN outcome INTEGER NOT NULL DEFAULT 0, ADD COLUMN outcome_time DOUBLE PRECISION,
            ADD COLUMN lat DOUBLE PRECISION, ADD COLUMN lng DOUBLE PRECISION
            """,
            "CREATE INDEX emulator_tasks_by_state ON emulator_tasks (provider, state, id)",
            """
            CREATE TABLE emulator_task_attributes (
                provider TEXT COLLATE "C" NOT NULL, task_id TEXT COLLATE "C" NOT NULL,
                key TEXT COLLATE "C" NOT NULL, value TEXT COLLATE "C" NOT NULL,
                PRIMARY KEY (provider, task_id, key))
            """,
            "CREATE INDEX emulator_task_attributes_by_value ON emulator_task_attributes (provider, key, value, task_id)",
            "ALTER TABLE emulator_delivery_vehicles ADD COLUMN lat DOUBLE PRECISION, ADD COLUMN lng DOUBLE PRECISION",
            """
            CREATE TABLE emulator_delivery_vehicle_attributes (
                provider TEXT COLLATE "C" NOT NULL, vehicle_id TEXT COLLATE "C" NOT NULL,
                key TEXT COLLATE "C" NOT NULL, value TEXT COLLATE "C" NOT NULL,
                PRIMARY KEY (provider, vehicle_id, key))
            """,
            """
            CREATE INDEX emulator_delivery_vehicle_attributes_by_value
            ON emulator_delivery_vehicle_attributes (provider, key, value, vehicle_id)
            """,
        ],
        then: { connection, logger in
            // The tasks' columns are filled by step 7, which writes every task as it is written today.
            for (provider, id, body) in try await storedRows("emulator_delivery_vehicles", connection, logger: logger) {
                let vehicle = try decode(body, as: FleetEngineDelivery.DeliveryVehicle.self)
                for statement in try StoreSQL.postgres.update(vehicle, provider: provider, id: id) {
                    try await execute(statement, on: connection, logger: logger)
                }
            }
        }
    )

    /// Migration step 7: each task attribute row holds its task's state, type and outcome, in the index a count reads
    /// (ListTasks' `totalSize` of `state = OPEN AND attributes.zone = "north"`: one range of the index, not a probe of
    /// the tasks per match). Writes every task again, which also fills the columns of step 6.
    static let taskColumnsOnAttributes = PostgresMigrations.Step(
        version: 7,
        name: "task columns on their attribute rows",
        statements: [
            """
            ALTER TABLE emulator_task_attributes
            ADD COLUMN state INTEGER NOT NULL DEFAULT 0, ADD COLUMN type INTEGER NOT NULL DEFAULT 0,
            ADD COLUMN outcome INTEGER NOT NULL DEFAULT 0
            """,
            "DROP INDEX emulator_task_attributes_by_value",
            """
            CREATE INDEX emulator_task_attributes_by_value
            ON emulator_task_attributes (provider, key, value, state, type, outcome, task_id)
            """,
        ],
        then: { connection, logger in
            for (provider, id, body) in try await storedRows("emulator_tasks", connection, logger: logger) {
                let task = StoredTask(id: id, task: try decode(body, as: FleetEngineDelivery.Task.self))
                for statement in try StoreSQL.postgres.update(task, provider: provider) {
                    try await execute(statement, on: connection, logger: logger)
                }
            }
        }
    )

    /// Every row of `table` (provider, ID, stored message), read whole before a migration step writes them again.
    static func storedRows(
        _ table: String,
        _ connection: PostgresConnection,
        logger: Logger
    ) async throws -> [(String, String, ByteBuffer)] {
        var rows: [(String, String, ByteBuffer)] = []
        for try await row in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT provider, id, body FROM \(table)"),
            logger: logger
        ).decode((String, String, ByteBuffer).self) {
            rows.append(row)
        }
        return rows
    }

    /// Migration step 8: task counts by state, kept by a trigger as the vehicles' are (step 4), so that ListTasks'
    /// `totalSize` of every task or of one state is read, not counted.
    static let taskCounts = PostgresMigrations.Step(
        version: 8,
        name: "task counts by state",
        statements: countsByState(of: "emulator_tasks", in: "emulator_task_counts", function: "emulator_count_tasks")
    )
}
