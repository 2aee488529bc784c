import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import GRDB

/// ``DeliveryStore`` on the same SQLite database as the vehicles and trips.
extension SQLiteFleetStore: DeliveryStore {
    private var deliveryWriter: any DatabaseWriter { database.writer }

    /// The open tasks of a vehicle, and the tasks of a tracking ID, by their indexes named: without statistics,
    /// SQLite's planner prefers the primary key's `provider` prefix on this WITHOUT ROWID table — a scan of every task
    /// of the provider (measured: an UpdateDeliveryVehicle took 1.8 ms among 10,000 tasks, 0.3 ms among 100).
    package static let openTasksOfVehicleQuery =
        "SELECT id, body FROM tasks INDEXED BY tasks_by_vehicle WHERE provider = ? AND vehicle_id = ? AND open = 1"
    package static let openTaskCountOfVehicleQuery =
        "SELECT COUNT(*) FROM tasks INDEXED BY tasks_by_vehicle WHERE provider = ? AND vehicle_id = ? AND open = 1"
    package static let tasksOfTrackingIDQuery =
        "SELECT id, body FROM tasks INDEXED BY tasks_by_tracking_id WHERE provider = ? AND tracking_id = ? ORDER BY id"

    private static func storedTask(_ row: Row) throws -> StoredTask {
        StoredTask(id: row["id"], task: try decode(row["body"], as: FleetEngineDelivery.Task.self))
    }

    static func writeTask(_ db: Database, _ task: StoredTask, provider: String, insert: Bool) throws {
        let row = TaskRow(task.task)
        let sql =
            insert
            ? """
            INSERT INTO tasks (vehicle_id, open, tracking_id, state, type, outcome, outcome_time, lat, lng, body,
                provider, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
            : """
            UPDATE tasks SET vehicle_id = ?, open = ?, tracking_id = ?, state = ?, type = ?, outcome = ?,
                outcome_time = ?, lat = ?, lng = ?, body = ? WHERE provider = ? AND id = ?
            """
        try db.cachedStatement(sql: sql).execute(arguments: [
            task.vehicleID, task.isOpen, task.trackingID, row.state, row.type, row.outcome, row.outcomeTime,
            row.latitude, row.longitude, try encode(task.task), provider, task.id,
        ])
        try writeAttributes(
            db,
            row.attributes,
            table: "task_attributes",
            owner: "task_id",
            provider,
            task.id,
            insert,
            carrying: (table: "tasks", columns: TaskRow.carriedColumns)
        )
    }

    static func writeDeliveryVehicle(
        _ db: Database,
        _ vehicle: FleetEngineDelivery.DeliveryVehicle,
        provider: String,
        id: String,
        insert: Bool,
        replacing previous: FleetEngineDelivery.DeliveryVehicle? = nil
    ) throws {
        let row = DeliveryVehicleRow(vehicle)
        let sql =
            insert
            ? "INSERT INTO delivery_vehicles (lat, lng, body, provider, id) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
            : "UPDATE delivery_vehicles SET lat = ?, lng = ?, body = ? WHERE provider = ? AND id = ?"
        try db.cachedStatement(sql: sql).execute(arguments: [
            row.latitude, row.longitude, try encode(vehicle), provider, id,
        ])
        if insert, db.changesCount != 1 {
            throw StoreError.alreadyExists(
                "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) already exists."
            )
        }
        // Most updates are a new location: the attribute rows are rewritten only when the attributes changed.
        if let previous, DeliveryVehicleRow(previous).attributes == row.attributes { return }
        try writeAttributes(
            db,
            row.attributes,
            table: "delivery_vehicle_attributes",
            owner: "vehicle_id",
            provider,
            id,
            insert
        )
    }

    /// Replaces a row's attributes in its attribute table (`insert`: it has none yet). `carrying` names the row's
    /// table and the columns each attribute row copies from it (the row is written first).
    private static func writeAttributes(
        _ db: Database,
        _ attributes: [String: String],
        table: String,
        owner: String,
        _ provider: String,
        _ id: String,
        _ insert: Bool,
        carrying: (table: String, columns: [String])? = nil
    ) throws {
        if !insert {
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE provider = ? AND \(owner) = ?")
                .execute(arguments: [provider, id])
        }
        guard !attributes.isEmpty else { return }
        let statement =
            if let carrying {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO \(table) (provider, \(owner), key, value\(carrying.columns.map { ", \($0)" }.joined()))
                        SELECT o.provider, o.id, ?, ?\(carrying.columns.map { ", o.\($0)" }.joined())
                        FROM \(carrying.table) o WHERE o.provider = ? AND o.id = ?
                        """
                )
            } else {
                try db.cachedStatement(sql: "INSERT INTO \(table) (key, value, provider, \(owner)) VALUES (?, ?, ?, ?)")
            }
        for (key, value) in attributes { try statement.execute(arguments: [key, value, provider, id]) }
    }

    public func deliveryVehicle(provider: String, id: String) async throws -> FleetEngineDelivery.DeliveryVehicle? {
        let data = try await database.lookup { db in
            try Data.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM delivery_vehicles WHERE provider = ? AND id = ?"),
                arguments: [provider, id]
            )
        }
        return try data.map { try Self.decode($0, as: FleetEngineDelivery.DeliveryVehicle.self) }
    }

    public func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        async throws
    {
        try await database.write { db in
            try Self.writeDeliveryVehicle(db, vehicle, provider: provider, id: id, insert: true)
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
        try await database.write { db in
            guard
                let body = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT body FROM delivery_vehicles WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                )
            else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            var tasks: [String: FleetEngineDelivery.Task] = [:]
            for row in try Row.fetchAll(
                db.cachedStatement(sql: Self.openTasksOfVehicleQuery),
                arguments: [provider, id]
            ) {
                let task = try Self.storedTask(row)
                tasks[task.id] = task.task
            }
            let named = try db.cachedStatement(sql: "SELECT id, body FROM tasks WHERE provider = ? AND id = ?")
            for taskID in taskIDs where tasks[taskID] == nil {
                if let row = try Row.fetchOne(named, arguments: [provider, taskID]) {
                    tasks[taskID] = try Self.storedTask(row).task
                }
            }
            let current = try Self.decode(body, as: FleetEngineDelivery.DeliveryVehicle.self)
            let change = try transform(current, tasks)
            try Self.writeDeliveryVehicle(
                db,
                change.vehicle,
                provider: provider,
                id: id,
                insert: false,
                replacing: current
            )
            for (taskID, task) in change.tasks.sorted(by: { $0.key < $1.key }) {
                guard tasks[taskID] != nil else {
                    throw StoreError.notFound("Task providers/\(provider)/tasks/\(taskID) not found.")
                }
                try Self.writeTask(db, StoredTask(id: taskID, task: task), provider: provider, insert: false)
            }
            return change.vehicle
        }
    }

    public func deleteDeliveryVehicle(provider: String, id: String) async throws {
        try await database.write { db in
            let open =
                try Int.fetchOne(
                    db.cachedStatement(sql: Self.openTaskCountOfVehicleQuery),
                    arguments: [provider, id]
                ) ?? 0
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM delivery_vehicles WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                ) != nil
            else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            guard open == 0 else {
                throw StoreError.conflict(
                    "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) has \(open) open task(s) assigned; close them first."
                )
            }
            try db.cachedStatement(sql: "DELETE FROM delivery_vehicles WHERE provider = ? AND id = ?")
                .execute(arguments: [provider, id])
            try db.cachedStatement(sql: "DELETE FROM delivery_vehicle_attributes WHERE provider = ? AND vehicle_id = ?")
                .execute(arguments: [provider, id])
        }
    }

    public func deliveryVehicles(provider: String, afterID: String?, limit: Int) async throws
        -> [StoredDeliveryVehicle]
    {
        let rows = try await deliveryWriter.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT id, body FROM delivery_vehicles WHERE provider = ? AND id > ? ORDER BY id LIMIT ?"
                ),
                arguments: [provider, afterID ?? "", limit]
            ).map { (id: $0["id"] as String, body: $0["body"] as Data) }
        }
        return try rows.map {
            StoredDeliveryVehicle(
                id: $0.id,
                vehicle: try Self.decode($0.body, as: FleetEngineDelivery.DeliveryVehicle.self)
            )
        }
    }

    public func task(provider: String, id: String) async throws -> FleetEngineDelivery.Task? {
        let data = try await database.lookup { db in
            try Data.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM tasks WHERE provider = ? AND id = ?"),
                arguments: [provider, id]
            )
        }
        return try data.map { try Self.decode($0, as: FleetEngineDelivery.Task.self) }
    }

    public func insertTasks(_ tasks: [StoredTask], provider: String) async throws {
        try await database.write { db in
            let exists = try db.cachedStatement(sql: "SELECT 1 FROM tasks WHERE provider = ? AND id = ?")
            for task in tasks {
                if try Bool.fetchOne(exists, arguments: [provider, task.id]) != nil {
                    throw StoreError.alreadyExists("Task providers/\(provider)/tasks/\(task.id) already exists.")
                }
                try Self.writeTask(db, task, provider: provider, insert: true)
            }
        }
    }

    public func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) async throws -> FleetEngineDelivery.Task {
        try await database.write { db in
            guard
                let body = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT body FROM tasks WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                )
            else { throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.") }
            let updated = try transform(try Self.decode(body, as: FleetEngineDelivery.Task.self))
            try Self.writeTask(db, StoredTask(id: id, task: updated), provider: provider, insert: false)
            return updated
        }
    }

    public func deleteTask(provider: String, id: String) async throws {
        try await database.write { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT vehicle_id, open FROM tasks WHERE provider = ? AND id = ?"),
                    arguments: [provider, id]
                )
            else { throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.") }
            if let vehicleID = row["vehicle_id"] as String?, row["open"] as Bool {
                throw StoreError.conflict(
                    "Task providers/\(provider)/tasks/\(id) is OPEN and assigned to delivery vehicle \(vehicleID); remove it from the vehicle's stops first."
                )
            }
            try db.cachedStatement(sql: "DELETE FROM tasks WHERE provider = ? AND id = ?")
                .execute(arguments: [provider, id])
            try db.cachedStatement(sql: "DELETE FROM task_attributes WHERE provider = ? AND task_id = ?")
                .execute(arguments: [provider, id])
        }
    }

    public func tasks(provider: String, afterID: String?, limit: Int) async throws -> [StoredTask] {
        try await deliveryWriter.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT id, body FROM tasks WHERE provider = ? AND id > ? ORDER BY id LIMIT ?"
                ),
                arguments: [provider, afterID ?? "", limit]
            ).map(Self.storedTask)
        }
    }

    public func tasks(provider: String, trackingID: String) async throws -> [StoredTask] {
        try await deliveryWriter.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: Self.tasksOfTrackingIDQuery),
                arguments: [provider, trackingID]
            ).map(Self.storedTask)
        }
    }

    /// A page of the tasks `query` accepts (keyset: `id > afterID`) and their count, in one read transaction.
    public func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        async throws -> (tasks: [StoredTask], total: Int?)
    {
        let filter = { (purpose: FilterSQL.Purpose) in
            FilterSQL(
                query.filter,
                columns: TaskRow.columns,
                attributes: .init(table: "task_attributes", owner: "task_id", carried: TaskRow.carriedColumns),
                provider: provider,
                counts: .init(table: "task_counts", column: "state"),
                purpose: purpose,
                placeholder: { _ in "?" }
            )
        }
        let (rows, total) = try await Self.filteredPage(
            deliveryWriter,
            table: "tasks",
            provider: provider,
            filter: filter,
            after: afterID,
            limit: limit,
            counting: counting
        )
        return (
            try rows.map { StoredTask(id: $0.id, task: try Self.decode($0.body, as: FleetEngineDelivery.Task.self)) },
            total
        )
    }

    /// A page of the delivery vehicles `query` accepts and their count, as ``tasks(provider:matching:after:limit:counting:)``.
    public func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (vehicles: [StoredDeliveryVehicle], total: Int?) {
        let filter = { (purpose: FilterSQL.Purpose) in
            FilterSQL(
                query.filter,
                columns: [:],
                attributes: .init(table: "delivery_vehicle_attributes", owner: "vehicle_id"),
                provider: provider,
                area: query.area,
                purpose: purpose,
                placeholder: { _ in "?" }
            )
        }
        let (rows, total) = try await Self.filteredPage(
            deliveryWriter,
            table: "delivery_vehicles",
            provider: provider,
            filter: filter,
            after: afterID,
            limit: limit,
            counting: counting
        )
        return (
            try rows.map {
                StoredDeliveryVehicle(
                    id: $0.id,
                    vehicle: try Self.decode($0.body, as: FleetEngineDelivery.DeliveryVehicle.self)
                )
            },
            total
        )
    }

    private static func filteredPage(
        _ writer: any DatabaseWriter,
        table: String,
        provider: String,
        filter: (FilterSQL.Purpose) -> FilterSQL,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (rows: [(id: String, body: Data)], total: Int?) {
        let (count, page) = (filter(.count), filter(.page))
        let countArguments = StatementArguments([provider] + count.values.map(Self.databaseValue))
        let pageArguments = StatementArguments(
            [provider] + page.values.map(Self.databaseValue) + [afterID ?? "", max(limit, 0)]
        )
        return try await writer.read { db in
            let total =
                counting
                ? try Int.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT \(count.counted) FROM \(count.countedTable ?? table) t
                            WHERE t.provider = ? AND \(count.condition)
                            """
                    ),
                    arguments: countArguments
                ) : nil
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT t.id, t.body FROM \(table) t WHERE t.provider = ? AND \(page.condition) AND t.id > ?
                        ORDER BY t.id LIMIT ?
                        """
                ),
                arguments: pageArguments
            ).map { (id: $0["id"] as String, body: $0["body"] as Data) }
            return (rows, total)
        }
    }
}
