import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// A ``DeliveryStore`` kept in SQL tables: both of the project's stores. Every Deliveries method is written once,
/// here, as a ``DeliveryPlan`` of statements in the SQL both databases run (``DeliverySQL``); a store supplies only
/// its dialect and how it runs a plan in one transaction. (SQLite's transactions are synchronous closures and
/// PostgreSQL's are async, which is why a method is a plan of statements rather than code that calls the database.)
public protocol SQLDeliveryStore: DeliveryStore {
    /// The store's dialect: its table names, locks and index hints.
    static var deliverySQL: DeliverySQL { get }
    /// Runs `plan`: its reads, its decision and its writes in one transaction when it writes, its reads alone in
    /// one read when it does not.
    func run<Result: Sendable>(_ plan: DeliveryPlan<Result>) async throws -> Result
}

/// A value bound to a statement or read from a row, in either store.
enum SQLValue: Sendable, Hashable {
    case null
    case text(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case blob(Data)

    init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }
    init(_ number: Double?) { self = number.map(SQLValue.real) ?? .null }

    var text: String? {
        guard case .text(let text) = self else { return nil }
        return text
    }

    /// A number, or a boolean as SQLite keeps it (1 or 0).
    var integer: Int64? {
        switch self {
        case .integer(let number): number
        case .bool(let flag): flag ? 1 : 0
        default: nil
        }
    }

    func decode<M: SwiftProtobuf.Message>(as type: M.Type) throws -> M {
        guard case .blob(let data) = self else {
            throw StoreError.corrupted("A stored \(M.protoMessageName) is not a byte string.")
        }
        do {
            return try M(serializedBytes: data)
        } catch {
            throw StoreError.corrupted("A stored \(M.protoMessageName) cannot be read back: \(error)")
        }
    }
}

typealias SQLRow = [SQLValue]

/// One statement, with a `?` for each of its values (PostgreSQL's store numbers them).
struct SQLStatement: Sendable {
    var sql: String
    var values: [SQLValue]
    /// For a write that returns a row for each row it wrote: how many it must write, and the error if it does not.
    var expected: (rows: Int, otherwise: StoreError)?

    init(_ sql: String, _ values: [SQLValue], expecting expected: (rows: Int, otherwise: StoreError)? = nil) {
        self.sql = sql
        self.values = values
        self.expected = expected
    }

    func check(rows: Int) throws {
        if let expected, expected.rows != rows { throw expected.otherwise }
    }
}

/// One ``DeliveryStore`` method as a store runs it: its reads, then a decision on their rows that names what to
/// write (in order) and the answer. A plan that writes runs in one transaction, in which PostgreSQL's reads lock
/// the rows they return; a decision's error is thrown with nothing written.
public struct DeliveryPlan<Result: Sendable>: Sendable {
    /// Where the reads of a plan that does not write go: a lookup by key, or a longer read (a list).
    enum Access: Sendable { case lookup, list, write }

    let access: Access
    let reads: [SQLStatement]
    let decide: @Sendable ([[SQLRow]]) throws -> (writes: [SQLStatement], result: Result)

    /// Runs the plan on a database that runs one statement at a time (`execute` runs one and returns its rows).
    func run(_ execute: (SQLStatement) throws -> [SQLRow]) throws -> Result {
        let (writes, result) = try decide(try reads.map(execute))
        for write in writes { _ = try execute(write) }
        return result
    }

    /// ``run(_:)`` for a database whose statements are async.
    func run(_ execute: (SQLStatement) async throws -> [SQLRow]) async throws -> Result {
        var rows: [[SQLRow]] = []
        for read in reads { rows.append(try await execute(read)) }
        let (writes, result) = try decide(rows)
        for write in writes { _ = try await execute(write) }
        return result
    }

    static func read(
        _ access: Access,
        _ reads: [SQLStatement],
        _ answer: @escaping @Sendable ([[SQLRow]]) throws -> Result
    )
        -> Self
    {
        Self(access: access, reads: reads) { ([], try answer($0)) }
    }
}

/// The Deliveries tables' statements in one store's dialect, and the logic of every ``DeliveryStore`` method
/// between them. Both dialects run the same SQL, but for table names, row locks and index hints.
public struct DeliverySQL: Sendable {
    let vehicles: String
    let vehicleAttributes: String
    let tasks: String
    let taskAttributes: String
    let taskCounts: String
    /// Ends a read whose rows the plan may write: PostgreSQL locks them against the other instances on the same
    /// database; SQLite's one writer needs no lock.
    let locking: String
    /// SQLite's index hints. Without statistics its planner prefers the primary key's `provider` prefix on these
    /// WITHOUT ROWID tables, a scan of every task of the provider (measured: an UpdateDeliveryVehicle took 1.8 ms
    /// among 10,000 tasks, 0.3 ms among 100), so the lookups by vehicle and by tracking ID name their index.
    let byVehicle: String
    let byTrackingID: String

    /// The SQLite store's tables.
    package static let sqlite = DeliverySQL(prefix: "", locking: "", hints: true)
    /// The PostgreSQL store's tables, prefixed because the emulator may share its database.
    package static let postgres = DeliverySQL(prefix: "emulator_", locking: " FOR UPDATE", hints: false)

    private init(prefix: String, locking: String, hints: Bool) {
        vehicles = prefix + "delivery_vehicles"
        vehicleAttributes = prefix + "delivery_vehicle_attributes"
        tasks = prefix + "tasks"
        taskAttributes = prefix + "task_attributes"
        taskCounts = prefix + "task_counts"
        self.locking = locking
        byVehicle = hints ? " INDEXED BY tasks_by_vehicle" : ""
        byTrackingID = hints ? " INDEXED BY tasks_by_tracking_id" : ""
    }

    // MARK: Statements

    package var openTasksOfVehicle: String {
        "SELECT id, body FROM \(tasks)\(byVehicle) WHERE provider = ? AND vehicle_id = ? AND open = TRUE"
    }
    package var openTaskCountOfVehicle: String {
        "SELECT COUNT(*) FROM \(tasks)\(byVehicle) WHERE provider = ? AND vehicle_id = ? AND open = TRUE"
    }
    package var tasksOfTrackingID: String {
        "SELECT id, body FROM \(tasks)\(byTrackingID) WHERE provider = ? AND tracking_id = ? ORDER BY id"
    }

    private func row(_ columns: String, of table: String, _ provider: String, _ id: String, locking: Bool = false)
        -> SQLStatement
    {
        SQLStatement(
            "SELECT \(columns) FROM \(table) WHERE provider = ? AND id = ?\(locking ? self.locking : "")",
            [.text(provider), .text(id)]
        )
    }

    private func page(of table: String, _ provider: String, after afterID: String?, limit: Int) -> SQLStatement {
        SQLStatement(
            "SELECT id, body FROM \(table) WHERE provider = ? AND id > ? ORDER BY id LIMIT ?",
            [.text(provider), .text(afterID ?? ""), .integer(Int64(max(limit, 0)))]
        )
    }

    private func delete(from table: String, owner: String = "id", _ provider: String, _ id: String) -> SQLStatement {
        SQLStatement("DELETE FROM \(table) WHERE provider = ? AND \(owner) = ?", [.text(provider), .text(id)])
    }

    /// Inserts `rows` into `columns`, a hundred rows a statement; `suffix` ends each statement.
    private static func insert(
        into table: String,
        _ columns: [String],
        _ rows: [SQLRow],
        suffix: String = "",
        expecting otherwise: StoreError? = nil
    ) -> [SQLStatement] {
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        return stride(from: 0, to: rows.count, by: 100).map { start in
            let chunk = rows[start..<min(start + 100, rows.count)]
            return SQLStatement(
                """
                INSERT INTO \(table) (\(columns.joined(separator: ", ")))
                VALUES \(Array(repeating: tuple, count: chunk.count).joined(separator: ", "))\(suffix)
                """,
                chunk.flatMap { $0 },
                expecting: otherwise.map { (chunk.count, $0) }
            )
        }
    }

    /// Writes the attribute rows of `owners` (each with the values of `carried` columns it holds), first deleting
    /// the rows of the owner when `replacing`.
    private static func attributes(
        _ table: String,
        owner: String,
        provider: String,
        _ owners: [(id: String, attributes: [String: String], carried: SQLRow)],
        carried: [String] = [],
        replacing: Bool
    ) -> [SQLStatement] {
        let rows = owners.flatMap { owner in
            owner.attributes.map { key, value in
                [.text(provider), .text(owner.id), .text(key), .text(value)] + owner.carried
            }
        }
        return
            (replacing
            ? owners.map {
                SQLStatement(
                    "DELETE FROM \(table) WHERE provider = ? AND \(owner) = ?",
                    [.text(provider), .text($0.id)]
                )
            } : [])
            + insert(into: table, ["provider", owner, "key", "value"] + carried, rows)
    }

    // MARK: Tasks

    /// A task's columns, and its values for them.
    private static let taskColumns = [
        "provider", "id", "vehicle_id", "open", "tracking_id", "state", "type", "outcome", "outcome_time", "lat", "lng",
        "body",
    ]

    private static func taskValues(_ task: StoredTask, _ row: TaskRow, provider: String) throws -> SQLRow {
        [
            .text(provider), .text(task.id), .init(task.vehicleID), .bool(task.isOpen), .init(task.trackingID),
            .integer(row.state), .integer(row.type), .integer(row.outcome), .init(row.outcomeTime),
            .init(row.latitude), .init(row.longitude), .blob(try task.task.serializedData()),
        ]
    }

    private func taskAttributes(_ tasks: [(StoredTask, TaskRow)], provider: String, replacing: Bool) -> [SQLStatement] {
        Self.attributes(
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
        let values = try Self.taskValues(task, row, provider: provider)
        return [
            SQLStatement(
                "UPDATE \(tasks) SET \(Self.taskColumns.dropFirst(2).map { "\($0) = ?" }.joined(separator: ", "))"
                    + " WHERE provider = ? AND id = ?",
                Array(values.dropFirst(2)) + [.text(provider), .text(task.id)]
            )
        ] + taskAttributes([(task, row)], provider: provider, replacing: true)
    }

    func task(provider: String, id: String) -> DeliveryPlan<FleetEngineDelivery.Task?> {
        .read(.lookup, [row("body", of: tasks, provider, id)]) {
            try $0[0].first.map { try $0[0].decode(as: FleetEngineDelivery.Task.self) }
        }
    }

    func insertTasks(_ stored: [StoredTask], provider: String) -> DeliveryPlan<Void> {
        let ids = stored.map { SQLValue.text($0.id) }
        let taken = stride(from: 0, to: ids.count, by: 100).map { start in
            let chunk = ids[start..<min(start + 100, ids.count)]
            return SQLStatement(
                "SELECT id FROM \(tasks) WHERE provider = ? AND id IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))",
                [.text(provider)] + chunk
            )
        }
        return DeliveryPlan(access: .write, reads: taken) { rows in
            if let id = rows.joined().compactMap({ $0[0].text }).min() {
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
            return (inserts + taskAttributes(written, provider: provider, replacing: false), ())
        }
    }

    func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) -> DeliveryPlan<FleetEngineDelivery.Task> {
        DeliveryPlan(access: .write, reads: [row("body", of: tasks, provider, id, locking: true)]) { rows in
            guard let body = rows[0].first?[0] else {
                throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.")
            }
            let updated = try transform(try body.decode(as: FleetEngineDelivery.Task.self))
            return (try update(StoredTask(id: id, task: updated), provider: provider), updated)
        }
    }

    func deleteTask(provider: String, id: String) -> DeliveryPlan<Void> {
        DeliveryPlan(access: .write, reads: [row("vehicle_id, open", of: tasks, provider, id, locking: true)]) { rows in
            guard let found = rows[0].first else {
                throw StoreError.notFound("Task providers/\(provider)/tasks/\(id) not found.")
            }
            if let vehicleID = found[0].text, found[1].integer == 1 {
                throw StoreError.conflict(
                    "Task providers/\(provider)/tasks/\(id) is OPEN and assigned to delivery vehicle \(vehicleID); remove it from the vehicle's stops first."
                )
            }
            return (
                [delete(from: tasks, provider, id), delete(from: taskAttributes, owner: "task_id", provider, id)], ()
            )
        }
    }

    func tasks(provider: String, afterID: String?, limit: Int) -> DeliveryPlan<[StoredTask]> {
        .read(.list, [page(of: tasks, provider, after: afterID, limit: limit)]) { try Self.storedTasks($0[0]) }
    }

    func tasks(provider: String, trackingID: String) -> DeliveryPlan<[StoredTask]> {
        .read(.list, [SQLStatement(tasksOfTrackingID, [.text(provider), .text(trackingID)])]) {
            try Self.storedTasks($0[0])
        }
    }

    func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        -> DeliveryPlan<(tasks: [StoredTask], total: Int?)>
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
        try rows.map { StoredTask(id: $0[0].text ?? "", task: try $0[1].decode(as: FleetEngineDelivery.Task.self)) }
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
        let update = SQLStatement(
            "UPDATE \(vehicles) SET lat = ?, lng = ?, body = ? WHERE provider = ? AND id = ?",
            [
                .init(row.latitude), .init(row.longitude), .blob(try vehicle.serializedData()), .text(provider),
                .text(id),
            ]
        )
        // Most updates are a new location: the attribute rows are rewritten only when the attributes changed.
        if let previous, DeliveryVehicleRow(previous).attributes == row.attributes { return [update] }
        return [update]
            + Self.attributes(
                vehicleAttributes,
                owner: "vehicle_id",
                provider: provider,
                [(id, row.attributes, [])],
                replacing: true
            )
    }

    func deliveryVehicle(provider: String, id: String) -> DeliveryPlan<FleetEngineDelivery.DeliveryVehicle?> {
        .read(.lookup, [row("body", of: vehicles, provider, id)]) {
            try $0[0].first.map { try $0[0].decode(as: FleetEngineDelivery.DeliveryVehicle.self) }
        }
    }

    func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        -> DeliveryPlan<Void>
    {
        DeliveryPlan(access: .write, reads: []) { _ in
            let row = DeliveryVehicleRow(vehicle)
            let insert = Self.insert(
                into: vehicles,
                ["provider", "id", "lat", "lng", "body"],
                [
                    [
                        .text(provider), .text(id), .init(row.latitude), .init(row.longitude),
                        .blob(try vehicle.serializedData()),
                    ]
                ],
                suffix: " ON CONFLICT DO NOTHING RETURNING 1",
                expecting: .alreadyExists(
                    "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) already exists."
                )
            )
            let attributes = Self.attributes(
                vehicleAttributes,
                owner: "vehicle_id",
                provider: provider,
                [(id, row.attributes, [])],
                replacing: false
            )
            return (insert + attributes, ())
        }
    }

    func updateDeliveryVehicle(
        provider: String,
        id: String,
        naming taskIDs: Set<String>,
        _ transform:
            @escaping @Sendable (FleetEngineDelivery.DeliveryVehicle, [String: FleetEngineDelivery.Task])
            throws -> DeliveryVehicleChange
    ) -> DeliveryPlan<FleetEngineDelivery.DeliveryVehicle> {
        let named = taskIDs.sorted().map(SQLValue.text)
        let list = named.map { _ in "?" }.joined(separator: ", ")
        let key = [SQLValue.text(provider), .text(id)]
        // PostgreSQL locks the vehicle's open tasks and the named ones in one statement, in ID order, so that two
        // vehicles' updates naming the same tasks cannot deadlock; SQLite reads each kind by its index.
        let tasksRead =
            if locking.isEmpty {
                [SQLStatement(openTasksOfVehicle, key)]
                    + (named.isEmpty
                        ? []
                        : [
                            SQLStatement(
                                "SELECT id, body FROM \(tasks) WHERE provider = ? AND id IN (\(list))",
                                key.prefix(1) + named
                            )
                        ])
            } else {
                [
                    SQLStatement(
                        "SELECT id, body FROM \(tasks) WHERE provider = ? AND ((vehicle_id = ? AND open = TRUE)"
                            + (named.isEmpty ? ")" : " OR id IN (\(list)))") + " ORDER BY id" + locking,
                        key + named
                    )
                ]
            }
        let reads = [row("body", of: vehicles, provider, id, locking: true)] + tasksRead
        return DeliveryPlan(access: .write, reads: reads) { rows in
            guard let body = rows[0].first?[0] else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            var tasks: [String: FleetEngineDelivery.Task] = [:]
            for task in try rows.dropFirst().flatMap(Self.storedTasks) { tasks[task.id] = task.task }
            let current = try body.decode(as: FleetEngineDelivery.DeliveryVehicle.self)
            let change = try transform(current, tasks)
            var writes = try update(change.vehicle, provider: provider, id: id, replacing: current)
            for (taskID, task) in change.tasks.sorted(by: { $0.key < $1.key }) {
                guard tasks[taskID] != nil else {
                    throw StoreError.notFound("Task providers/\(provider)/tasks/\(taskID) not found.")
                }
                writes += try update(StoredTask(id: taskID, task: task), provider: provider)
            }
            return (writes, change.vehicle)
        }
    }

    func deleteDeliveryVehicle(provider: String, id: String) -> DeliveryPlan<Void> {
        let reads = [
            row("1", of: vehicles, provider, id, locking: true),
            SQLStatement(openTaskCountOfVehicle, [.text(provider), .text(id)]),
        ]
        return DeliveryPlan(access: .write, reads: reads) { rows in
            guard !rows[0].isEmpty else {
                throw StoreError.notFound("Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) not found.")
            }
            let open = rows[1].first?[0].integer ?? 0
            guard open == 0 else {
                throw StoreError.conflict(
                    "Delivery vehicle providers/\(provider)/deliveryVehicles/\(id) has \(open) open task(s) assigned; close them first."
                )
            }
            return (
                [
                    delete(from: vehicles, provider, id),
                    delete(from: vehicleAttributes, owner: "vehicle_id", provider, id),
                ],
                ()
            )
        }
    }

    func deliveryVehicles(provider: String, afterID: String?, limit: Int) -> DeliveryPlan<[StoredDeliveryVehicle]> {
        .read(.list, [page(of: vehicles, provider, after: afterID, limit: limit)]) { try Self.storedVehicles($0[0]) }
    }

    func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) -> DeliveryPlan<(vehicles: [StoredDeliveryVehicle], total: Int?)> {
        filtered(vehicles, provider: provider, after: afterID, limit: limit, counting: counting) { purpose in
            FilterSQL(
                query.filter,
                columns: [:],
                attributes: .init(table: vehicleAttributes, owner: "vehicle_id"),
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
                id: $0[0].text ?? "",
                vehicle: try $0[1].decode(as: FleetEngineDelivery.DeliveryVehicle.self)
            )
        }
    }

    // MARK: Lists by filter

    /// A page of the rows of `table` the filter accepts (keyset: `id > afterID`), and when `counting` their count,
    /// in one read.
    private func filtered<Answer: Sendable>(
        _ table: String,
        provider: String,
        after afterID: String?,
        limit: Int,
        counting: Bool,
        filter: (FilterSQL.Purpose) -> FilterSQL,
        answer: @escaping @Sendable ([SQLRow], Int?) throws -> Answer
    ) -> DeliveryPlan<Answer> {
        let page = filter(.page)
        var reads = [
            SQLStatement(
                """
                SELECT t.id, t.body FROM \(table) t WHERE t.provider = ? AND \(page.condition) AND t.id > ?
                ORDER BY t.id LIMIT ?
                """,
                [.text(provider)] + page.values + [.text(afterID ?? ""), .integer(Int64(max(limit, 0)))]
            )
        ]
        if counting {
            let count = filter(.count)
            reads.append(
                SQLStatement(
                    """
                    SELECT \(count.counted) FROM \(count.countedTable ?? table) t WHERE t.provider = ? AND \(count.condition)
                    """,
                    [.text(provider)] + count.values
                )
            )
        }
        return .read(.list, reads) { rows in
            try answer(rows[0], counting ? rows[1].first.flatMap { $0[0].integer }.map { Int($0) } ?? 0 : nil)
        }
    }
}

extension SQLDeliveryStore {
    private var sql: DeliverySQL { Self.deliverySQL }

    public func deliveryVehicle(provider: String, id: String) async throws -> FleetEngineDelivery.DeliveryVehicle? {
        try await run(sql.deliveryVehicle(provider: provider, id: id))
    }

    public func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        async throws
    {
        try await run(sql.insertDeliveryVehicle(vehicle, provider: provider, id: id))
    }

    public func updateDeliveryVehicle(
        provider: String,
        id: String,
        naming taskIDs: Set<String>,
        _ transform:
            @escaping @Sendable (FleetEngineDelivery.DeliveryVehicle, [String: FleetEngineDelivery.Task])
            throws -> DeliveryVehicleChange
    ) async throws -> FleetEngineDelivery.DeliveryVehicle {
        try await run(sql.updateDeliveryVehicle(provider: provider, id: id, naming: taskIDs, transform))
    }

    public func deleteDeliveryVehicle(provider: String, id: String) async throws {
        try await run(sql.deleteDeliveryVehicle(provider: provider, id: id))
    }

    public func deliveryVehicles(provider: String, afterID: String?, limit: Int) async throws
        -> [StoredDeliveryVehicle]
    {
        try await run(sql.deliveryVehicles(provider: provider, afterID: afterID, limit: limit))
    }

    /// A page of the delivery vehicles `query` accepts and their count, from the attribute index and the location
    /// columns.
    public func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (vehicles: [StoredDeliveryVehicle], total: Int?) {
        try await run(
            sql.deliveryVehicles(provider: provider, matching: query, after: afterID, limit: limit, counting: counting)
        )
    }

    public func task(provider: String, id: String) async throws -> FleetEngineDelivery.Task? {
        try await run(sql.task(provider: provider, id: id))
    }

    public func insertTasks(_ tasks: [StoredTask], provider: String) async throws {
        try await run(sql.insertTasks(tasks, provider: provider))
    }

    public func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) async throws -> FleetEngineDelivery.Task {
        try await run(sql.updateTask(provider: provider, id: id, transform))
    }

    public func deleteTask(provider: String, id: String) async throws {
        try await run(sql.deleteTask(provider: provider, id: id))
    }

    public func tasks(provider: String, afterID: String?, limit: Int) async throws -> [StoredTask] {
        try await run(sql.tasks(provider: provider, afterID: afterID, limit: limit))
    }

    public func tasks(provider: String, trackingID: String) async throws -> [StoredTask] {
        try await run(sql.tasks(provider: provider, trackingID: trackingID))
    }

    /// A page of the tasks `query` accepts and their count, from the task columns, the attribute index and the
    /// counts by state.
    public func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        async throws -> (tasks: [StoredTask], total: Int?)
    {
        try await run(sql.tasks(provider: provider, matching: query, after: afterID, limit: limit, counting: counting))
    }
}
