import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// The Deliveries API's tables: the logic of every ``DeliveryStore`` method, as plans in both stores' SQL.
extension StoreSQL {
    // MARK: Statements

    /// The vehicle's open tasks (`id`, `body`).
    func openTasks(provider: String, vehicleID: String) -> SQLStatement {
        """
        SELECT id, body FROM \(tasks)\(byVehicle) WHERE provider = \(provider) AND vehicle_id = \(vehicleID) \
        AND open = TRUE
        """
    }

    /// The number (`n`) of the vehicle's open tasks.
    func openTaskCount(provider: String, vehicleID: String) -> SQLStatement {
        """
        SELECT COUNT(*) AS n FROM \(tasks)\(byVehicle) WHERE provider = \(provider) AND vehicle_id = \(vehicleID) \
        AND open = TRUE
        """
    }

    /// The tasks (`id`, `body`) of a tracking ID, in ID order.
    func tasks(provider: String, trackingID: String) -> SQLStatement {
        """
        SELECT id, body FROM \(tasks)\(byTrackingID) WHERE provider = \(provider) AND tracking_id = \(trackingID) \
        ORDER BY id
        """
    }

    /// The SQL of the lookups by vehicle and by tracking ID, whose query plans a test reads.
    package var indexedLookups: [String] {
        [
            activeTripCount(provider: "", vehicleID: ""), openTasks(provider: "", vehicleID: ""),
            openTaskCount(provider: "", vehicleID: ""), tasks(provider: "", trackingID: ""),
        ].map(\.sql)
    }

    /// Writes the attribute rows of `owners` (each with the values of `carried` columns it holds), first deleting
    /// the rows of the owner when `replacing`.
    private func attributes(
        _ table: SQLFragment,
        owner: String,
        provider: String,
        _ owners: [(id: String, attributes: [String: String], carried: [SQLValue])],
        carried: [String] = [],
        replacing: Bool
    ) -> [SQLStatement] {
        let rows = owners.flatMap { owner in
            owner.attributes.map { [.text(provider), .text(owner.id), .text($0), .text($1)] + owner.carried }
        }
        let deletes =
            replacing ? owners.map { delete(from: table, owner: SQLFragment(owner), provider, $0.id) } : []
        return deletes + Self.insert(into: table, ["provider", owner, "key", "value"] + carried, rows)
    }

    // MARK: Tasks

    /// A task's columns, and its values for them.
    private static let taskColumns = [
        "provider", "id", "vehicle_id", "open", "tracking_id", "state", "type", "outcome", "outcome_time", "lat", "lng",
        "body",
    ]

    private static func taskValues(_ task: StoredTask, _ row: TaskRow, provider: String) throws -> [SQLValue] {
        [
            .text(provider), .text(task.id), .init(task.vehicleID), .bool(task.isOpen), .init(task.trackingID),
            .integer(row.state), .integer(row.type), .integer(row.outcome), .init(row.outcomeTime),
            .init(row.latitude), .init(row.longitude), .blob(try task.task.serializedData()),
        ]
    }

    private func taskAttributes(_ tasks: [(StoredTask, TaskRow)], provider: String, replacing: Bool) -> [SQLStatement] {
        attributes(
            taskAttributes,
            owner: "task_id",
            provider: provider,
            tasks.map { ($0.0.id, $0.1.attributes, $0.1.carriedValues) },
            carried: TaskRow.carriedColumns,
            replacing: replacing
        )
    }

    /// Rewrites a stored task and its attribute rows.
    func update(_ task: StoredTask, provider: String) throws -> [SQLStatement] {
        let row = TaskRow(task.task)
        let update: SQLStatement = """
            UPDATE \(tasks) SET vehicle_id = \(task.vehicleID), open = \(task.isOpen), tracking_id = \(task.trackingID), \
            state = \(row.state), type = \(row.type), outcome = \(row.outcome), outcome_time = \(row.outcomeTime), \
            lat = \(row.latitude), lng = \(row.longitude), body = \(try task.task.serializedData()) \
            WHERE provider = \(provider) AND id = \(task.id)
            """
        return [update] + taskAttributes([(task, row)], provider: provider, replacing: true)
    }

    func task(provider: String, id: String) -> SQLPlan<FleetEngineDelivery.Task?> {
        .read(.lookup, [row("body", of: tasks, provider, id)]) {
            try $0[0].first?.decode("body", as: FleetEngineDelivery.Task.self)
        }
    }

    func insertTasks(_ stored: [StoredTask], provider: String) -> SQLPlan<Void> {
        let taken = Self.chunks(stored.map { SQLValue.text($0.id) }).map { chunk -> SQLStatement in
            "SELECT id FROM \(tasks) WHERE provider = \(provider) AND id IN (\(list: chunk))"
        }
        return SQLPlan(.write, reads: taken) { rows in
            if let id = try rows.joined().map({ try $0.decode("id", as: String.self) }).min() {
                throw StoreError.alreadyExists("Task providers/\(provider)/tasks/\(id) already exists.")
            }
            let written = stored.map { ($0, TaskRow($0.task)) }
            // A taken ID is checked first, then by the insert itself: another instance may insert one in between.
            let inserts = Self.insert(
                into: tasks,
                Self.taskColumns,
                try written.map { try Self.taskValues($0.0, $0.1, provider: provider) },
                suffix: " ON CONFLICT DO NOTHING RETURNING 1",
                expecting: .alreadyExists("A task of the batch was created by another request at the same time.")
            )
            return .done(writes: inserts + taskAttributes(written, provider: provider, replacing: false), result: ())
        }
    }

    func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) -> SQLPlan<FleetEngineDelivery.Task> {
        SQLPlan(.write, reads: [row("body", of: tasks, provider, id, locking: locking)]) { rows in
            guard let found = rows[0].first else {
                throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.")
            }
            let updated = try transform(try found.decode("body", as: FleetEngineDelivery.Task.self))
            return .done(writes: try update(StoredTask(id: id, task: updated), provider: provider), result: updated)
        }
    }

    func deleteTask(provider: String, id: String) -> SQLPlan<Void> {
        SQLPlan(.write, reads: [row("vehicle_id, open", of: tasks, provider, id, locking: locking)]) { rows in
            guard let found = rows[0].first else {
                throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.")
            }
            if let vehicleID = try found.decode("vehicle_id", as: String?.self), try found.decode("open", as: Bool.self)
            {
                throw StoreError.conflict(
                    "Task providers/\(provider)/tasks/\(id) is OPEN and assigned to delivery vehicle \(vehicleID); remove it from the vehicle's stops first."
                )
            }
            let writes = [
                delete(from: tasks, provider, id), delete(from: taskAttributes, owner: "task_id", provider, id),
            ]
            return .done(writes: writes, result: ())
        }
    }

    func tasks(provider: String, afterID: String?, limit: Int) -> SQLPlan<[StoredTask]> {
        .read(.list, [page(of: tasks, provider, after: afterID, limit: limit)]) { try Self.storedTasks($0[0]) }
    }

    func tasks(provider: String, trackingID: String) -> SQLPlan<[StoredTask]> {
        .read(.list, [tasks(provider: provider, trackingID: trackingID)]) { try Self.storedTasks($0[0]) }
    }

    func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        -> SQLPlan<(tasks: [StoredTask], total: Int?)>
    {
        filtered(tasks, provider: provider, after: afterID, limit: limit, counting: counting) { purpose in
            FilterSQL(
                query.filter,
                columns: TaskRow.columns,
                attributes: .init(table: taskAttributes, owner: "task_id", carried: TaskRow.carriedColumns),
                provider: provider,
                counts: .init(table: taskCounts, column: "state"),
                purpose: purpose
            )
        } answer: {
            (try Self.storedTasks($0), $1)
        }
    }

    private static func storedTasks(_ rows: [SQLRow]) throws -> [StoredTask] {
        try rows.map {
            StoredTask(id: try $0.decode("id"), task: try $0.decode("body", as: FleetEngineDelivery.Task.self))
        }
    }

    // MARK: Delivery vehicles

    /// Rewrites a stored delivery vehicle, and its attribute rows unless they are those of `previous`.
    func update(
        _ vehicle: FleetEngineDelivery.DeliveryVehicle,
        provider: String,
        id: String,
        replacing previous: FleetEngineDelivery.DeliveryVehicle? = nil
    ) throws -> [SQLStatement] {
        let row = DeliveryVehicleRow(vehicle)
        let update: SQLStatement = """
            UPDATE \(deliveryVehicles) SET lat = \(row.latitude), lng = \(row.longitude), \
            body = \(try vehicle.serializedData()) WHERE provider = \(provider) AND id = \(id)
            """
        // Most updates are a new location: the attribute rows are rewritten only when the attributes changed.
        if let previous, DeliveryVehicleRow(previous).attributes == row.attributes { return [update] }
        return [update]
            + attributes(
                deliveryVehicleAttributes,
                owner: "vehicle_id",
                provider: provider,
                [(id, row.attributes, [])],
                replacing: true
            )
    }

    func deliveryVehicle(provider: String, id: String) -> SQLPlan<FleetEngineDelivery.DeliveryVehicle?> {
        .read(.lookup, [row("body", of: deliveryVehicles, provider, id)]) {
            try $0[0].first?.decode("body", as: FleetEngineDelivery.DeliveryVehicle.self)
        }
    }

    func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        -> SQLPlan<Void>
    {
        SQLPlan(.write, reads: []) { _ in
            let row = DeliveryVehicleRow(vehicle)
            let insert: SQLStatement = """
                INSERT INTO \(deliveryVehicles) (provider, id, lat, lng, body)
                VALUES (\(provider), \(id), \(row.latitude), \(row.longitude), \(try vehicle.serializedData()))
                ON CONFLICT DO NOTHING RETURNING 1
                """
            let taken = StoreError.alreadyExists(
                "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) already exists."
            )
            let attributeRows = attributes(
                deliveryVehicleAttributes,
                owner: "vehicle_id",
                provider: provider,
                [(id, row.attributes, [])],
                replacing: false
            )
            return .done(writes: [insert.expecting(1, otherwise: taken)] + attributeRows, result: ())
        }
    }

    func updateDeliveryVehicle(
        provider: String,
        id: String,
        naming taskIDs: Set<String>,
        _ transform:
            @escaping @Sendable (FleetEngineDelivery.DeliveryVehicle, [String: FleetEngineDelivery.Task])
            throws -> DeliveryVehicleChange
    ) -> SQLPlan<FleetEngineDelivery.DeliveryVehicle> {
        let named = taskIDs.sorted().map(SQLValue.text)
        // PostgreSQL locks the vehicle's open tasks and the named ones in one statement, in ID order, so that two
        // vehicles' updates naming the same tasks cannot deadlock; SQLite reads each kind by its index.
        let tasksRead: [SQLStatement] =
            if locking.sql.isEmpty {
                [openTasks(provider: provider, vehicleID: id)]
                    + (named.isEmpty
                        ? []
                        : ["SELECT id, body FROM \(tasks) WHERE provider = \(provider) AND id IN (\(list: named))"])
            } else {
                [
                    """
                    SELECT id, body FROM \(tasks) WHERE provider = \(provider) AND ((vehicle_id = \(id) AND open = TRUE)\
                    \(named.isEmpty ? ")" : " OR id IN (\(list: named)))" as SQLStatement) ORDER BY id\(locking)
                    """
                ]
            }
        let reads = [row("body", of: deliveryVehicles, provider, id, locking: locking)] + tasksRead
        return SQLPlan(.write, reads: reads) { rows in
            guard let found = rows[0].first else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            var tasks: [String: FleetEngineDelivery.Task] = [:]
            for task in try rows.dropFirst().flatMap(Self.storedTasks) { tasks[task.id] = task.task }
            let current = try found.decode("body", as: FleetEngineDelivery.DeliveryVehicle.self)
            let change = try transform(current, tasks)
            var writes = try update(change.vehicle, provider: provider, id: id, replacing: current)
            for (taskID, task) in change.tasks.sorted(by: { $0.key < $1.key }) {
                guard tasks[taskID] != nil else {
                    throw StoreError.notFound("Task providers/\(provider)/tasks/\(taskID) not found.")
                }
                writes += try update(StoredTask(id: taskID, task: task), provider: provider)
            }
            return .done(writes: writes, result: change.vehicle)
        }
    }

    func deleteDeliveryVehicle(provider: String, id: String) -> SQLPlan<Void> {
        let reads = [
            exists(in: deliveryVehicles, provider, id, locking: locking),
            openTaskCount(provider: provider, vehicleID: id),
        ]
        return SQLPlan(.write, reads: reads) { rows in
            guard !rows[0].isEmpty else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            let open = try rows[1].first?.decode("n", as: Int64.self) ?? 0
            guard open == 0 else {
                throw StoreError.conflict(
                    "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) has \(open) open task(s) assigned; close them first."
                )
            }
            let writes = [
                delete(from: deliveryVehicles, provider, id),
                delete(from: deliveryVehicleAttributes, owner: "vehicle_id", provider, id),
            ]
            return .done(writes: writes, result: ())
        }
    }

    func deliveryVehicles(provider: String, afterID: String?, limit: Int) -> SQLPlan<[StoredDeliveryVehicle]> {
        .read(.list, [page(of: deliveryVehicles, provider, after: afterID, limit: limit)]) {
            try Self.storedVehicles($0[0])
        }
    }

    func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) -> SQLPlan<(vehicles: [StoredDeliveryVehicle], total: Int?)> {
        filtered(deliveryVehicles, provider: provider, after: afterID, limit: limit, counting: counting) { purpose in
            FilterSQL(
                query.filter,
                columns: [:],
                attributes: .init(table: deliveryVehicleAttributes, owner: "vehicle_id"),
                provider: provider,
                area: query.area,
                purpose: purpose
            )
        } answer: {
            (try Self.storedVehicles($0), $1)
        }
    }

    private static func storedVehicles(_ rows: [SQLRow]) throws -> [StoredDeliveryVehicle] {
        try rows.map {
            StoredDeliveryVehicle(
                id: try $0.decode("id"),
                vehicle: try $0.decode("body", as: FleetEngineDelivery.DeliveryVehicle.self)
            )
        }
    }

    // MARK: Lists by filter

    /// A page of the rows of `table` the filter accepts (keyset: `id > afterID`), and when `counting` their count,
    /// in one read.
    private func filtered<Answer: Sendable>(
        _ table: SQLFragment,
        provider: String,
        after afterID: String?,
        limit: Int,
        counting: Bool,
        filter: (FilterSQL.Purpose) -> FilterSQL,
        answer: @escaping @Sendable ([SQLRow], Int?) throws -> Answer
    ) -> SQLPlan<Answer> {
        var reads: [SQLStatement] = [
            """
            SELECT t.id, t.body FROM \(table) t WHERE t.provider = \(provider) AND \(filter(.page).condition) \
            AND t.id > \(afterID ?? "") ORDER BY t.id LIMIT \(max(limit, 0))
            """
        ]
        if counting {
            let count = filter(.count)
            reads.append(
                """
                SELECT \(count.counted) AS n FROM \(count.countedTable ?? table) t WHERE t.provider = \(provider) \
                AND \(count.condition)
                """
            )
        }
        return .read(.list, reads) { rows in
            try answer(rows[0], counting ? try rows[1].first?.decode("n", as: Int.self) ?? 0 : nil)
        }
    }
}
