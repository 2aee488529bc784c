import FleetAuthServerSupport
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
    /// from the stored messages.
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
            var tasks: [(String, String, ByteBuffer)] = []
            for try await row in try await connection.query(
                "SELECT provider, id, body FROM emulator_tasks",
                logger: logger
            ).decode((String, String, ByteBuffer).self) {
                tasks.append(row)
            }
            for (provider, id, body) in tasks {
                let task = try decode(body, as: FleetEngineDelivery.Task.self)
                try await writeTask(connection, logger: logger, StoredTask(id: id, task: task), provider: provider)
            }
            var vehicles: [(String, String, ByteBuffer)] = []
            for try await row in try await connection.query(
                "SELECT provider, id, body FROM emulator_delivery_vehicles",
                logger: logger
            ).decode((String, String, ByteBuffer).self) {
                vehicles.append(row)
            }
            for (provider, id, body) in vehicles {
                let vehicle = try decode(body, as: FleetEngineDelivery.DeliveryVehicle.self)
                try await writeDeliveryVehicle(connection, logger: logger, vehicle, provider: provider, id: id)
            }
        }
    )
}
