import FleetAuthServerSupport
public import FleetEngineAPI
import Foundation
import NIOCore
import PostgresNIO

/// ``DeliveryStore`` on the same PostgreSQL database as the vehicles and trips: each change one transaction, every
/// read-modify-write holding the rows' locks (`SELECT … FOR UPDATE`), so concurrent changes from any number of
/// instances apply one after the other.
extension PostgresFleetStore: DeliveryStore {
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

    private static func storedTask(id: String, body: ByteBuffer) throws -> StoredTask {
        StoredTask(id: id, task: try decode(body, as: FleetEngineDelivery.Task.self))
    }

    public func deliveryVehicle(provider: String, id: String) async throws -> FleetEngineDelivery.DeliveryVehicle? {
        let rows = try await database.query(
            "SELECT body FROM emulator_delivery_vehicles WHERE provider = \(provider) AND id = \(id)"
        )
        return try rows.first.map {
            try Self.decode(try $0.decode(ByteBuffer.self), as: FleetEngineDelivery.DeliveryVehicle.self)
        }
    }

    public func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        async throws
    {
        let body = try Self.encode(vehicle)
        let rows = try await database.query(
            """
            INSERT INTO emulator_delivery_vehicles (provider, id, body) VALUES (\(provider), \(id), \(body))
            ON CONFLICT DO NOTHING RETURNING 1
            """
        )
        guard !rows.isEmpty else {
            throw StoreError.alreadyExists(
                "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) already exists."
            )
        }
    }

    public func updateDeliveryVehicle(
        provider: String,
        id: String,
        naming taskIDs: Set<String>,
        _ transform:
            @escaping @Sendable (FleetEngineDelivery.DeliveryVehicle, [String: FleetEngineDelivery.Task])
            throws -> DeliveryVehicleChange
    ) async throws -> FleetEngineDelivery.DeliveryVehicle {
        try await database.transaction { connection in
            let logger = database.logger
            var body: ByteBuffer?
            for try await row in try await connection.query(
                """
                SELECT body FROM emulator_delivery_vehicles WHERE provider = \(provider) AND id = \(id) FOR UPDATE
                """,
                logger: logger
            ).decode(ByteBuffer.self) {
                body = row
            }
            guard let body else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            // The vehicle's open tasks and the named ones, locked in ID order (so two vehicles' updates naming the
            // same tasks cannot deadlock).
            var tasks: [String: FleetEngineDelivery.Task] = [:]
            for try await (taskID, taskBody) in try await connection.query(
                """
                SELECT id, body FROM emulator_tasks
                WHERE provider = \(provider) AND ((vehicle_id = \(id) AND open) OR id = ANY(\(Array(taskIDs))::text[]))
                ORDER BY id FOR UPDATE
                """,
                logger: logger
            ).decode((String, ByteBuffer).self) {
                tasks[taskID] = try Self.storedTask(id: taskID, body: taskBody).task
            }
            let change = try transform(try Self.decode(body, as: FleetEngineDelivery.DeliveryVehicle.self), tasks)
            let newBody = try Self.encode(change.vehicle)
            try await connection.query(
                "UPDATE emulator_delivery_vehicles SET body = \(newBody) WHERE provider = \(provider) AND id = \(id)",
                logger: logger
            )
            for (taskID, task) in change.tasks.sorted(by: { $0.key < $1.key }) {
                guard tasks[taskID] != nil else {
                    throw StoreError.notFound("Task providers/\(provider)/tasks/\(taskID) not found.")
                }
                try await Self.writeTask(
                    connection,
                    logger: logger,
                    StoredTask(id: taskID, task: task),
                    provider: provider
                )
            }
            return change.vehicle
        }
    }

    private static func writeTask(
        _ connection: PostgresConnection,
        logger: Logger,
        _ task: StoredTask,
        provider: String
    )
        async throws
    {
        let body = try encode(task.task)
        try await connection.query(
            """
            UPDATE emulator_tasks SET vehicle_id = \(task.vehicleID), open = \(task.isOpen),
                tracking_id = \(task.trackingID), body = \(body)
            WHERE provider = \(provider) AND id = \(task.id)
            """,
            logger: logger
        )
    }

    public func deleteDeliveryVehicle(provider: String, id: String) async throws {
        try await database.transaction { connection in
            let logger = database.logger
            var exists = false
            for try await _ in try await connection.query(
                "SELECT 1 FROM emulator_delivery_vehicles WHERE provider = \(provider) AND id = \(id) FOR UPDATE",
                logger: logger
            ) {
                exists = true
            }
            guard exists else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            var open = 0
            for try await count in try await connection.query(
                "SELECT count(*) FROM emulator_tasks WHERE provider = \(provider) AND vehicle_id = \(id) AND open",
                logger: logger
            ).decode(Int.self) {
                open = count
            }
            guard open == 0 else {
                throw StoreError.conflict(
                    "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) has \(open) open task(s) assigned; close them first."
                )
            }
            try await connection.query(
                "DELETE FROM emulator_delivery_vehicles WHERE provider = \(provider) AND id = \(id)",
                logger: logger
            )
        }
    }

    public func deliveryVehicles(provider: String, afterID: String?, limit: Int) async throws
        -> [StoredDeliveryVehicle]
    {
        let rows = try await database.query(
            """
            SELECT id, body FROM emulator_delivery_vehicles WHERE provider = \(provider) AND id > \(afterID ?? "")
            ORDER BY id LIMIT \(limit)
            """
        )
        return try rows.map { row in
            let (id, body) = try row.decode((String, ByteBuffer).self)
            return StoredDeliveryVehicle(
                id: id,
                vehicle: try Self.decode(body, as: FleetEngineDelivery.DeliveryVehicle.self)
            )
        }
    }

    public func task(provider: String, id: String) async throws -> FleetEngineDelivery.Task? {
        let rows = try await database.query(
            "SELECT body FROM emulator_tasks WHERE provider = \(provider) AND id = \(id)"
        )
        return try rows.first.map { try Self.decode(try $0.decode(ByteBuffer.self), as: FleetEngineDelivery.Task.self) }
    }

    public func insertTasks(_ tasks: [StoredTask], provider: String) async throws {
        let ids = tasks.map(\.id)
        // Arrays of non-optional text: an empty string stands for NULL.
        let vehicles = tasks.map { $0.vehicleID ?? "" }
        let open = tasks.map(\.isOpen)
        let tracking = tasks.map { $0.trackingID ?? "" }
        let bodies = try tasks.map { try Self.encode($0.task) }
        // One transaction: a taken ID (checked first, then by the insert itself) makes it insert nothing.
        try await database.transaction { connection in
            let logger = database.logger
            var taken: String?
            for try await id in try await connection.query(
                """
                SELECT id FROM emulator_tasks WHERE provider = \(provider) AND id = ANY(\(ids)::text[])
                ORDER BY id LIMIT 1
                """,
                logger: logger
            ).decode(String.self) {
                taken = id
            }
            if let taken {
                throw StoreError.alreadyExists("Task providers/\(provider)/tasks/\(taken) already exists.")
            }
            var inserted = 0
            for try await _ in try await connection.query(
                """
                INSERT INTO emulator_tasks (provider, id, vehicle_id, open, tracking_id, body)
                SELECT \(provider), x.id, NULLIF(x.vehicle_id, ''), x.open, NULLIF(x.tracking_id, ''), x.body
                FROM unnest(\(ids)::text[], \(vehicles)::text[], \(open)::bool[], \(tracking)::text[], \(bodies)::bytea[])
                    AS x(id, vehicle_id, open, tracking_id, body)
                ON CONFLICT DO NOTHING RETURNING 1
                """,
                logger: logger
            ) {
                inserted += 1
            }
            guard inserted == tasks.count else {
                // Another instance inserted one of the IDs in between: undo the others.
                throw StoreError.alreadyExists("A task of the batch was created by another request at the same time.")
            }
        }
    }

    public func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) async throws -> FleetEngineDelivery.Task {
        try await database.transaction { connection in
            let logger = database.logger
            var body: ByteBuffer?
            for try await row in try await connection.query(
                "SELECT body FROM emulator_tasks WHERE provider = \(provider) AND id = \(id) FOR UPDATE",
                logger: logger
            ).decode(ByteBuffer.self) {
                body = row
            }
            guard let body else { throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.") }
            let updated = try transform(try Self.decode(body, as: FleetEngineDelivery.Task.self))
            try await Self.writeTask(connection, logger: logger, StoredTask(id: id, task: updated), provider: provider)
            return updated
        }
    }

    public func deleteTask(provider: String, id: String) async throws {
        try await database.transaction { connection in
            let logger = database.logger
            var found: (vehicleID: String?, open: Bool)?
            for try await (vehicleID, open) in try await connection.query(
                "SELECT vehicle_id, open FROM emulator_tasks WHERE provider = \(provider) AND id = \(id) FOR UPDATE",
                logger: logger
            ).decode((String?, Bool).self) {
                found = (vehicleID, open)
            }
            guard let found else { throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.") }
            if let vehicleID = found.vehicleID, found.open {
                throw StoreError.conflict(
                    "Task providers/\(provider)/tasks/\(id) is OPEN and assigned to delivery vehicle \(vehicleID); remove it from the vehicle's stops first."
                )
            }
            try await connection.query(
                "DELETE FROM emulator_tasks WHERE provider = \(provider) AND id = \(id)",
                logger: logger
            )
        }
    }

    public func tasks(provider: String, afterID: String?, limit: Int) async throws -> [StoredTask] {
        let rows = try await database.query(
            """
            SELECT id, body FROM emulator_tasks WHERE provider = \(provider) AND id > \(afterID ?? "")
            ORDER BY id LIMIT \(limit)
            """
        )
        return try rows.map { row in
            let (id, body) = try row.decode((String, ByteBuffer).self)
            return try Self.storedTask(id: id, body: body)
        }
    }

    public func tasks(provider: String, trackingID: String) async throws -> [StoredTask] {
        let rows = try await database.query(
            """
            SELECT id, body FROM emulator_tasks WHERE provider = \(provider) AND tracking_id = \(trackingID)
            ORDER BY id
            """
        )
        return try rows.map { row in
            let (id, body) = try row.decode((String, ByteBuffer).self)
            return try Self.storedTask(id: id, body: body)
        }
    }
}
