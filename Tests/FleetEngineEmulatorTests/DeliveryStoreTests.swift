import FleetAuthServerTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRDB
import SwiftProtobuf
import Testing

/// What every ``DeliveryStore`` must do, on each store that keeps data, with two instances on the same data.
@Suite("DeliveryStore conformance", .temporaryResources)
struct DeliveryStoreTests {
    static func task(_ state: FleetEngineDelivery.Task.State = .open, tracking: String = "p")
        -> FleetEngineDelivery.Task
    {
        var task = FleetEngineDelivery.Task()
        task.type = .delivery
        task.state = state
        task.trackingID = tracking
        return task
    }

    @Test(
        "two instances on the same data: each sees the other's writes; concurrent route changes lose nothing",
        arguments: FleetStoreDriver.persistent
    )
    func twoInstances(_ driver: FleetStoreDriver) async throws {
        let (first, reopen) = try await driver.open()
        let a: any DeliveryStore = first
        let b: any DeliveryStore = try #require(try await reopen?())
        try await a.insertDeliveryVehicle(.init(), provider: "p", id: "van")
        try await b.insertTasks((0..<20).map { StoredTask(id: "t\($0)", task: Self.task()) }, provider: "p")
        #expect(try await b.deliveryVehicle(provider: "p", id: "van") != nil)
        #expect(try await a.task(provider: "p", id: "t19")?.state == .open)

        // Twenty route changes at once, half through each instance, each adding one stop and assigning its task.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                let store = index.isMultiple(of: 2) ? a : b
                group.addTask {
                    _ = try await store.updateDeliveryVehicle(provider: "p", id: "van", naming: ["t\(index)"]) {
                        vehicle,
                        tasks in
                        var next = vehicle
                        var stop = FleetEngineDelivery.VehicleStop()
                        stop.tasks = [.with { $0.taskID = "t\(index)" }]
                        next.remainingVehicleJourneySegments.append(.with { $0.stop = stop })
                        var task = try #require(tasks["t\(index)"])
                        task.deliveryVehicleID = "van"
                        return DeliveryVehicleChange(vehicle: next, tasks: ["t\(index)": task])
                    }
                }
            }
            try await group.waitForAll()
        }
        let vehicle = try #require(try await b.deliveryVehicle(provider: "p", id: "van"))
        let named = vehicle.remainingVehicleJourneySegments.flatMap { $0.stop.tasks.map(\.taskID) }
        #expect(Set(named) == Set((0..<20).map { "t\($0)" }), "no route change lost")
        let assigned = try await a.tasks(provider: "p", afterID: nil, limit: 100).filter {
            $0.task.deliveryVehicleID == "van"
        }
        #expect(assigned.count == 20)
        // Each transform was given the vehicle's open tasks: the last saw the 19 assigned before it.
        _ = try await a.updateDeliveryVehicle(provider: "p", id: "van", naming: []) { vehicle, tasks in
            #expect(tasks.count == 20)
            return DeliveryVehicleChange(vehicle: vehicle)
        }
    }

    @Test(
        "inserts are all or none; deletes refuse open assigned tasks; tracking IDs are indexed",
        arguments: FleetStoreDriver.all
    )
    func rules(_ driver: FleetStoreDriver) async throws {
        let store: any DeliveryStore = try await driver.open().store
        try await store.insertTasks([StoredTask(id: "taken", task: Self.task())], provider: "p")
        await #expect(throws: StoreError.self) {
            try await store.insertTasks(
                [StoredTask(id: "new", task: Self.task()), StoredTask(id: "taken", task: Self.task())],
                provider: "p"
            )
        }
        #expect(try await store.task(provider: "p", id: "new") == nil, "nothing of a refused batch is kept")
        var assigned = Self.task(tracking: "q")
        assigned.deliveryVehicleID = "van"
        try await store.insertDeliveryVehicle(.init(), provider: "p", id: "van")
        try await store.insertTasks([StoredTask(id: "on-van", task: assigned)], provider: "p")
        await #expect(throws: StoreError.self) { try await store.deleteTask(provider: "p", id: "on-van") }
        await #expect(throws: StoreError.self) { try await store.deleteDeliveryVehicle(provider: "p", id: "van") }
        #expect(try await store.tasks(provider: "p", trackingID: "q").map(\.id) == ["on-van"])
        _ = try await store.updateTask(provider: "p", id: "on-van") { task in
            var closed = task
            closed.state = .closed
            return closed
        }
        try await store.deleteTask(provider: "p", id: "on-van")
        try await store.deleteDeliveryVehicle(provider: "p", id: "van")
        #expect(try await store.deliveryVehicle(provider: "p", id: "van") == nil)
        #expect(try await store.tasks(provider: "p", trackingID: "q").isEmpty)
    }
}

@Suite("SQLite query plans")
struct SQLiteQueryPlanTests {
    @Test(
        "lookups by vehicle and by tracking ID search their indexes, never every row of the provider",
        arguments: [SQLiteFleetStore.activeTripsQuery] + StoreSQL.sqlite.indexedLookups
    )
    func indexes(_ sql: String) async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let placeholders = sql.filter { $0 == "?" }.count
        let plan = try await store.database.writer.read { db in
            try Row.fetchAll(
                db,
                sql: "EXPLAIN QUERY PLAN \(sql)",
                arguments: StatementArguments(Array(repeating: "x", count: placeholders))
            ).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") }, "\(plan)")
        #expect(!plan.contains { $0.contains("PRIMARY KEY (provider=?)") }, "\(plan)")
    }
}
