import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import NIOCore
import PostgresNIO

/// ``DeliveryStore`` on the same PostgreSQL database as the vehicles and trips: each change one transaction, every
/// read-modify-write holding the rows' locks (`SELECT … FOR UPDATE`), so concurrent changes from any number of
/// instances apply one after the other.
extension PostgresFleetStore: DeliveryStore {
    static func storedTask(id: String, body: ByteBuffer) throws -> StoredTask {
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
        let row = DeliveryVehicleRow(vehicle)
        try await database.transaction { connection in
            let logger = self.database.logger
            var inserted = false
            for try await _ in try await connection.query(
                """
                INSERT INTO emulator_delivery_vehicles (provider, id, lat, lng, body)
                VALUES (\(provider), \(id), \(row.latitude), \(row.longitude), \(body))
                ON CONFLICT DO NOTHING RETURNING 1
                """,
                logger: logger
            ) {
                inserted = true
            }
            guard inserted else {
                throw StoreError.alreadyExists(
                    "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) already exists."
                )
            }
            try await Self.writeAttributes(
                connection,
                logger: logger,
                [row.attributes],
                table: "emulator_delivery_vehicle_attributes",
                owner: "vehicle_id",
                provider: provider,
                ids: [id],
                replacing: false
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
            let logger = self.database.logger
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
            let current = try Self.decode(body, as: FleetEngineDelivery.DeliveryVehicle.self)
            let change = try transform(current, tasks)
            try await Self.writeDeliveryVehicle(
                connection,
                logger: logger,
                change.vehicle,
                provider: provider,
                id: id,
                replacing: current
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

    static func writeTask(
        _ connection: PostgresConnection,
        logger: Logger,
        _ task: StoredTask,
        provider: String
    )
        async throws
    {
        let body = try encode(task.task)
        let row = TaskRow(task.task)
        try await connection.query(
            """
            UPDATE emulator_tasks SET vehicle_id = \(task.vehicleID), open = \(task.isOpen),
                tracking_id = \(task.trackingID), state = \(Int32(row.state)), type = \(Int32(row.type)),
                outcome = \(Int32(row.outcome)), outcome_time = \(row.outcomeTime), lat = \(row.latitude),
                lng = \(row.longitude), body = \(body)
            WHERE provider = \(provider) AND id = \(task.id)
            """,
            logger: logger
        )
        try await writeAttributes(
            connection,
            logger: logger,
            [row.attributes],
            table: "emulator_task_attributes",
            owner: "task_id",
            provider: provider,
            ids: [task.id],
            replacing: true,
            carrying: (table: "emulator_tasks", columns: TaskRow.carriedColumns)
        )
    }

    static func writeDeliveryVehicle(
        _ connection: PostgresConnection,
        logger: Logger,
        _ vehicle: FleetEngineDelivery.DeliveryVehicle,
        provider: String,
        id: String,
        replacing previous: FleetEngineDelivery.DeliveryVehicle? = nil
    ) async throws {
        let body = try encode(vehicle)
        let row = DeliveryVehicleRow(vehicle)
        try await connection.query(
            """
            UPDATE emulator_delivery_vehicles SET lat = \(row.latitude), lng = \(row.longitude), body = \(body)
            WHERE provider = \(provider) AND id = \(id)
            """,
            logger: logger
        )
        // Most updates are a new location: the attribute rows are rewritten only when the attributes changed.
        if let previous, DeliveryVehicleRow(previous).attributes == row.attributes { return }
        try await writeAttributes(
            connection,
            logger: logger,
            [row.attributes],
            table: "emulator_delivery_vehicle_attributes",
            owner: "vehicle_id",
            provider: provider,
            ids: [id],
            replacing: true
        )
    }

    /// Writes rows' attributes (one dictionary for each of `ids`, in order), first deleting
    /// what they had when `replacing`.
    private static func writeAttributes(
        _ connection: PostgresConnection,
        logger: Logger,
        _ attributes: [[String: String]],
        table: String,
        owner: String,
        provider: String,
        ids: [String],
        replacing: Bool,
        carrying: (table: String, columns: [String])? = nil
    ) async throws {
        if replacing {
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "DELETE FROM \(table) WHERE provider = $1 AND \(owner) = ANY($2::text[])",
                    binds: bindings(provider, ids)
                ),
                logger: logger
            )
        }
        var owners: [String] = []
        var keys: [String] = []
        var values: [String] = []
        for (id, dictionary) in zip(ids, attributes) {
            for (key, value) in dictionary {
                owners.append(id)
                keys.append(key)
                values.append(value)
            }
        }
        guard !owners.isEmpty else { return }
        // Carried columns are copied from the rows, which are written before their attributes.
        let carried = (
            names: carrying?.columns.map { ", \($0)" }.joined() ?? "",
            values: carrying?.columns.map { ", o.\($0)" }.joined() ?? "",
            join: carrying.map { " JOIN \($0.table) o ON o.provider = $1 AND o.id = x.owner" } ?? ""
        )
        var binds = PostgresBindings(capacity: 4)
        binds.append(provider)
        binds.append(owners)
        binds.append(keys)
        binds.append(values)
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(table) (provider, \(owner), key, value\(carried.names))
                    SELECT $1, x.owner, x.key, x.value\(carried.values)
                    FROM unnest($2::text[], $3::text[], $4::text[]) AS x(owner, key, value)\(carried.join)
                    """,
                binds: binds
            ),
            logger: logger
        )
    }

    private static func bindings(_ provider: String, _ ids: [String]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 2)
        binds.append(provider)
        binds.append(ids)
        return binds
    }

    public func deleteDeliveryVehicle(provider: String, id: String) async throws {
        try await database.transaction { connection in
            let logger = self.database.logger
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
            try await connection.query(
                """
                DELETE FROM emulator_delivery_vehicle_attributes WHERE provider = \(provider) AND vehicle_id = \(id)
                """,
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
        let rows = tasks.map { TaskRow($0.task) }
        let states = rows.map { Int32($0.state) }
        let types = rows.map { Int32($0.type) }
        let outcomes = rows.map { Int32($0.outcome) }
        // Arrays of non-optional numbers: NaN stands for NULL (no stored value is NaN).
        let outcomeTimes = rows.map { $0.outcomeTime ?? .nan }
        let latitudes = rows.map { $0.latitude ?? .nan }
        let longitudes = rows.map { $0.longitude ?? .nan }
        // One transaction: a taken ID (checked first, then by the insert itself) makes it insert nothing.
        try await database.transaction { connection in
            let logger = self.database.logger
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
                INSERT INTO emulator_tasks (provider, id, vehicle_id, open, tracking_id, state, type, outcome,
                    outcome_time, lat, lng, body)
                SELECT \(provider), x.id, NULLIF(x.vehicle_id, ''), x.open, NULLIF(x.tracking_id, ''), x.state, x.type,
                    x.outcome, NULLIF(x.outcome_time, 'NaN'), NULLIF(x.lat, 'NaN'), NULLIF(x.lng, 'NaN'), x.body
                FROM unnest(\(ids)::text[], \(vehicles)::text[], \(open)::bool[], \(tracking)::text[], \(states)::int4[],
                    \(types)::int4[], \(outcomes)::int4[], \(outcomeTimes)::float8[], \(latitudes)::float8[],
                    \(longitudes)::float8[], \(bodies)::bytea[])
                    AS x(id, vehicle_id, open, tracking_id, state, type, outcome, outcome_time, lat, lng, body)
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
            try await Self.writeAttributes(
                connection,
                logger: logger,
                rows.map(\.attributes),
                table: "emulator_task_attributes",
                owner: "task_id",
                provider: provider,
                ids: ids,
                replacing: false,
                carrying: (table: "emulator_tasks", columns: TaskRow.carriedColumns)
            )
        }
    }

    public func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) async throws -> FleetEngineDelivery.Task {
        try await database.transaction { connection in
            let logger = self.database.logger
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
            let logger = self.database.logger
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
            try await connection.query(
                "DELETE FROM emulator_task_attributes WHERE provider = \(provider) AND task_id = \(id)",
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
