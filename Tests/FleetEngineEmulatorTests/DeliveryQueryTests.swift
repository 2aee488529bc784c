import FleetAuthDatabase
import FleetAuthServerTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRDB
import PostgresNIO
import SwiftProtobuf
import Testing

/// ListTasks' and ListDeliveryVehicles' filters answered by each store's indexes must equal a scan of every row.
@Suite("Deliveries queries", .temporaryResources)
struct DeliveryQueryTests {
    static let restrictions = [
        "state = OPEN", "state != CLOSED", "state = 0", "type = DELIVERY", "type != PICKUP", "task_outcome = SUCCEEDED",
        "task_outcome != FAILED", #"delivery_vehicle_id = "v1""#, #"delivery_vehicle_id = """#,
        #"delivery_vehicle_id != """#, #"delivery_vehicle_id != "v2""#, #"tracking_id = "p1""#, #"tracking_id != "p2""#,
        #"tracking_id = """#, #"attributes.zone = "north""#, #"attributes.zone != "north""#, #"attributes.size = """#,
        #"attributes.size != "2""#, #"attributes.flag = "true""#, "planned_location.point.latitude > 10",
        "planned_location.point.longitude <= -5.5", "planned_location.point.latitude != 0",
        "planned_location.point.latitude = 20", #"task_outcome_time >= "2026-03-01T00:00:00Z""#,
        #"task_outcome_time < "2026-06-01T00:00:00Z""#, #"task_outcome_time != "2026-04-01T00:00:00Z""#,
    ]

    /// A random filter of one to three restrictions joined by AND / OR, some negated or parenthesized.
    static func randomFilter(_ random: inout SplitMix64, restrictions: [String]) -> String {
        var parts: [String] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            var part = restrictions.randomElement(using: &random)!
            if Int.random(in: 0..<5, using: &random) == 0 { part = "NOT " + part }
            if Int.random(in: 0..<4, using: &random) == 0, let other = restrictions.randomElement(using: &random) {
                part = "(\(part) OR \(other))"
            }
            parts.append(part)
        }
        return parts.joined(separator: Bool.random(using: &random) ? " AND " : " OR ")
    }

    static func randomTask(_ random: inout SplitMix64) -> FleetEngineDelivery.Task {
        var task = FleetEngineDelivery.Task()
        task.state = [.unspecified, .open, .open, .closed].randomElement(using: &random)!
        task.type = FleetEngineDelivery.Task.TypeEnum(rawValue: Int.random(in: 0...4, using: &random))!
        task.taskOutcome = [.unspecified, .succeeded, .failed].randomElement(using: &random)!
        task.deliveryVehicleID = ["", "v1", "v2"].randomElement(using: &random)!
        task.trackingID = ["", "p1", "p2", "p3"].randomElement(using: &random)!
        if Bool.random(using: &random) {
            let day = Int.random(in: 0..<180, using: &random)
            task.taskOutcomeTime = Google_Protobuf_Timestamp(
                date: Date(timeIntervalSince1970: 1_767_225_600 + Double(day) * 86_400)
            )
        }
        if Int.random(in: 0..<4, using: &random) != 0 {
            task.plannedLocation.point = .with {
                $0.latitude = [0, 20, Double.random(in: -80...80, using: &random)].randomElement(using: &random)!
                $0.longitude = Double.random(in: -20...20, using: &random)
            }
        }
        for key in ["zone", "size", "flag"] where Bool.random(using: &random) {
            task.attributes.append(
                .with {
                    $0.key = key
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: $0.stringValue = ["north", "south"].randomElement(using: &random)!
                    case 1: $0.numberValue = Double(Int.random(in: 1...3, using: &random))
                    case 2: $0.boolValue = Bool.random(using: &random)
                    default: break  // no value: compared as ""
                    }
                }
            )
        }
        return task
    }

    static func randomVehicle(_ random: inout SplitMix64) -> FleetEngineDelivery.DeliveryVehicle {
        var vehicle = FleetEngineDelivery.DeliveryVehicle()
        if Int.random(in: 0..<4, using: &random) != 0 {
            vehicle.lastLocation.location = .with {
                $0.latitude = Double.random(in: -60...60, using: &random)
                $0.longitude = Double.random(in: -180...180, using: &random)
            }
        }
        for key in ["zone", "size"] where Bool.random(using: &random) {
            vehicle.attributes.append(
                .with {
                    $0.key = key
                    if Bool.random(using: &random) {
                        $0.stringValue = ["north", "south"].randomElement(using: &random)!
                    } else {
                        $0.value = ["north", "2"].randomElement(using: &random)!
                    }
                }
            )
        }
        return vehicle
    }

    /// One page of provider `p`'s tasks and their count, as the store answers with its indexes and as a scan does.
    static func answers(_ store: any DeliveryStore, _ query: TaskQuery, after: String?, limit: Int) async throws
        -> (indexed: (tasks: [StoredTask], total: Int?), scanned: (tasks: [StoredTask], total: Int?))
    {
        let indexed = try await store.tasks(provider: "p", matching: query, after: after, limit: limit, counting: true)
        let scanned = try await store.scanTasks(
            provider: "p",
            matching: query,
            after: after,
            limit: limit,
            counting: true
        )
        return (indexed, scanned)
    }

    /// The scan's answer (``DeliveryStore/scanTasks(provider:matching:after:limit:counting:)``), computed from one
    /// read of every task of provider `p`: the scan reads them all again for each page.
    static func scanned(_ all: [StoredTask], _ query: TaskQuery, after: String?, limit: Int)
        -> (tasks: [StoredTask], total: Int?)
    {
        let matches = all.filter { query.accepts($0.task) }
        let page = matches.filter { task in after.map { task.id > $0 } ?? true }
        return (Array(page.prefix(limit)), matches.count)
    }

    /// Every page of the indexed answer, and its count, against the scan's (the scan itself for the first filters,
    /// as a store without indexes answers; then its answer computed from one read of every task).
    static func compareTasks(_ store: any DeliveryStore, _ random: inout SplitMix64, filters: Int) async throws {
        let all = try await store.tasks(provider: "p", afterID: nil, limit: 1_000)
        for round in 0..<filters {
            let text = randomFilter(&random, restrictions: restrictions)
            let query = try TaskQuery(filter: text)
            let size = [3, 50].randomElement(using: &random)!
            var after: String?
            var pages = 0
            repeat {
                let indexed = try await store.tasks(
                    provider: "p",
                    matching: query,
                    after: after,
                    limit: size,
                    counting: true
                )
                let scanned = Self.scanned(all, query, after: after, limit: size)
                if round < 8 {
                    let direct = try await store.scanTasks(
                        provider: "p",
                        matching: query,
                        after: after,
                        limit: size,
                        counting: true
                    )
                    #expect(direct.tasks == scanned.tasks && direct.total == scanned.total, "filter: \(text)")
                }
                #expect(indexed.tasks == scanned.tasks, "filter: \(text), after \(after ?? "-")")
                #expect(indexed.total == scanned.total, "filter: \(text)")
                if indexed.tasks != scanned.tasks || indexed.total != scanned.total { return }
                after = indexed.tasks.count == size ? indexed.tasks.last?.id : nil
                pages += 1
            } while after != nil && pages < 4
        }
    }

    @Test(
        "random ListTasks filters on random tasks: the indexed answer equals the scan's",
        arguments: FleetStoreDriver.all
    )
    func randomTasks(_ driver: FleetStoreDriver) async throws {
        let store: any DeliveryStore = try await driver.open().store
        var random = SplitMix64(state: 0x7A5C5)
        let tasks = (0..<240).map { StoredTask(id: String(format: "t%03d", $0), task: Self.randomTask(&random)) }
        try await store.insertTasks(Array(tasks[..<200]), provider: "p")
        try await store.insertTasks(Array(tasks[200...]), provider: "q")
        let all = try await store.scanTasks(
            provider: "p",
            matching: try TaskQuery(filter: ""),
            after: nil,
            limit: 1_000,
            counting: true
        )
        #expect(all.total == 200, "the other provider's tasks are not counted")
        // Each restriction alone matches some tasks and misses others, so every one is exercised both ways.
        for restriction in Self.restrictions {
            let matched = try await store.scanTasks(
                provider: "p",
                matching: try TaskQuery(filter: restriction),
                after: nil,
                limit: 0,
                counting: true
            ).total
            #expect((1..<200).contains(matched ?? 0), "\(restriction) matches \(matched ?? 0)")
        }
        try await Self.compareTasks(store, &random, filters: 80)

        // Rewrites (new state, attributes, location) and deletions: the columns and attribute rows follow.
        for _ in 0..<80 {
            let id = String(format: "t%03d", Int.random(in: 0..<200, using: &random))
            let replacement = Self.randomTask(&random)
            _ = try await store.updateTask(provider: "p", id: id) { _ in replacement }
        }
        for index in stride(from: 0, to: 200, by: 9) {
            try? await store.deleteTask(provider: "p", id: String(format: "t%03d", index))
        }
        try await Self.compareTasks(store, &random, filters: 80)
    }

    /// Filters whose count is read from the attribute index alone (an attribute's `=` joined by AND to conditions on
    /// the columns each attribute row carries, and other attributes), and filters that must not be.
    static let attributeCounted = [
        #"state = OPEN AND attributes.zone = "north""#, #"attributes.zone = "south" AND state != CLOSED"#,
        #"attributes.size = "" AND type = DELIVERY AND task_outcome != FAILED"#,
        #"attributes.flag = "true" AND (state = OPEN OR type = PICKUP)"#,
        #"attributes.zone = "north" AND NOT state = CLOSED AND attributes.size != "2""#,
        #"attributes.zone = "north" AND attributes.flag = "false" AND state = 0"#,
        #"(attributes.zone = "north" AND state = OPEN) AND type != PICKUP"#,
        // From the counts by state.
        "", "state = OPEN", "state = CLOSED", "state = 0",
        // Not from the index alone: a column the attribute rows do not carry, or no `=` the whole filter requires.
        #"attributes.zone = "north" AND delivery_vehicle_id = "v1""#,
        #"attributes.zone = "north" AND planned_location.point.latitude > 10"#,
        #"attributes.zone = "north" OR state = OPEN"#, #"NOT attributes.zone = "north" AND state = OPEN"#,
    ]

    @Test(
        "counts read from the attribute index or the counts by state equal the scan's, as tasks change state and go",
        arguments: FleetStoreDriver.all
    )
    func attributeIndexCounts(_ driver: FleetStoreDriver) async throws {
        let store: any DeliveryStore = try await driver.open().store
        var random = SplitMix64(state: 0xC0A7)
        let tasks = (0..<300).map { StoredTask(id: String(format: "t%03d", $0), task: Self.randomTask(&random)) }
        try await store.insertTasks(Array(tasks[..<250]), provider: "p")
        try await store.insertTasks(Array(tasks[250...]), provider: "q")
        func compare(_ stage: String) async throws {
            for text in Self.attributeCounted {
                let query = try TaskQuery(filter: text)
                let (indexed, scanned) = try await Self.answers(store, query, after: nil, limit: 5)
                #expect(indexed.total == scanned.total, "\(stage): \(text)")
                if stage == "as inserted" {
                    // Each filter matches some tasks, so the counts are tested against something.
                    #expect((1...250).contains(scanned.total ?? 0), "\(text) matches \(scanned.total ?? 0)")
                }
                #expect(indexed.tasks == scanned.tasks, "\(stage): \(text)")
            }
        }
        try await compare("as inserted")
        // New states, types and outcomes with the same attributes, as UpdateTask closing a task does.
        for index in stride(from: 0, to: 250, by: 3) {
            _ = try await store.updateTask(provider: "p", id: String(format: "t%03d", index)) { task in
                var changed = task
                changed.state = task.state == .closed ? .open : .closed
                changed.type = FleetEngineDelivery.Task.TypeEnum(rawValue: (task.type.rawValue + 1) % 5)!
                changed.taskOutcome = task.taskOutcome == .failed ? .succeeded : .failed
                return changed
            }
        }
        try await compare("after updates")
        for index in stride(from: 1, to: 250, by: 7) {
            try? await store.deleteTask(provider: "p", id: String(format: "t%03d", index))
        }
        try await compare("after deletions")
    }

    @Test(
        "random ListDeliveryVehicles filters and viewports: the indexed answer equals the scan's",
        arguments: FleetStoreDriver.all
    )
    func randomVehicles(_ driver: FleetStoreDriver) async throws {
        let store: any DeliveryStore = try await driver.open().store
        var random = SplitMix64(state: 0xDE11)
        for index in 0..<150 {
            try await store.insertDeliveryVehicle(
                Self.randomVehicle(&random),
                provider: index % 10 == 9 ? "q" : "p",
                id: String(format: "v%03d", index)
            )
        }
        let restrictions = [
            #"attributes.zone = "north""#, #"attributes.zone != "south""#, #"attributes.size = "2""#,
            #"attributes.size != "north""#,
        ]
        func compare(_ random: inout SplitMix64) async throws {
            // The scan's answer from one read of every vehicle (the scan reads them all for each query), and the
            // scan itself for the first queries.
            let all = try await store.deliveryVehicles(provider: "p", afterID: nil, limit: 1_000)
            for round in 0..<60 {
                let text = round % 3 == 0 ? "" : Self.randomFilter(&random, restrictions: restrictions)
                var viewport: FleetEngineV1.Viewport?
                if round % 2 == 0 {
                    let low = Double.random(in: -180...180, using: &random)
                    viewport = .with {
                        $0.low = .with {
                            $0.latitude = Double.random(in: -60...0, using: &random); $0.longitude = low
                        }
                        $0.high = .with {
                            $0.latitude = Double.random(in: 0...60, using: &random)
                            $0.longitude = Double.random(in: -180...180, using: &random)  // west of low: across 180°
                        }
                    }
                }
                let query = try DeliveryVehicleQuery(filter: text, viewport: viewport)
                let indexed = try await store.deliveryVehicles(
                    provider: "p",
                    matching: query,
                    after: "v020",
                    limit: 25,
                    counting: true
                )
                let matches = all.filter { query.accepts($0.vehicle) }
                let scanned = (vehicles: Array(matches.filter { $0.id > "v020" }.prefix(25)), total: matches.count)
                if round < 8 {
                    let direct = try await store.scanDeliveryVehicles(
                        provider: "p",
                        matching: query,
                        after: "v020",
                        limit: 25,
                        counting: true
                    )
                    #expect(direct.vehicles == scanned.vehicles && direct.total == scanned.total, "filter: \(text)")
                }
                #expect(
                    indexed.vehicles == scanned.vehicles,
                    "filter: \(text), viewport: \(String(describing: viewport))"
                )
                #expect(indexed.total == scanned.total, "filter: \(text), viewport: \(String(describing: viewport))")
            }
        }
        try await compare(&random)
        for _ in 0..<60 {
            let index = Int.random(in: 0..<150, using: &random)
            guard index % 10 != 9 else { continue }
            let replacement = Self.randomVehicle(&random)
            _ = try await store.updateDeliveryVehicle(provider: "p", id: String(format: "v%03d", index), naming: []) {
                _,
                _ in DeliveryVehicleChange(vehicle: replacement)
            }
        }
        for index in stride(from: 0, to: 150, by: 7) where index % 10 != 9 {
            try await store.deleteDeliveryVehicle(provider: "p", id: String(format: "v%03d", index))
        }
        try await compare(&random)
    }
}

@Suite("Store migrations: Deliveries columns", .temporaryResources)
struct DeliveryColumnsMigrationTests {
    /// A task and a delivery vehicle with a zone, a location, a state and a type.
    static func storeOne(in store: any DeliveryStore) async throws {
        var task = FleetEngineDelivery.Task()
        task.state = .open
        task.type = .pickup
        task.trackingID = "parcel"
        task.plannedLocation.point = .with {
            $0.latitude = 51.5; $0.longitude = -0.1
        }
        task.attributes = [
            .with {
                $0.key = "zone"; $0.stringValue = "north"
            }
        ]
        try await store.insertTasks([StoredTask(id: "t1", task: task)], provider: "p")
        var vehicle = FleetEngineDelivery.DeliveryVehicle()
        vehicle.lastLocation.location = .with {
            $0.latitude = 51.5; $0.longitude = -0.1
        }
        vehicle.attributes = [
            .with {
                $0.key = "zone"; $0.stringValue = "north"
            }
        ]
        try await store.insertDeliveryVehicle(vehicle, provider: "p", id: "van")
    }

    /// The two are found by filters on every column and attribute that migrations 6 to 8 fill.
    static func expectFound(in store: any DeliveryStore) async throws {
        let tasks = try await store.tasks(
            provider: "p",
            matching: try TaskQuery(
                filter:
                    #"state = OPEN AND type = PICKUP AND attributes.zone = "north" AND planned_location.point.latitude > 51"#
            ),
            after: nil,
            limit: 10,
            counting: true
        )
        #expect(tasks.tasks.map(\.id) == ["t1"] && tasks.total == 1)
        // Counts read from the attribute index alone (the task's state and type came along with migration 7) and
        // from the counts by state (migration 8).
        for (filter, total) in [
            (#"state = OPEN AND attributes.zone = "north""#, 1), (#"attributes.zone = "north" AND type = PICKUP"#, 1),
            (#"attributes.zone = "north" AND state = CLOSED"#, 0), ("", 1), ("state = OPEN", 1), ("state = CLOSED", 0),
        ] {
            let counted = try await store.tasks(
                provider: "p",
                matching: try TaskQuery(filter: filter),
                after: nil,
                limit: 0,
                counting: true
            )
            #expect(counted.total == total, "\(filter)")
        }
        let viewport = FleetEngineV1.Viewport.with {
            $0.low = .with {
                $0.latitude = 51; $0.longitude = -1
            }
            $0.high = .with {
                $0.latitude = 52; $0.longitude = 1
            }
        }
        let vehicles = try await store.deliveryVehicles(
            provider: "p",
            matching: try DeliveryVehicleQuery(filter: #"attributes.zone = "north""#, viewport: viewport),
            after: nil,
            limit: 10,
            counting: true
        )
        #expect(vehicles.vehicles.map(\.id) == ["van"] && vehicles.total == 1)
    }

    @Test("SQLite: tasks and delivery vehicles stored before migration v6 are found by their filters after v6 to v8")
    func backfill() async throws {
        let path = try FleetStoreDriver.temporaryPath()
        try await Self.storeOne(in: SQLiteFleetStore(path: path))
        // The database as migration v5 left it: no filter columns, no attribute tables.
        do {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        DROP TRIGGER task_counts_insert;
                        DROP TRIGGER task_counts_delete;
                        DROP TRIGGER task_counts_update;
                        DROP TABLE task_counts;
                        DROP INDEX tasks_by_state;
                        DROP TABLE task_attributes;
                        DROP TABLE delivery_vehicle_attributes;
                        ALTER TABLE tasks DROP COLUMN state;
                        ALTER TABLE tasks DROP COLUMN type;
                        ALTER TABLE tasks DROP COLUMN outcome;
                        ALTER TABLE tasks DROP COLUMN outcome_time;
                        ALTER TABLE tasks DROP COLUMN lat;
                        ALTER TABLE tasks DROP COLUMN lng;
                        ALTER TABLE delivery_vehicles DROP COLUMN lat;
                        ALTER TABLE delivery_vehicles DROP COLUMN lng;
                        DELETE FROM grdb_migrations WHERE identifier >= 'v6:' AND identifier < 'v9:';
                        """
                )
            }
        }
        try await Self.expectFound(in: SQLiteFleetStore(path: path))
    }

    @Test(
        "PostgreSQL: tasks and delivery vehicles stored before step 6 are found by their filters after steps 6 to 8",
        .enabled(if: PostgresTestServer.url != nil)
    )
    func postgresBackfill() async throws {
        let resources = try TestResources.required()
        let url = try await resources.freshDatabase()
        try await Self.storeOne(in: PostgresFleetStore.connect(url, maximumConnections: 2, in: resources.pools))
        // The database as step 5 left it: no filter columns, no attribute tables.
        try await PostgreSQLDatabase.withDatabase(url, migrations: nil, maximumConnections: 1) { database in
            for statement in [
                "DROP FUNCTION emulator_count_tasks CASCADE", "DROP TABLE emulator_task_counts",
                "DROP TABLE emulator_task_attributes", "DROP TABLE emulator_delivery_vehicle_attributes",
                """
                ALTER TABLE emulator_tasks DROP COLUMN state, DROP COLUMN type, DROP COLUMN outcome,
                DROP COLUMN outcome_time, DROP COLUMN lat, DROP COLUMN lng
                """,
                "ALTER TABLE emulator_delivery_vehicles DROP COLUMN lat, DROP COLUMN lng",
                // Step 9's table, so every later step runs again.
                "DROP TABLE emulator_request_log",
                "DELETE FROM fleetauth_migrations WHERE scope = 'emulator' AND version >= 6",
            ] {
                _ = try await database.query(PostgresQuery(unsafeSQL: statement))
            }
        }
        try await Self.expectFound(in: PostgresFleetStore.connect(url, maximumConnections: 2, in: resources.pools))
    }
}

extension DeliveryStore {
    /// The reference answer: reads every task of the provider and keeps those `query` accepts (the meaning of the
    /// query), to compare with the store's answer from its indexes.
    func scanTasks(
        provider: String,
        matching query: TaskQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (tasks: [StoredTask], total: Int?) {
        try await Self.scan(after: afterID, limit: limit, counting: counting, id: \.id) {
            try await tasks(provider: provider, afterID: $0, limit: $1)
        } keep: {
            query.accepts($0.task)
        }
    }

    /// The reference answer for delivery vehicles, as ``scanTasks(provider:matching:after:limit:counting:)``.
    func scanDeliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (vehicles: [StoredDeliveryVehicle], total: Int?) {
        try await Self.scan(after: afterID, limit: limit, counting: counting, id: \.id) {
            try await deliveryVehicles(provider: provider, afterID: $0, limit: $1)
        } keep: {
            query.accepts($0.vehicle)
        }
    }

    /// Reads every item in ID order, in chunks, keeping those `keep` accepts: those after `afterID` (at most
    /// `limit`) and, when `counting`, how many match in all.
    private static func scan<Item>(
        after afterID: String?,
        limit: Int,
        counting: Bool,
        id: (Item) -> String,
        read: (String?, Int) async throws -> [Item],
        keep: (Item) -> Bool
    ) async throws -> ([Item], Int?) {
        var items: [Item] = []
        var total = 0
        var cursor = counting ? nil : afterID
        while true {
            let chunk = try await read(cursor, 1000)
            for item in chunk where keep(item) {
                total += 1
                guard afterID.map({ id(item) > $0 }) ?? true else { continue }
                if items.count < limit {
                    items.append(item)
                } else if !counting {
                    return (items, nil)
                }
            }
            guard chunk.count == 1000, let last = chunk.last else { break }
            cursor = id(last)
        }
        return (items, counting ? total : nil)
    }
}
